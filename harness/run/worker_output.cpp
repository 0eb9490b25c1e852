// Following, validating and merging the workers' own files (run/worker_output.h).
#include "run/worker_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace locklab {
namespace {

std::string shown(std::string_view text) {
  if (text.size() <= WorkerOutputs::kTextShownBytes) return std::string(text);
  return std::string(text.substr(0, WorkerOutputs::kTextShownBytes)) + "...";
}

}  // namespace

const std::vector<std::string>& worker_functions() {
  static const std::vector<std::string> names = {"acquire",      "extend", "release", "lost",
                                                 "lost-ignored", "write",  "read"};
  return names;
}

std::optional<Event> validate_worker_line(std::string_view line, const std::string& worker,
                                          const GrantTokens& grants, int64_t not_before_ns,
                                          int64_t not_after_ns, std::string* error) {
  assert(error != nullptr);
  std::optional<Event> event = parse_json_line(line, error);
  if (!event) return std::nullopt;
  auto fail = [&](std::string why) -> std::optional<Event> {
    *error = std::move(why);
    return std::nullopt;
  };
  if (event->process != worker) {
    return fail("\"process\" is \"" + quoted_excerpt(event->process) +
                "\", not the worker's id \"" + worker + "\"");
  }
  const auto& known = worker_functions();
  if (std::find(known.begin(), known.end(), event->f) == known.end()) {
    std::string list;
    for (const std::string& f : known) list += (list.empty() ? "" : ", ") + f;
    return fail("unknown f \"" + quoted_excerpt(event->f) + "\" (a worker writes " + list + ")");
  }
  if (event->t_ns < not_before_ns || event->t_ns > not_after_ns) {
    return fail("\"t\" " + std::to_string(event->t_ns) + " is outside [" +
                std::to_string(not_before_ns) + ", " + std::to_string(not_after_ns) +
                "], the worker's lifetime on CLOCK_MONOTONIC (nanoseconds): another clock?");
  }
  if (std::string why = worker_event_error(*event, grants); !why.empty()) return fail(why);
  // What the history will hold, not what the worker wrote: the encoding can be longer.
  const size_t encoded_bytes = to_json_line(*event).size() + 1;
  if (encoded_bytes > kHistoryLineBytesMax) {
    return fail("the event is " + std::to_string(encoded_bytes) +
                " bytes as the history encodes it (newline included), above the limit of " +
                std::to_string(kHistoryLineBytesMax) + " bytes per history line");
  }
  return event;
}

WorkerOutputs::WorkerOutputs(HistoryWriter& history, std::string dir, GrantTokens grants)
    : history_(history), dir_(std::move(dir)), grants_(std::move(grants)) {}

WorkerOutputs::~WorkerOutputs() {
  for (auto& [worker, file] : files_) {
    if (file.fd >= 0) ::close(file.fd);
  }
}

std::string WorkerOutputs::open(const std::string& worker, int64_t incarnation) {
  auto previous = files_.find(worker);
  assert(previous == files_.end() || previous->second.fd < 0);
  (void)previous;
  File file;
  file.worker = worker;
  file.path = dir_ + "/" + worker + "." + std::to_string(incarnation) + ".jsonl";
  file.fd = ::open(file.path.c_str(), O_RDONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (file.fd < 0) {
    throw std::runtime_error("cannot create the worker file " + file.path + ": " +
                             std::strerror(errno));
  }
  file.opened_ns = monotonic_now_ns();
  const std::string path = file.path;
  files_[worker] = std::move(file);
  return path;
}

void WorkerOutputs::drain() {
  for (auto& [worker, file] : files_) {
    if (file.fd >= 0) read(file);
  }
}

void WorkerOutputs::read(File& file) {
  // Called for every worker on every tick: look at the size before allocating anything.
  struct stat st {};
  if (::fstat(file.fd, &st) != 0 || st.st_size <= file.offset) return;
  const auto wanted = std::min<int64_t>(st.st_size - file.offset, kReadChunkBytes);
  std::string chunk(static_cast<size_t>(wanted), '\0');
  const ssize_t n = ::pread(file.fd, chunk.data(), chunk.size(), file.offset);
  if (n <= 0) return;
  file.offset += n;
  chunk.resize(static_cast<size_t>(n));
  size_t start = 0;
  for (size_t nl = chunk.find('\n'); nl != std::string::npos; nl = chunk.find('\n', start)) {
    ++file.line;
    if (file.skipping) {
      file.skipping = false;
    } else {
      file.partial.append(chunk, start, nl - start);
      take_line(file, file.partial);
    }
    file.partial.clear();
    start = nl + 1;
  }
  if (!file.skipping) file.partial.append(chunk, start, std::string::npos);
  if (file.partial.size() > kLineBytesMax) {
    ++file.line;
    bad_line(file, file.partial,
             "a line longer than the limit of " + std::to_string(kLineBytesMax) + " bytes");
    --file.line;  // the rest of this line is counted when its newline comes
    file.partial.clear();
    file.skipping = true;
  }
}

void WorkerOutputs::take_line(File& file, std::string_view line) {
  std::string error;
  std::optional<Event> event =
      validate_worker_line(line, file.worker, grants_, file.opened_ns, monotonic_now_ns(), &error);
  if (!event) {
    bad_line(file, line, error);
    return;
  }
  ++file.events;
  history_.append(std::move(*event));
}

void WorkerOutputs::bad_line(File& file, std::string_view line, const std::string& error_text) {
  // Messages quote bounded excerpts already; this bound keeps the event below the line limit
  // whatever a future message says.
  const std::string error = error_text.size() <= kErrorShownBytes
                                ? error_text
                                : error_text.substr(0, kErrorShownBytes) + "...";
  const std::string where = file.path + " line " + std::to_string(file.line);
  note(file.worker, where + ": " + error + ": " + shown(line));
  history_.append({0,
                   "harness",
                   EventType::kInfo,
                   "worker-output",
                   "",
                   std::nullopt,
                   {{"worker", file.worker},
                    {"file", file.path},
                    {"line", file.line},
                    {"error", error},
                    {"text", shown(line)}}});
}

void WorkerOutputs::close(const std::string& worker, bool killed) {
  auto it = files_.find(worker);
  if (it == files_.end() || it->second.fd < 0) return;
  File& file = it->second;
  for (int64_t before = -1; before != file.offset;) {  // read to the end, chunk by chunk
    before = file.offset;
    read(file);
  }
  if (!file.partial.empty() && !file.skipping) {
    ++file.line;
    if (killed) {
      ++torn_fragments_;  // a write cut by SIGKILL: never finished, so never an event
      history_.append({0,
                       "harness",
                       EventType::kInfo,
                       "worker-output",
                       "",
                       std::nullopt,
                       {{"worker", worker},
                        {"file", file.path},
                        {"line", file.line},
                        {"torn", true},
                        {"bytes", file.partial.size()}}});
    } else {
      bad_line(file, file.partial, "truncated line (no newline at its end; the worker exited)");
    }
  }
  file.partial.clear();
  ::close(file.fd);
  file.fd = -1;
}

void WorkerOutputs::problem(const std::string& worker, const std::string& message) {
  note(worker, message);
  history_.append({0,
                   "harness",
                   EventType::kInfo,
                   "worker-output",
                   "",
                   std::nullopt,
                   {{"worker", worker}, {"error", message}}});
}

void WorkerOutputs::note(const std::string& worker, const std::string& message) {
  ++problem_count_;
  if (problems_.size() < kProblemsKept) problems_.push_back("worker " + worker + ": " + message);
}

int64_t WorkerOutputs::events(const std::string& worker) const {
  auto it = files_.find(worker);
  return it == files_.end() ? 0 : it->second.events;
}

int64_t WorkerOutputs::lines(const std::string& worker) const {
  auto it = files_.find(worker);
  return it == files_.end() ? 0 : it->second.line;
}

std::string WorkerOutputs::file(const std::string& worker) const {
  auto it = files_.find(worker);
  return it == files_.end() ? "" : it->second.path;
}

}  // namespace locklab
