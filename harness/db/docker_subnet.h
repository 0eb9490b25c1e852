// The subnet of a `--cluster docker` run's network: 10.89.<n>.0/24 with <n> in
// [kSubnetFirst, kSubnetFirst + kSubnetCount), one the host does not already use.
//
// Runs with daemons of their own do not see each other's networks (a daemon refuses only an
// overlap with its own), but their bridges share the host's routing table: two bridges on one
// subnet break both runs. So the choice looks at what the host's addresses and routes already
// use, and the caller checks again once its bridge exists (a run that chose at the same moment).
//
// Thread rules: none (no state).
#pragma once

#include <set>
#include <string>

namespace locklab {

inline constexpr int kSubnetFirst = 100;
inline constexpr int kSubnetCount = 150;

// The <n> of every 10.89.<n>.x that `ip_text` (output of `ip -o -4 addr show` or
// `ip -4 route show`) mentions.
std::set<int> subnets_mentioned(const std::string& ip_text);
// The same for the host, now: its IPv4 addresses and routes. Throws std::runtime_error when `ip`
// cannot be run.
std::set<int> host_subnets_in_use();
// The first <n> from `start` on (wrapping within the range) that is not in `used`; -1 when every
// one is.
int choose_subnet(const std::set<int>& used, int start);
// How many host addresses are 10.89.<n>.1 (the gateway a bridge of that subnet holds).
int host_gateways_on(int n);

}  // namespace locklab
