// Canonical BSON type ranks (docs/mongodb-behaviour.md, Comparison order) and mongod-style value
// rendering for error messages. Internal to the query engine.
#pragma once

#include <string>

#include "query/query.h"

namespace mongosim::query {

// mongod's canonicalizeBSONType: types of equal rank compare by value (all numbers share one).
int canonical_type_rank(bson::Type type);

// True if a and b would be compared by value rather than by type rank.
inline bool same_bracket(const Value& a, const Value& b) {
  return canonical_type_rank(a.type()) == canonical_type_rank(b.type());
}

// The way mongod prints values inside error messages: { _id: 1, a: "x" }.
std::string render(const Value& value);
std::string render(const Document& doc);

}  // namespace mongosim::query
