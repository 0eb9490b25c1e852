// What one contender reports about one cell: a record per hold (with the fencing token that
// orders the holds of a lock), the wait the cell's end cut off (if any), its own counts of
// acquisitions and releases (kept apart from the records so the two can be checked against each
// other), the commands its client pool sent (per command name, from APM) and any error.
//
// Timestamps are CLOCK_MONOTONIC nanoseconds: one clock for every process on the machine, so
// records from child processes compare with each other and with the parent's.
// The text form (one record per line) is how a child process hands its report to lockbench:
//   H <lock> <token> <asked_ns> <acquired_ns> <released_ns> <release_asked_ns>
//   W <lock> <asked_ns> <given_up_ns>
//   T <acquisitions> <releases>
//   C <command name> <count>
//   E <message to the end of the line>
// Thread rules: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace lockbench {

struct Hold {
  int32_t lock = 0;
  int64_t token = 0;
  int64_t asked_ns = 0;     // acquire() called
  int64_t acquired_ns = 0;  // acquire() returned the handle
  int64_t released_ns = 0;  // release() returned
  int64_t release_asked_ns = 0;  // release() called (its round trip: released_ns - this)
};

struct OpenWait {
  int32_t lock = 0;
  int64_t asked_ns = 0;
  int64_t given_up_ns = 0;  // the cell ended first
};

struct ContenderReport {
  std::vector<Hold> holds;
  std::optional<OpenWait> open_wait;
  int64_t acquisitions = 0;  // counted when acquire() returned a handle
  int64_t releases = 0;      // counted when release() said it removed the hold
  std::map<std::string, int64_t> commands_sent;
  std::string error;  // empty: none
};

std::string to_text(const ContenderReport& report);
// Throws std::runtime_error naming `source` and the line for a malformed line.
ContenderReport from_text(const std::string& text, const std::string& source);

}  // namespace lockbench
