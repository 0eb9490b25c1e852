// The catalogue of fault kinds a scenario may name: for each, what it targets and which of its
// own keys it accepts, and the validation of those keys. Pure functions over plain data; any
// thread. The nemesis (nemesis_faults*.cpp) implements each kind listed here.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace locklab {

// What a fault's `target` names.
enum class FaultTarget {
  kWorker,   // "w<N>", "random" or "holder"
  kMember,   // "m<N>", "random", "primary" or "secondaries" (resolved when the window opens)
  kCluster,  // the whole set (acts on whichever member is primary then); target "primary"
};

// The fault kinds, each with the parameter keys it accepts.
const std::map<std::string, std::vector<std::string>>& known_faults();
// Throws std::out_of_range for an unknown kind.
FaultTarget fault_target(std::string_view fault);
// True when the fault kind targets members rather than workers.
bool fault_targets_member(std::string_view fault);
// True for the kinds that move a member's clock (they need mongosimSetClockOffset, or faketime
// with --mongod).
bool fault_moves_clock(std::string_view fault);
// The default target when a scenario gives none.
std::string default_target(std::string_view fault);

// Whether `target` is acceptable for `fault` in a set of `members` members and `workers`
// workers; the error text ("is not a member (m0..)...") when not.
std::optional<std::string> target_error(std::string_view fault, const std::string& target,
                                        int members, int workers);

// The first problem with a fault's own parameters: {key, what is wrong}, or nullopt.
struct FaultParamError {
  std::string key;
  std::string what;
};
std::optional<FaultParamError> fault_param_error(const std::string& fault,
                                                 const nlohmann::json& params, int members);

}  // namespace locklab
