// The parsed form of a projection, shared by its parser (projection_parse.cpp) and its executor
// (projection.cpp); internal to sim/query.
//
// A tree of the specification's paths: {"a.b": 1, c: 0} is a: {b: include}, c: exclude. Entries
// keep specification order. Invariants: an entry's name is one path component (no dot); a kSub
// entry's tree is non-empty; `computed` is true exactly when a kCompute entry is at or below
// the tree. Immutable once parsed (shared by copies of a Projection).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "query/query.h"

namespace mongosim::query {

struct ProjTree;

struct ProjEntry {
  enum class Kind { kInclude, kExclude, kCompute, kSub };
  Kind kind = Kind::kInclude;
  Value expr;                     // kCompute
  std::shared_ptr<ProjTree> sub;  // kSub
};

struct ProjTree {
  std::vector<std::pair<std::string, ProjEntry>> entries;  // specification order
  bool computed = false;  // a computed field is at or below this tree

  ProjEntry* find(const std::string& name) {
    for (auto& [k, e] : entries) {
      if (k == name) return &e;
    }
    return nullptr;
  }
  const ProjEntry* find(const std::string& name) const {
    return const_cast<ProjTree*>(this)->find(name);
  }
};

// An inclusion projection outputs what its tree includes and computes, with _id as an included
// field unless the specification names _id (then the tree says what happens to it); an
// exclusion projection removes what its tree excludes.
struct Projection::Impl {
  ProjTree tree;
  bool inclusion = false;
  bool empty = true;
};

}  // namespace mongosim::query
