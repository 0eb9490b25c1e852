// Sort specifications. A document's key for a path is the smallest (ascending) or largest
// (descending) value the query walk finds there; arrays contribute their elements, a missing
// field sorts as null and an empty array just below it, as mongod's sort keys do.
#include <cassert>

#include "base/command_error.h"
#include "query/path.h"
#include "query/query.h"

namespace mongosim::query {

namespace {

constexpr size_t kSortKeysMax = 32;  // mongod's compound index/sort key limit

Value sort_key(const Document& doc, const Path& path, int direction) {
  std::vector<Candidate> cands;
  collect_candidates(doc, path, cands);
  std::optional<Value> best;
  bool saw_empty_array = false;
  for (const Candidate& c : cands) {
    if (c.value != nullptr && c.value->is_array() && !c.from_leaf_array) {
      saw_empty_array = saw_empty_array || c.value->as_array().empty();
      continue;  // its elements are candidates of their own
    }
    Value v = c.value == nullptr ? Value::null() : *c.value;
    if (!best || compare_values(v, *best) * direction < 0) best = std::move(v);
  }
  if (best) return *best;
  return saw_empty_array ? Value::undefined() : Value::null();
}

}  // namespace

Sort Sort::parse(const Document& spec) {
  Sort sort;
  if (spec.size() > kSortKeysMax) {
    throw CommandError(code::kBadValue, "too many sort keys (at most 32)");
  }
  for (const auto& [field, value] : spec) {
    if (field.empty())
      throw CommandError(code::kBadValue, "FieldPath cannot be constructed with empty string");
    if (value.is_document()) {
      throw CommandError(17312, "$meta is the only expression supported by $sort right now");
    }
    auto n = value.is_number() ? value.number_as_exact_int64() : std::nullopt;
    if (!n || (*n != 1 && *n != -1)) {
      throw CommandError(15975,
                         "$sort key ordering must be 1 (for ascending) or -1 (for descending)");
    }
    sort.keys_.emplace_back(field, static_cast<int>(*n));
  }
  return sort;
}

int Sort::compare(const Document& a, const Document& b) const {
  for (const auto& [field, direction] : keys_) {
    Path path = split_path(field);
    int c = compare_values(sort_key(a, path, direction), sort_key(b, path, direction));
    if (c != 0) return c * direction;
  }
  return 0;
}

std::vector<Value> values_at_path(const Document& doc, std::string_view dotted_path) {
  std::vector<Candidate> cands;
  collect_candidates(doc, split_path(dotted_path), cands);
  std::vector<Value> out;
  for (const Candidate& c : cands) {
    if (c.value == nullptr) continue;
    // Elements of a leaf array come separately; an empty one is returned whole so index
    // keys can record it (mongod indexes [] as undefined).
    if (c.value->is_array() && !c.from_leaf_array && !c.value->as_array().empty()) continue;
    out.push_back(*c.value);
  }
  return out;
}

}  // namespace mongosim::query
