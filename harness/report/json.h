// verdict.json: the machine-readable verdict of one run. Shape:
//   {"outcome": "valid"|"invalid"|"unknown",
//    "properties": [{"property", "outcome", "note", "violation_count",
//                    "violations": [{"message", "cause", "events": [{"index", "line"}]}]}],
//    "stats": {...}}
// where each event's "line" is the history line (to_json_line) of that event.
// Thread rules: pure functions; call from any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "checker/checker.h"
#include "checker/history.h"

namespace locklab {

nlohmann::json verdict_to_json(const std::vector<Event>& history, const Verdict& verdict);

// Reads back what verdict_to_json wrote (violation events keep only their indices).
// Throws std::invalid_argument naming the offending key.
Verdict verdict_from_json(const nlohmann::json& json);

}  // namespace locklab
