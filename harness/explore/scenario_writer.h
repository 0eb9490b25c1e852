// The scenario TOML writer: a Scenario back to the text parse_scenario reads.
//
// Invariant (tested by the explore_generators tests): for every scenario parse_scenario accepts,
// to_json(parse_scenario(scenario_to_toml(s), p)) == to_json(s) with `name` set. Keys holding
// their default are still written (the file says everything the run used), except those whose
// default is a sentinel outside the key's range (lock.reap_after_s = -1) and the one of
// workload.operations / workload.duration_ms that is unset.
// Pure function; any thread.
#pragma once

#include <string>

#include "run/scenario.h"

namespace locklab {

// The scenario as TOML text, preceded by `comment` as "# " lines (none when empty).
std::string scenario_to_toml(const Scenario& scenario, const std::string& comment = "");

}  // namespace locklab
