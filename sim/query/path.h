// Dotted paths ("a.b.0.c") and the two ways MongoDB walks them: the query walk, which fans out
// over arrays (docs/mongodb-behaviour.md, Filters), and the exact walk used by update operators.
// Internal to the query engine; pure functions, no state.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "query/query.h"

namespace mongosim::query {

using Path = std::vector<std::string>;

// Splits on '.'; empty components are kept (callers reject them where mongod does). A path of
// more than bson::kMaxNestingDepth components can name nothing any BSON holds; it is refused
// (15 Overflow) before a recursive walk or a projection tree is built from it.
Path split_path(std::string_view dotted);
std::string join_path(const Path& path, size_t end);

// A path component that addresses an array element: decimal digits, no leading zero.
std::optional<size_t> array_index(std::string_view component);

// One value a query predicate is tested against. value == nullptr means "missing".
// from_leaf_array: the value is an element of an array found at the end of the path, so
// predicates that look at whole arrays ($size, $type: "array", $elemMatch) skip it.
struct Candidate {
  const Value* value = nullptr;
  bool from_leaf_array = false;
};

// The query walk: arrays met before the end of the path fan out over their document elements
// (and an index component also selects that element); an array at the end yields itself and
// each of its elements. Pointers stay valid while doc lives.
void collect_candidates(const Document& doc, const Path& path, std::vector<Candidate>& out);

// The exact walk: no array fan-out, index components address array elements. nullptr if absent.
const Value* lookup_exact(const Document& doc, const Path& path);

}  // namespace mongosim::query
