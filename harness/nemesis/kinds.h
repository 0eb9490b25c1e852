// The fault families, each in its own file, behind make_fault() (nemesis/faults.cpp). Each
// returns nullptr for a kind it does not own. Internal to the nemesis.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nemesis/nemesis.h"

namespace locklab {

// nemesis/partitions.cpp: isolate-member, partition-halves/-ring/-bridge, partition-worker.
std::unique_ptr<Fault> make_partition_fault(FaultKind kind, const std::string& target,
                                            const nlohmann::json& params);
// nemesis/replset.cpp: step-down, freeze, kill-member, clock-skew, clock-jump,
// primary-divergence.
std::unique_ptr<Fault> make_replset_fault(FaultKind kind, const std::string& target,
                                          const nlohmann::json& params);

// "m0" -> {0}; "m1,m2" -> {1, 2}. Throws std::invalid_argument on anything else.
std::vector<int> member_indices(const std::string& target);
// "m<i>" for a member index (the member's role in the network).
std::string member_role(int member);

}  // namespace locklab
