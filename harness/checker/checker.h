// The checkers: turn a history (checker/history.h) into a Verdict, one PropertyResult per property
// defined in docs/properties.md (each property's claim, what is indeterminate, what "unknown"
// means). This header is the API the runtime calls after a run and that `locklab check DIR`
// calls on a stored history. Histories of vocabulary v1 (no value.vocabulary in the start event)
// and v2 are both accepted.
//
// Inputs: the events in the order read_history() returns them (by t_ns, file order for equal
// timestamps). Every Violation names its evidence as indices into that vector.
//
// Conventions every checker follows:
//   - An `info` outcome is unknown: it may or may not have happened. It never counts as
//     "definitely did not happen", and never alone as evidence of a violation.
//   - Only `acquire ok` starts a hold: a worker enters its critical section only then.
//   - Every checker is O(n log n) in the number of events.
//   - Every selected property is reported: one whose events the history lacks is "unknown" when
//     chosen explicitly and "not-applicable" (with the reason) when selected implicitly.
//
// Thread rules: check() is a pure function of its inputs; call it from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checker/history.h"

namespace locklab {

// Property names, as they appear in scenarios, verdict.json and reports.
inline constexpr std::string_view kTokensUnique = "tokens.unique";
inline constexpr std::string_view kTokensMonotonic = "tokens.monotonic";
inline constexpr std::string_view kExclusionFenced = "exclusion.fenced";
inline constexpr std::string_view kExclusionStrict = "exclusion.strict";
inline constexpr std::string_view kLivenessRecovery = "liveness.recovery";
inline constexpr std::string_view kLostSignalled = "lost.signalled";
inline constexpr std::string_view kCounterNoLostUpdates = "counter.no-lost-updates";
inline constexpr std::string_view kExclusionRw = "exclusion.rw";
inline constexpr std::string_view kExclusionRwFenced = "exclusion.rw-fenced";

// Every property, in report order.
const std::vector<std::string>& all_properties();
bool is_known_property(std::string_view name);
// The properties check() judges on a run of `workload` ("mutex", "fenced", "counter", "rw")
// by a client whose grants carry fencing tokens (or not), given the run acquired a lock at
// least once; in all_properties() order. Decided by the same rules that make check() report
// a property not-applicable, applied to such a run's start event and one grant. Listing a
// property outside this set in CheckConfig::properties makes it unknown.
std::vector<std::string> properties_applying_to(std::string_view workload, bool tokens);

// What to check and with which bounds. The runtime stores it in the history's first event
// (process "harness", f "start", value.check = to_json()) so that a stored history is all
// `locklab check` needs.
struct CheckConfig {
  // Properties to check. Empty means "every property whose events occur in the history";
  // a property listed explicitly whose events are missing comes out kUnknown.
  std::vector<std::string> properties;
  // liveness.recovery: after a heal, some waiting worker must acquire within this bound
  // (expiry + election timeout + backoff ceiling, computed by the runtime).
  int64_t liveness_bound_ns = 10'000'000'000;
  // lost.signalled: a holder taken over must see `lost` no later than takeover + this bound.
  int64_t lost_bound_ns = 1'000'000'000;
  // The lease lock model (tokens.monotonic): a grant's lease may expire no earlier than its
  // acquire invoke + value.lease_ms minus this allowance for clock skew between the server
  // and the harness.
  int64_t lease_skew_ns = 250'000'000;
  // The fault kinds that move member clocks. A hold granted on a member clock d ahead of the one
  // that judges it lasts up to d longer, and a clock moved ahead during a lease (or set back at
  // its grant and restored) ends it up to d early (mongolock.h, "Liveness under a clock that is
  // off"). So where the checkers judge at time t, the clock faults of these kinds begun by t
  // widen their allowance by their moves (checker/index.h ClockMoves): liveness.recovery's bound by
  // the moves, the lease model's skew (tokens.monotonic, exclusion.rw-fenced) by twice them.
  // The runtime names them from its fault table; empty: nothing widens.
  std::vector<std::string> clock_fault_kinds;
  // Writes to this resource are the counter workload's; writes to any other resource are
  // fenced writes.
  std::string counter_resource = "counter";
  // At most this many violations are kept per property (the count is always exact).
  size_t violations_kept_max = 100;

  nlohmann::json to_json() const;
  // Throws std::invalid_argument naming the offending key.
  static CheckConfig from_json(const nlohmann::json& json);
};

// kNotApplicable: an implicitly selected property whose events the history does not hold (a
// mutex run has no counter); reported with its reason, neutral in the overall verdict.
enum class Outcome { kValid, kInvalid, kUnknown, kNotApplicable };

// "valid" | "invalid" | "unknown" | "not-applicable"
std::string_view to_string(Outcome outcome);
std::optional<Outcome> parse_outcome(std::string_view text);
// Invalid dominates unknown, which dominates valid; not-applicable is neutral.
Outcome combine(Outcome a, Outcome b);
// Process exit codes (docs/properties.md "Outcomes"): a verdict maps to 0 valid, 1 invalid,
// 3 unknown; 2 is reserved for a harness error or bad input (never a verdict).
inline constexpr int kExitValid = 0;
inline constexpr int kExitInvalid = 1;
inline constexpr int kExitError = 2;
inline constexpr int kExitUnknown = 3;
int exit_code(Outcome outcome);

struct Violation {
  std::string property;
  std::string message;  // what went wrong, with tokens, processes and times
  std::string cause;    // active fault windows that explain it ("pause-worker w2"), or "none"
  std::vector<size_t> events;  // indices into the history: the minimal evidence, ascending
};

struct PropertyResult {
  std::string property;
  Outcome outcome = Outcome::kValid;
  std::string note;                   // why unknown, or what was checked
  size_t violation_count = 0;         // exact, even when violations were truncated
  std::vector<Violation> violations;  // at most CheckConfig::violations_kept_max
};

struct Stats {
  size_t events = 0;
  std::map<std::string, size_t> events_by_type;  // "invoke" -> n, ...
  std::map<std::string, size_t> events_by_f;     // "acquire" -> n, ...
  size_t processes = 0;                          // distinct worker processes
  size_t acquisitions = 0;                       // acquire ok
  size_t acquisitions_unknown = 0;               // acquire info
  size_t holds = 0;                              // holds reconstructed by exclusion.strict
  size_t faults = 0;                             // nemesis fault events (heals not counted)
  int64_t start_ns = 0;                          // first event's t
  int64_t duration_ns = 0;                       // last minus first event's t
  size_t torn_fragments = 0;  // torn lines read_history dropped (set by `locklab check`)
};

struct Verdict {
  Outcome overall = Outcome::kValid;
  std::vector<PropertyResult> properties;  // in all_properties() order
  Stats stats;

  const PropertyResult* find(std::string_view property) const;  // nullptr when not checked
};

// Checks every configured property. Odd histories yield violations or unknowns; a field the
// history contract fixes that is malformed (a final's writes not an array, a v2 fenced write
// without an id or reusing one...) throws std::invalid_argument naming the event and field.
Verdict check(const std::vector<Event>& history, const CheckConfig& config);

// The CheckConfig stored in the history's start event, if any. Throws std::invalid_argument
// naming the key when the stored config is malformed.
std::optional<CheckConfig> config_from_history(const std::vector<Event>& history);

}  // namespace locklab
