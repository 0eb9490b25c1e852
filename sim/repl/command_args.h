// Argument parsing for the replica-set admin commands whose rules live in Topology
// (docs/mongodb-behaviour.md, Step-down commands): replSetStepDown, replSetFreeze, replSetStepUp.
// Bad arguments throw CommandError with mongod's code (BadValue 2, TypeMismatch 14) and wording.
#pragma once

#include <cstdint>

#include "bson/value.h"
#include "repl/topology.h"

namespace mongosim::repl {

// The longest period (seconds) these commands take: a bound so that now (ms) + period * 1000
// stays within 64 bits; beyond it (or a NaN or infinity) is BadValue.
inline constexpr int64_t kMaxCommandSeconds = int64_t{1} << 40;

// {replSetStepDown: <secs>, secondaryCatchUpPeriodSecs?: <secs>, force?: <bool>}.
// stepDownSecs 0 means 60; secondaryCatchUpPeriodSecs defaults to 10, or 0 with force.
StepDownRequest parse_step_down_request(const bson::Document& cmd);

// {replSetFreeze: <secs>}: the number of seconds (0 unfreezes).
int64_t parse_freeze_secs(const bson::Document& cmd);

// {replSetStepUp: 1, skipDryRun?: <bool>}: whether to skip the dry run.
bool parse_step_up_skip_dry_run(const bson::Document& cmd);

}  // namespace mongosim::repl
