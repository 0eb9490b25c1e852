// The document an upsert starts from (docs/mongodb-behaviour.md, Upsert documents; mongod's
// UpdateDriver::populateDocumentWithQueryFields): the filter's equality predicates, taken from
// the top level and from (nested) $and clauses; every other operator contributes nothing.
#include <algorithm>

#include "base/command_error.h"
#include "query/path.h"
#include "query/query.h"

namespace mongosim::query {

namespace {

using Equality = std::pair<std::string, Value>;

void collect_equalities(const Document& filter, std::vector<Equality>& out);

void collect_field(const std::string& field, const Value& value, std::vector<Equality>& out) {
  if (value.type() == bson::Type::kRegex) return;  // a regex is a match, not an equality
  if (!value.is_document() || value.as_document().empty() ||
      value.as_document().first_key()[0] != '$') {
    out.emplace_back(field, value);
    return;
  }
  for (const auto& [op, arg] : value.as_document()) {
    if (op == "$eq") out.emplace_back(field, arg);
  }
}

void collect_equalities(const Document& filter, std::vector<Equality>& out) {
  for (const auto& [field, value] : filter) {
    if (field == "$and" && value.is_array()) {
      for (const Value& clause : value.as_array()) {
        if (clause.is_document()) collect_equalities(clause.as_document(), out);
      }
    } else if (!field.empty() && field[0] != '$') {
      collect_field(field, value, out);
    }
  }
}

bool is_prefix(const Path& a, const Path& b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

[[noreturn]] void not_single(const std::string& message) {
  throw CommandError(code::kNotSingleValueField, "cannot infer query fields to set, " + message);
}

void check_conflicts(const std::vector<Equality>& eqs) {
  for (size_t i = 0; i < eqs.size(); ++i) {
    Path pi = split_path(eqs[i].first);
    for (size_t j = 0; j < i; ++j) {
      Path pj = split_path(eqs[j].first);
      if (pi == pj) not_single("path '" + eqs[i].first + "' is matched twice");
      if (is_prefix(pi, pj) || is_prefix(pj, pi)) {
        not_single("both paths '" + eqs[i].first + "' and '" + eqs[j].first + "' are matched");
      }
    }
  }
}

void set_seed_path(Document& doc, const Path& path, const Value& value) {
  Document* current = &doc;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    Value* child = current->get_mutable(path[i]);
    if (child == nullptr) {
      current->append(path[i], Value::document({}));
      child = current->get_mutable(path[i]);
    } else if (!child->is_document()) {
      throw CommandError(code::kPathNotViable, "Cannot create field '" + path[i + 1] +
                                                   "' in element {" + path[i] + ": ...}");
    }
    current = &child->mutable_document();
  }
  current->append(path.back(), value);
}

}  // namespace

Document upsert_seed(const Document& filter) {
  std::vector<Equality> eqs;
  collect_equalities(filter, eqs);
  check_conflicts(eqs);
  // _id goes first, as in every document mongod inserts.
  std::stable_partition(eqs.begin(), eqs.end(), [](const Equality& e) {
    return e.first == "_id" || e.first.rfind("_id.", 0) == 0;
  });
  Document seed;
  for (const auto& [field, value] : eqs) {
    Path path = split_path(field);
    for (const std::string& part : path) {
      if (part.empty()) {
        throw CommandError(code::kEmptyFieldName,
                           "An empty update path is not valid. Path: '" + field + "'");
      }
    }
    set_seed_path(seed, path, value);
  }
  return seed;
}

}  // namespace mongosim::query
