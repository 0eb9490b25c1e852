// What the query engine implements, by name: the one list each parser checks a name against, and
// the list docs/mongodb-behaviour.md ("What the query engine implements") shows users deciding
// whether mongosim can run their commands (supported_test.cpp keeps the two equal). A name not
// listed is refused with mongod's code for an unknown one.
//
// Invariants: the arrays are sorted and hold no duplicate (checked by the test).
// Thread rules: constants.
#pragma once

#include <algorithm>
#include <iterator>
#include <string_view>
#include <vector>

namespace mongosim::query {

// {field: {<op>: ...}} (Filters); an unknown one is BadValue "unknown operator".
inline constexpr std::string_view kFieldOperators[] = {
    "$all", "$elemMatch", "$eq",  "$exists", "$gt",      "$gte",   "$in",   "$lt",  "$lte",
    "$mod", "$ne",        "$nin", "$not",    "$options", "$regex", "$size", "$type"};
// {<op>: ...} at a filter's top level.
inline constexpr std::string_view kTopLevelOperators[] = {
    "$alwaysFalse", "$alwaysTrue", "$and", "$comment", "$expr", "$nor", "$or"};
// Update operators (Update operators); an unknown one is FailedToParse (9).
inline constexpr std::string_view kUpdateOperators[] = {
    "$addToSet", "$currentDate", "$inc",  "$max",    "$min", "$mul",         "$pop",
    "$pull",     "$pullAll",     "$push", "$rename", "$set", "$setOnInsert", "$unset"};
// Aggregation stages (a change stream's $changeStream comes first and is not listed); an unknown
// one is 40324.
inline constexpr std::string_view kPipelineStages[] = {
    "$addFields",   "$count", "$group", "$limit", "$match", "$project", "$replaceRoot",
    "$replaceWith", "$set",   "$skip",  "$sort",  "$unset", "$unwind"};
// $group accumulators; an unknown one is 15952.
inline constexpr std::string_view kGroupAccumulators[] = {
    "$addToSet", "$avg", "$count", "$first", "$last", "$max", "$min", "$push", "$sum"};

template <size_t N>
bool listed(const std::string_view (&names)[N], std::string_view name) {
  return std::binary_search(std::begin(names), std::end(names), name);
}

// The aggregation expression operators the evaluator implements (expression.cpp's table), sorted.
std::vector<std::string_view> expression_operator_names();

}  // namespace mongosim::query
