// The history file: encoding, decoding, appending and reading (see checker/history.h).
#include "checker/history.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <utility>

namespace locklab {
namespace {

std::string json_string(std::string_view text) {
  // replace: a history line must never fail to encode because a name was not UTF-8.
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string errno_text() {
  return std::strerror(errno);
}

// An integer field as int64: nlohmann::json keeps integers above INT64_MAX as unsigned, and
// get<int64_t>() would wrap them to negatives (a token 2^64-1 read as -1).
bool is_int64(const nlohmann::json& value) {
  if (!value.is_number_integer()) return false;
  return !value.is_number_unsigned() ||
         value.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
}

// Decodes an already-parsed object; returns the reason on failure.
std::optional<Event> event_from_object(const nlohmann::json& object, std::string* error) {
  auto fail = [error](std::string why) -> std::optional<Event> {
    *error = std::move(why);
    return std::nullopt;
  };
  if (!object.is_object()) return fail("not a JSON object");
  Event event;
  auto t = object.find("t");
  if (t == object.end() || !is_int64(*t))
    return fail("\"t\" missing or not an integer within int64");
  event.t_ns = t->get<int64_t>();
  auto process = object.find("process");
  if (process == object.end() || !process->is_string() || process->get<std::string>().empty())
    return fail("\"process\" missing or not a non-empty string");
  event.process = process->get<std::string>();
  auto type = object.find("type");
  if (type == object.end() || !type->is_string()) return fail("\"type\" missing or not a string");
  auto parsed_type = parse_event_type(type->get<std::string>());
  if (!parsed_type)
    return fail("\"type\" is \"" + quoted_excerpt(type->get<std::string>()) +
                "\", expected invoke, ok, fail or info");
  event.type = *parsed_type;
  auto f = object.find("f");
  if (f == object.end() || !f->is_string() || f->get<std::string>().empty())
    return fail("\"f\" missing or not a non-empty string");
  event.f = f->get<std::string>();
  if (auto lock = object.find("lock"); lock != object.end()) {
    if (!lock->is_string()) return fail("\"lock\" is not a string");
    event.lock = lock->get<std::string>();
  }
  if (auto token = object.find("token"); token != object.end() && !token->is_null()) {
    if (!is_int64(*token)) return fail("\"token\" is not an integer within int64");
    event.token = token->get<int64_t>();
  }
  if (auto value = object.find("value"); value != object.end()) event.value = *value;
  return event;
}

// A line that is a torn prefix of one writer's event followed by another writer's whole
// event: every event line starts with {"t":, so the whole event is the first suffix starting
// there that parses.
std::optional<Event> after_torn_fragment(std::string_view line) {
  constexpr std::string_view kStart = "{\"t\":";
  for (size_t at = line.find(kStart, 1); at != std::string_view::npos;
       at = line.find(kStart, at + 1)) {
    std::string ignored;
    std::optional<Event> event = parse_json_line(line.substr(at), &ignored);
    if (event) return event;
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(EventType type) {
  switch (type) {
    case EventType::kInvoke:
      return "invoke";
    case EventType::kOk:
      return "ok";
    case EventType::kFail:
      return "fail";
    case EventType::kInfo:
      return "info";
  }
  assert(false && "unknown EventType");
  return "info";
}

std::optional<EventType> parse_event_type(std::string_view text) {
  if (text == "invoke") return EventType::kInvoke;
  if (text == "ok") return EventType::kOk;
  if (text == "fail") return EventType::kFail;
  if (text == "info") return EventType::kInfo;
  return std::nullopt;
}

int64_t monotonic_now_ns() {
  timespec now{};
  int rc = clock_gettime(CLOCK_MONOTONIC, &now);
  assert(rc == 0);
  (void)rc;
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

std::string to_json_line(const Event& event) {
  // Fixed key order, so histories read well and diff well.
  std::string line = "{\"t\":" + std::to_string(event.t_ns);
  line += ",\"process\":" + json_string(event.process);
  line += ",\"type\":" + json_string(to_string(event.type));
  line += ",\"f\":" + json_string(event.f);
  if (!event.lock.empty()) line += ",\"lock\":" + json_string(event.lock);
  if (event.token) line += ",\"token\":" + std::to_string(*event.token);
  if (!event.value.is_null()) {
    line +=
        ",\"value\":" + event.value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  line += "}";
  return line;
}

std::string quoted_excerpt(std::string_view text) {
  if (text.size() <= kQuotedBytesMax) return std::string(text);
  return std::string(text.substr(0, kQuotedBytesMax)) + "...";
}

std::optional<Event> parse_json_line(std::string_view line, std::string* error) {
  assert(error != nullptr);
  nlohmann::json object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) {
    *error = "not valid JSON";
    return std::nullopt;
  }
  return event_from_object(object, error);
}

HistoryWriter::HistoryWriter(const std::string& path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::runtime_error("cannot open history " + path + ": " + errno_text());
}

HistoryWriter::~HistoryWriter() {
  if (fd_ >= 0) ::close(fd_);
}

HistoryWriter::HistoryWriter(HistoryWriter&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

HistoryWriter& HistoryWriter::operator=(HistoryWriter&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void HistoryWriter::append(Event event) {
  if (fd_ < 0) throw std::runtime_error("history writer is closed (moved from)");
  if (event.t_ns == 0) event.t_ns = monotonic_now_ns();
  std::string line = to_json_line(event);
  line += '\n';
  if (line.size() > kHistoryLineBytesMax)
    throw std::runtime_error("history event of " + std::to_string(line.size()) +
                             " bytes exceeds the limit of " + std::to_string(kHistoryLineBytesMax));
  // One write(2) per line on an O_APPEND descriptor: whole lines, never interleaved.
  // Retry only when nothing was written (EINTR); a short write cannot be completed
  // without tearing the line, so it is an error.
  for (int attempt = 0; attempt < 100; ++attempt) {
    ssize_t written = ::write(fd_, line.data(), line.size());
    if (written == static_cast<ssize_t>(line.size())) return;
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) throw std::runtime_error("cannot append to history: " + errno_text());
    throw std::runtime_error("short write to history (" + std::to_string(written) + " of " +
                             std::to_string(line.size()) + " bytes)");
  }
  throw std::runtime_error("cannot append to history: interrupted 100 times");
}

std::vector<Event> read_history(const std::string& path) {
  return read_history(path, nullptr);
}

std::vector<Event> read_history(const std::string& path, HistoryReadStats* stats) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open history " + path + ": " + errno_text());
  HistoryReadStats local;
  HistoryReadStats& found = stats != nullptr ? *stats : local;
  std::vector<Event> events;
  std::string line;
  for (size_t line_number = 1; std::getline(in, line); ++line_number) {
    if (line.empty()) continue;
    std::string where = path + ":" + std::to_string(line_number);
    if (line.size() > kHistoryLineBytesMax) throw std::runtime_error(where + ": line too long");
    std::string error;
    std::optional<Event> event = parse_json_line(line, &error);
    if (!event) {
      event = after_torn_fragment(line);
      if (event) ++found.torn_fragments;
    }
    if (event) {
      events.push_back(std::move(*event));
      continue;
    }
    // getline hit the end without a newline: the last writer was cut off mid-line.
    if (in.eof()) {
      ++found.torn_fragments;
      break;
    }
    throw std::runtime_error(where + ": malformed history line: " + error);
  }
  if (in.bad()) throw std::runtime_error("cannot read history " + path + ": " + errno_text());
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.t_ns < b.t_ns; });
  return events;
}

}  // namespace locklab
