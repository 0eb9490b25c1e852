// The history: one JSONL file per run, one event per line, appended by every worker process,
// the nemesis and the harness. It is the only input of the checkers (`locklab check` reads
// nothing else), so this header is the contract between everything that writes and reads it.
//
// Line format (ARCHITECTURE.md "History"):
//   {"t": <CLOCK_MONOTONIC ns>, "process": "w3", "type": "invoke", "f": "acquire",
//    "lock": "L1", "token": 17, "value": {...}}
// `t` comes from CLOCK_MONOTONIC, which every process on the machine shares. `lock`, `token`
// and `value` are omitted when absent.
//
// Vocabulary (what each writer emits; checkers rely on exactly this):
//   process "w<N>" (a worker):
//     acquire  invoke -> ok {token, value.lease_ms} | fail {value.reason} | info {value.error}
//              (info = outcome unknown: the lock may or may not have been granted)
//     release  invoke {token} -> ok | fail | info
//     extend   invoke {token} -> ok {value.lease_ms} | fail | info
//     lost     ok {token}                  the lost notification reached the worker; it has
//                                          stopped its critical section
//     write    invoke {token, value.resource} -> ok (accepted) | fail (rejected: stale token)
//              | info; the fenced resource's server-side check decides accept/reject
//     read     ok {value.resource, value.count}   counter workload: the value read
//     write    ok {value.resource = "counter", value.count}: the value written back
//   process "nemesis":
//     <fault>  info {value.window, value.targets, ...}   a fault starts (e.g. "pause-worker",
//              "isolate-worker", "kill-worker", "pause-member", "fail-command", "step-down")
//     heal     info {value.window, value.fault}          the fault with that window id ends
//   process "harness":
//     start    info {value.scenario, value.seed}         first event of a run
//     spawn / exit   info {value.worker, value.pid, value.status}   worker lifecycle
//     final    ok {value.resource, value.count | value.token}        end-of-run reads
//     end      info                                      last event of a run
//
// Crash safety: each event is written with a single write(2) on an O_APPEND descriptor, never
// buffered in user space, so a process killed with SIGKILL loses no event it finished writing
// and never leaves a torn line.
// One exception, seen in tests: Linux checks for fatal signals between the page copies of one
// write(2), so a SIGKILL landing inside the copy of a line that crosses a page boundary cuts
// that write short. The cut-off event was never finished; read_history drops such a fragment
// (a line prefix followed by a whole line, or an unterminated last line) and counts it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace locklab {

enum class EventType { kInvoke, kOk, kFail, kInfo };

std::string_view to_string(EventType type);
std::optional<EventType> parse_event_type(std::string_view text);

struct Event {
  int64_t t_ns = 0;
  std::string process;
  EventType type = EventType::kInfo;
  std::string f;
  std::string lock;              // empty when the event concerns no lock
  std::optional<int64_t> token;  // fencing token, when one exists
  nlohmann::json value;          // free-form; null when absent
};

// CLOCK_MONOTONIC in nanoseconds: the one clock every history writer uses.
int64_t monotonic_now_ns();

std::string to_json_line(const Event& event);  // without the trailing newline
// Parses one line; on failure returns nullopt and sets *error to what was wrong.
std::optional<Event> parse_json_line(std::string_view line, std::string* error);

// Appends events to a history file shared with other processes.
// Thread-safe (one write(2) per event); move-only; closes on destruction.
class HistoryWriter {
 public:
  // Opens (creating if needed) path for appending. Throws std::runtime_error naming the path.
  explicit HistoryWriter(const std::string& path);
  ~HistoryWriter();
  HistoryWriter(HistoryWriter&& other) noexcept;
  HistoryWriter& operator=(HistoryWriter&& other) noexcept;
  HistoryWriter(const HistoryWriter&) = delete;
  HistoryWriter& operator=(const HistoryWriter&) = delete;

  // Stamps t_ns with monotonic_now_ns() if it is 0, then appends. Throws on I/O failure.
  void append(Event event);

 private:
  int fd_ = -1;
};

// Reads a whole history, ordered by t_ns (stable for equal timestamps, keeping file order).
// Throws std::runtime_error naming the file and line of the first malformed line.
std::vector<Event> read_history(const std::string& path);

// What read_history found besides whole events.
struct HistoryReadStats {
  size_t torn_fragments = 0;  // partial lines of writers killed inside write(2), dropped
};
// read_history that also reports what it dropped (stats may be nullptr).
std::vector<Event> read_history(const std::string& path, HistoryReadStats* stats);

}  // namespace locklab
