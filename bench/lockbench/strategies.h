// The backoff strategies lockbench can measure: one row per strategy, each naming the
// mongolock::Backoff it runs (or why it cannot run in this build).
//
// Adding a strategy is adding (or enabling) one row of kStrategies in strategies.cpp; nothing
// else in lockbench names a strategy.
// Invariants: names are unique; a row without a backoff has a non-empty `unavailable` text.
// Thread rules: the table is immutable; read it from any thread.
#pragma once

#include <mongolock/options.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lockbench {

struct Strategy {
  std::string_view name;
  std::optional<mongolock::Backoff> backoff;  // nullopt: not in this mongolock
  std::string_view formula;                   // for the report
  std::string_view unavailable;               // why it cannot run (rows without a backoff)
};

std::span<const Strategy> strategies();

// The rows that can run, in table order.
std::vector<const Strategy*> available_strategies();

// The rows named in `names`, in the order given. Throws std::invalid_argument naming the first
// unknown or unavailable name (and, for an unavailable one, why).
std::vector<const Strategy*> pick_strategies(const std::vector<std::string>& names);

const Strategy& strategy_named(std::string_view name);  // throws std::invalid_argument

}  // namespace lockbench
