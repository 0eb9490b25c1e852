// What the checkers derive from a raw history, once, before any property is judged:
// operations (an invoke paired with its completion), holds (a worker's critical sections),
// fault windows (a nemesis fault paired with its heal) and the harness's start and stop.
// Internal to the checkers; the definitions they serve are in docs/properties.md.
//
// Invariants: every index refers into the history the index was built from; operations,
// holds and windows are in order of their first event; a hold's end is never before its start.
// Thread rules: immutable after construction; share it freely between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "checker/checker.h"
#include "checker/history.h"

namespace locklab {

inline constexpr size_t kNoEvent = std::numeric_limits<size_t>::max();

// One operation of one process: its invoke (if any) and its completion (if any).
// Completions are paired with the latest pending invoke of the same process and f.
struct Operation {
  size_t invoke = kNoEvent;
  size_t completion = kNoEvent;  // kNoEvent: still pending at the end (outcome unknown)
  std::string process;
  std::string f;
  std::string lock;              // from either event
  std::optional<int64_t> token;  // from either event, the completion's first
  std::string resource;          // value.resource of either event, for writes and reads

  // The outcome: the completion's type, or kInfo (unknown) when it never completed.
  EventType outcome(const std::vector<Event>& history) const;
  // The first event of the operation.
  size_t first() const { return invoke != kNoEvent ? invoke : completion; }
};

enum class HoldEnd { kRelease, kLost, kKilled, kExited, kReacquired, kHistoryEnd, kWrite };
std::string_view to_string(HoldEnd end);
// "its release", "it was killed", ...: how a hold ended, for messages.
std::string_view describe(HoldEnd end);

// A critical section: from an acquire ok to the earliest of the holder's release invoke, `lost`
// event carrying the hold's token (`lost-ignored` does not end it), kill or exit, its next
// acquire ok of the same lock, or the end of the history; then extended to the completion of
// the holder's last write with that token when that is later (a worker that goes on writing
// after `lost`, or whose write was in flight, still acts as the holder).
struct Hold {
  size_t acquire_ok = kNoEvent;
  size_t end_event = kNoEvent;  // kNoEvent when the history ended first
  std::string process;
  std::string lock;
  std::optional<int64_t> token;
  bool shared = false;  // value.mode == "shared"
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  HoldEnd end = HoldEnd::kHistoryEnd;
  // When the holder's release completed ok: the server confirmed the hold then (v1 and v2).
  std::optional<int64_t> release_ok_ns;
};

// A fault from its first nemesis event (v2: the intent, `<fault> invoke`; v1: `<fault> info`)
// to the heal with the same window id: v2 `heal ok`, v1 `heal info`, or the `<fault> fail`
// whose partial action was undone. A failed heal leaves the window open to the history's end.
struct FaultWindow {
  size_t start_event = kNoEvent;
  size_t heal_event = kNoEvent;  // kNoEvent: never healed
  std::string fault;
  std::string window;
  std::vector<std::string> targets;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  // Every nemesis event paired into the window, ascending: its start, activations, acts
  // inside it, heal attempts and the heal.
  std::vector<size_t> events;
  // The first event was a `fail` whose partial action was undone: nothing happened, and the
  // window ends where it starts (heal_event is that event).
  bool undone = false;

  bool targets_any_of(const std::string& a, const std::string& b) const;
  // "pause-worker w2 (window 3)"
  std::string describe() const;
};

// Pairs every nemesis event of the history into fault windows (the rule above), undone ones
// included. The one pairing rule: the checkers (HistoryIndex::windows, without the undone
// windows) and the report both use it.
std::vector<FaultWindow> collect_windows(const std::vector<Event>& history);

// Small readers of an event's value shared by the checkers and the report: a field as text
// ("" when absent), the targets (value.targets or value.target) and value.undone.
std::string text_of(const nlohmann::json& value);
std::string field_text(const Event& event, const char* key);
std::vector<std::string> targets_of(const Event& event);
bool undone(const Event& event);

struct HistoryIndex {
  std::vector<Operation> operations;
  std::vector<Hold> holds;
  std::vector<FaultWindow> windows;
  std::vector<std::string> workers;  // processes other than "nemesis" and "harness", sorted
  int64_t first_ns = 0;
  int64_t last_ns = 0;
  // The first harness `stop` (v2): acquires pending then were stopped, not starved.
  size_t stop_event = kNoEvent;
  int64_t stop_ns = 0;   // last_ns when there is no stop event
  int vocabulary = 1;    // the start event's value.vocabulary (1 when absent)
  std::string workload;  // the start event's value.workload ("" when absent: v1)
  // When each worker died (a kill that took effect, or the harness's exit event), in time order.
  std::unordered_map<std::string, std::vector<int64_t>> deaths_ns;

  static HistoryIndex build(const std::vector<Event>& history);
  // The first death of `process` at or after t_ns; INT64_MAX when it never died then.
  int64_t death_after(const std::string& process, int64_t t_ns) const;

  // Fault windows that intersect [from_ns, to_ns] and target either process (or target no
  // worker at all: cluster-wide faults), described and joined; "none" when there are none.
  // A window ends at its heal: a checker passes the span from the earliest event its violation
  // rests on (the earlier of two grants, the read a stale write was computed from, a lost
  // write's invoke), so a fault healed before the violation became visible is still named
  // (docs/properties.md, "cause").
  std::string cause(int64_t from_ns, int64_t to_ns, const std::string& a,
                    const std::string& b) const;
  bool is_worker(const std::string& process) const;
};

// Small shared helpers for the property checkers.
std::string resource_of(const Event& event);  // value.resource as text, "" when absent
std::string ms_text(int64_t ns);              // "1234.5 ms"
// "token 7", or "no token" for a grant of a lock that issues none (value.no_token).
std::string token_text(const std::optional<int64_t>& token);
std::optional<int64_t> int_field(const Event& event, const char* key);  // value.key if integer
// How far the faults of config.clock_fault_kinds begun at or before a time moved member clocks,
// in ns: the |offset_ms|, |jump_ms| or |clock_ms| in each window's params (its invoke's), healed
// or not (a hold granted on a clock that was off stays off after the heal). Each move is capped at
// a day and the sum at 100 days, so a stored history's garbage cannot overflow a bound. Built once
// per checker in O(w log w) over the windows, asked in O(log w).
class ClockMoves {
 public:
  ClockMoves(const std::vector<Event>& history, const HistoryIndex& index,
             const CheckConfig& config);
  int64_t by_ns(int64_t t_ns) const;  // moved by the faults begun at or before t_ns

 private:
  std::vector<std::pair<int64_t, int64_t>> total_ms_at_;  // (window start, moves up to it)
};
// a + b for non-negative b, at most INT64_MAX (a bound read from a stored history may be huge).
int64_t saturating_add(int64_t a, int64_t b);
// Appends a violation to result (keeping at most config.violations_kept_max) and marks it
// invalid. Sorts and deduplicates events.
void add_violation(PropertyResult& result, const CheckConfig& config, std::string message,
                   std::string cause, std::vector<size_t> events);

// One checker per property; each is O(n log n) in the history's length.
PropertyResult check_tokens_unique(const std::vector<Event>& history, const HistoryIndex& index,
                                   const CheckConfig& config);
PropertyResult check_tokens_monotonic(const std::vector<Event>& history, const HistoryIndex& index,
                                      const CheckConfig& config);
// Throws std::invalid_argument naming the event and field when a field the history contract
// fixes is malformed (checker/validate.cpp). Linear.
void validate_history(const std::vector<Event>& history, const CheckConfig& config);

PropertyResult check_exclusion_fenced(const std::vector<Event>& history, const HistoryIndex& index,
                                      const CheckConfig& config);
PropertyResult check_exclusion_strict(const std::vector<Event>& history, const HistoryIndex& index,
                                      const CheckConfig& config);
PropertyResult check_liveness_recovery(const std::vector<Event>& history, const HistoryIndex& index,
                                       const CheckConfig& config);
PropertyResult check_lost_signalled(const std::vector<Event>& history, const HistoryIndex& index,
                                    const CheckConfig& config);
PropertyResult check_counter(const std::vector<Event>& history, const HistoryIndex& index,
                             const CheckConfig& config);
PropertyResult check_exclusion_rw(const std::vector<Event>& history, const HistoryIndex& index,
                                  const CheckConfig& config);
PropertyResult check_exclusion_rw_fenced(const std::vector<Event>& history,
                                         const HistoryIndex& index, const CheckConfig& config);

}  // namespace locklab
