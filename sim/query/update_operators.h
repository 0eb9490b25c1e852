// Update-operator documents (docs/mongodb-behaviour.md, Update operators): parsing {$set: ...,
// $inc: ...} into a list of per-path operations, conflict detection, and applying them to a
// document. Internal to the query engine; Update (update.cpp) is the public face.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "query/path.h"
#include "query/query.h"

namespace mongosim::query {

struct UpdateOp {
  std::string op;      // "$set", "$inc", ...
  std::string dotted;  // the path as written
  Path path;
  Value arg;
  std::shared_ptr<const Matcher> pull_filter;  // $pull with a condition
  bool pull_value_form = false;                // the condition tests elements as values: {$gte: 6}
  std::string rename_from;                     // for the target half of $rename
};

struct OperatorUpdate {
  std::vector<UpdateOp> ops;  // in application order (by path, as mongod 5.0+)
  // arrayFilters by identifier: each matcher tests {identifier: element}.
  std::map<std::string, Matcher, std::less<>> array_filters;
};

// Throws CommandError (9 unknown modifier, 40 conflicts, 14 bad $inc argument, ...).
OperatorUpdate parse_operator_update(const Document& u, const std::optional<Array>& array_filters);

Document apply_operator_update(const OperatorUpdate& update, const Document& doc,
                               bool is_upsert_insert, const EvalContext& ctx);

}  // namespace mongosim::query
