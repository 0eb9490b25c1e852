#include "base/log.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>

#include "bson/codec.h"

namespace mongosim::server {

namespace {

std::atomic<int> g_log_fd{STDOUT_FILENO};
std::mutex g_write_mutex;

std::string iso_time_utc() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03d+00:00", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return buf;
}

// A JSON string literal for an arbitrary byte string.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

const char* severity_letter(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return "I";
    case Severity::kWarning:
      return "W";
    case Severity::kError:
      return "E";
  }
  return "I";
}

void write_all(int fd, const std::string& line) {
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n <= 0) return;  // logging must never take the server down
    done += static_cast<size_t>(n);
  }
}

}  // namespace

void log_event(Severity severity, std::string_view component, int32_t id, std::string_view context,
               std::string_view message, const bson::Document& attributes) {
  int fd = g_log_fd.load();
  if (fd < 0) return;
  std::string line = "{\"t\":{\"$date\":\"" + iso_time_utc() + "\"},\"s\":\"" +
                     severity_letter(severity) + "\",\"c\":" + quoted(component) +
                     ",\"id\":" + std::to_string(id) + ",\"ctx\":" + quoted(context) +
                     ",\"msg\":" + quoted(message);
  if (!attributes.empty()) line += ",\"attr\":" + bson::to_json(attributes);
  line += "}\n";
  std::lock_guard<std::mutex> lock(g_write_mutex);
  write_all(fd, line);
}

void set_log_fd(int fd) {
  g_log_fd.store(fd);
}

}  // namespace mongosim::server
