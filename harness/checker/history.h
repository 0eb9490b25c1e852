// The history: one JSONL file per run, one event per line, appended by the harness: its own
// and the nemesis's events, and every worker's, which each worker appends to a file of its own
// that the harness validates and merges (run/worker_output.h; the protocol is harness/WORKERS.md).
// It is the only input of the checkers (`locklab check` reads nothing else), so this header is
// the contract between everything that writes and reads it.
//
// Line format:
//   {"t": <CLOCK_MONOTONIC ns>, "process": "w3", "type": "invoke", "f": "acquire",
//    "lock": "L1", "token": 17, "value": {...}}
// `t` comes from CLOCK_MONOTONIC, which every process on the machine shares. `lock`, `token`
// and `value` are omitted when absent.
//
// Vocabulary, version 2 (kHistoryVocabulary; what each writer emits, checkers rely on exactly
// this). Every operation that can take effect has its invoke written before its request can
// reach the server; `fail` means definitely not applied, `info` means the outcome is unknown,
// and an invoke with no completion (a killed worker) is unknown too.
//   process "w<N>" (a worker):
//     acquire  invoke -> ok {token, value.lease_ms} | fail {value.reason} | info {value.error}
//              a lock without fencing tokens writes ok {value.lease_ms, value.no_token: true}
//     extend   invoke {token} -> ok {value.lease_ms} | fail {value.reason} | info {value.error}
//              background extensions; an extension in flight when the hold is released may
//              have no completion
//     release  invoke {token} -> ok | fail {value.reason} (not applied: not held)
//              | info {value.error} (unknown: the release may have been applied)
//     lost     ok {token}            the lost notification fired AND the worker stopped its
//                                    critical section: nothing more is written with that token
//     lost-ignored ok {token}        the notification fired but the worker goes on
//                                    (honour_lost = false); the hold ends at the release invoke
//     write    (fenced) invoke {token, value.resource, value.id} -> ok | fail {value.reason}
//              (rejected: stale token) | info {value.error}; value.id "<process>-<n>" is
//              unique in the run; the resource keeps its accepted writes as [{id, token}...]
//     read     (counter) ok {value.resource, value.count}   the version read
//     write    (counter) invoke {value.resource, value.count (the value written), value.read
//              (the version read)} -> ok | fail {value.reason} | info {value.error}
//   process "nemesis":
//     <fault>  invoke {value.window, value.targets, value.selection, value.planned_ms,
//              value.planned_at_ms, value.params}      intent, before any action
//     <fault>  ok {value.window, value.targets, value.selection, value.roles, value.detail}
//              the fault is in force; roles: each target's role just before the action
//              (workers "holder" | "waiting" | "idle"; members "primary" | "secondary" |
//              "other"; a fault on the whole set maps the primary member to "primary");
//              selection: "fixed", "random", "holder", "random-fallback" (no holder found),
//              "primary", "secondaries". A repeated action inside the window (a step-down at
//              a cadence) is another ok with the same window, or info when it failed.
//     <fault>  fail {value.window, value.error, value.undone: true}   begin failed and what it
//              applied was undone: no heal follows
//     <fault>  info {value.window, value.error, value.undone: false, value.undo_error}
//              begin failed and could not be undone: a heal is still attempted
//     heal     invoke {value.window, value.fault, value.targets} -> ok (the fault is really
//              over: member back and answering, rule deleted, process continued)
//              | fail {..., value.error} (the window never heals)
//   process "harness":
//     start    info {value.scenario, value.seed, value.backend, value.check,
//              value.vocabulary = 2, value.workload, value.write_concern ("majority" or w),
//              value.fencing, value.honour_lost, value.client, value.tokens (whether the
//              client's grants carry fencing tokens), value.setup_ms (how long the set took
//              to come up)}   first event of a run, written once the set is ready
//     spawn / exit   info {value.worker, value.pid, value.status}   worker lifecycle
//     stop     info {value.reason}   the harness starts stopping the workers
//     worker-output info {value.worker, value.file, value.line, value.error, value.text}
//              a bad worker line, left out of the history (the run fails)
//              | info {value.worker, value.error}   a worker that ended on its own (the run fails)
//              | info {value.worker, value.file, value.line, value.torn: true, value.bytes}
//              the unfinished last write of a worker the harness killed, dropped
//     final    ok {value.resource, value.count}                          counter
//              ok {value.resource, value.token, value.count, value.writes: [{id, token}...]}
//                 fenced; writes keeps the last kFencedWritesKept, count counts them all
//              ok {value.resource, value.missing: true, value.count: 0}  no document
//              info {value.resource, value.error}                        could not read
//              one per resource the workload used, read at majority from a member confirmed
//              primary in one term for the whole read
//     end      info                                      last event of a run
// A history without value.vocabulary in its start event is version 1: faults were one info
// event after begin() and heals one info event after heal(); lost was written even when
// ignored; counter writes had no invoke.
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

// The vocabulary version this build writes (the start event's value.vocabulary).
inline constexpr int kHistoryVocabulary = 2;

// The longest line a history holds, its newline included: one event must fit in one write(2).
// A line this long is a writer bug, not data. HistoryWriter refuses to write a longer one, and
// the worker-output reader (run/worker_output.h) refuses a worker event that would encode longer.
inline constexpr size_t kHistoryLineBytesMax = size_t{1} << 20;

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
// Text from an event shown inside a message: at most kQuotedBytesMax bytes of it, then "...",
// so that an error about a huge field stays far below kHistoryLineBytesMax.
std::string quoted_excerpt(std::string_view text);
inline constexpr size_t kQuotedBytesMax = 120;
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
