// The fault kinds a scenario may name, as one table: one FaultKind value and one row each
// (name, what its target names, its default target, the members it needs, whether it needs
// partition hooks, whether it pauses, kills or restarts member processes, which clock it moves,
// its own parameter keys and their validation).
//
// Strings are converted once, by the scenario parser (fault_kind_named); everything after it
// (plan, nemesis, preflight, backends' supports()) works on FaultKind and the row. Adding a fault
// kind is one enumerator, one row in fault_kind.cpp and its Fault class (nemesis), plus the case
// that makes it in make_fault (the compiler refuses a switch that misses one).
//
// Invariants: every FaultKind has exactly one row, names are unique, and rows are pure data
// (the table is built once and never changes). Any thread.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace locklab {

enum class FaultKind : uint8_t {
  kIsolateWorker,
  kPauseWorker,
  kKillWorker,
  kFailCommand,
  kCommandDelay,
  kClockSkewWorker,
  kClockJumpWorker,
  kPartitionWorker,
  kPauseMember,
  kKillMember,
  kIsolateMember,
  kFreeze,
  kClockSkew,
  kClockJump,
  kPartitionHalves,
  kPartitionRing,
  kPartitionBridge,
  kStepDown,
  kPrimaryDivergence,
  kReplyDelay,
};

// What a fault's `target` names.
enum class FaultTarget {
  kWorker,   // "w<N>", "random" or "holder"
  kMember,   // "m<N>", "random", "primary" or "secondaries" (resolved when the window opens)
  kCluster,  // the whole set (acts on whichever member is primary then); target "primary"
};

// Whose wall clock a fault moves.
enum class ClockMoved {
  kNone,
  kMember,  // a member's (Db::set_clock_offset)
  kWorker,  // a worker's (libfaketime under the worker process)
};

// The first problem with a fault's own parameters: {key, what is wrong}.
struct FaultParamError {
  std::string key;
  std::string what;
};
// Validates a fault's own parameters (types and ranges); nullopt when they are fine.
using FaultParamCheck = std::optional<FaultParamError> (*)(const nlohmann::json& params);

struct FaultKindRow {
  FaultKind kind;
  std::string_view name;  // as scenarios and histories spell it
  FaultTarget target;
  std::string_view default_target;  // when a scenario gives none
  // A set that can lose and regain a majority needs 3; the ring needs 5 (with 3, every member
  // sees every other).
  int members_min = 1;
  // A partition: the backend must provide partition hooks (Db::partitions()).
  bool needs_network = false;
  // Pauses, kills or restarts member processes (Db::pause_member, kill_member, restart_member).
  bool signals_members = false;
  ClockMoved clock = ClockMoved::kNone;
  std::vector<std::string> keys;    // its own parameter keys
  FaultParamCheck check = nullptr;  // nullptr: keys need no check beyond being known
};

// Every row, in FaultKind order.
const std::vector<FaultKindRow>& fault_kinds();
const FaultKindRow& fault_row(FaultKind kind);
std::string_view to_string(FaultKind kind);
// The kind spelled `name`, or nullopt.
std::optional<FaultKind> fault_kind_named(std::string_view name);
// "clock-jump, clock-jump-worker, ...": every name, sorted, for error messages.
std::string fault_kind_names();

// Orders kinds by name, so maps keyed by kind iterate as maps keyed by name did (the random mix
// draws in that order: a seed must keep giving the same plan).
struct FaultKindByName {
  bool operator()(FaultKind a, FaultKind b) const { return to_string(a) < to_string(b); }
};

// Whether `target` is acceptable for `kind` in a set of `members` members and `workers`
// workers; the error text ("is not a member (m0..)...") when not.
std::optional<std::string> target_error(FaultKind kind, const std::string& target, int members,
                                        int workers);

// The first problem with a fault's own parameters in a set of `members` members (too few
// members is reported under the key "fault"), or nullopt.
std::optional<FaultParamError> fault_param_error(FaultKind kind, const nlohmann::json& params,
                                                 int members);

}  // namespace locklab
