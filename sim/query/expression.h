// Aggregation expressions (docs/mongodb-behaviour.md, Expressions): the evaluator behind $expr,
// update pipelines, $project/$addFields/$group and find's computed projections. Expressions are
// interpreted straight from their BSON form; validate_expression() runs the parse-time checks
// mongod makes, so a bad expression fails before any document is touched.
//
// "Missing" is distinct from null throughout (a missing field is not null: {$eq: ["$x", null]}
// is false when x is absent), so results are std::optional<Value> with nullopt = missing.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "query/query.h"

namespace mongosim::query {

using Maybe = std::optional<Value>;

// The variables an expression can read. $$ROOT and $$CURRENT are the document being evaluated.
struct Variables {
  const Document* root = nullptr;
  const EvalContext* ctx = nullptr;
  // $let and user variables, innermost last; looked up from the back. A variable bound to a
  // missing value ($let's var of a missing field, $reduce's $$value from a missing
  // initialValue) holds nullopt and reads as missing, as in mongod.
  std::vector<std::pair<std::string, std::optional<Value>>> user;
};

// Throws CommandError (168 unknown operator, 15983 malformed object, 16020 wrong arity...).
void validate_expression(const Value& expression);

// Whether `name` ("$add") is an expression operator mongosim evaluates.
bool is_expression_name(std::string_view name);

// Throws CommandError for run-time type errors (14, 16612, 15, 241, ...).
Maybe eval_expression(const Value& expression, const Variables& vars);

// Comparison with "missing" ordered just below null, as expressions compare
// (docs/mongodb-behaviour.md, Expressions).
int compare_maybe(const Maybe& a, const Maybe& b);

}  // namespace mongosim::query
