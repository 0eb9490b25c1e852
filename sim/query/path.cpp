#include "query/path.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "base/command_error.h"
#include "bson/codec.h"

namespace mongosim::query {

Path split_path(std::string_view dotted) {
  if (static_cast<size_t>(std::count(dotted.begin(), dotted.end(), '.')) >=
      static_cast<size_t>(bson::kMaxNestingDepth)) {
    constexpr size_t kShownChars = 40;
    throw CommandError(code::kOverflow, "the path '" + std::string(dotted.substr(0, kShownChars)) +
                                            "...' has more than " +
                                            std::to_string(bson::kMaxNestingDepth) + " components");
  }
  Path parts;
  size_t start = 0;
  while (true) {
    size_t dot = dotted.find('.', start);
    if (dot == std::string_view::npos) {
      parts.emplace_back(dotted.substr(start));
      return parts;
    }
    parts.emplace_back(dotted.substr(start, dot - start));
    start = dot + 1;
  }
}

std::string join_path(const Path& path, size_t end) {
  assert(end <= path.size());
  std::string out;
  for (size_t i = 0; i < end; ++i) {
    if (i > 0) out += '.';
    out += path[i];
  }
  return out;
}

std::optional<size_t> array_index(std::string_view component) {
  // Bounded so the conversion cannot overflow; no array can be this long anyway.
  constexpr size_t kIndexDigitsMax = 9;
  if (component.empty() || component.size() > kIndexDigitsMax) return std::nullopt;
  if (component.size() > 1 && component[0] == '0') return std::nullopt;
  size_t n = 0;
  for (char c : component) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  return n;
}

namespace {

void walk(const Value* value, const Path& path, size_t i, std::vector<Candidate>& out);

void walk_array_middle(const Array& arr, const Path& path, size_t i, std::vector<Candidate>& out) {
  // "a.b" over [{b:1}, 2, {c:1}]: documents are searched (a missing b counts as missing),
  // scalars and nested arrays contribute nothing. "a.1" also selects element 1 itself.
  if (auto index = array_index(path[i])) {
    if (*index < arr.size()) walk(&arr[*index], path, i + 1, out);
  }
  for (const Value& element : arr) {
    if (element.is_document()) {
      const Value* child = element.as_document().get(path[i]);
      if (child == nullptr && array_index(path[i])) continue;  // index addressed the array
      walk(child, path, i + 1, out);
    }
  }
}

void walk(const Value* value, const Path& path, size_t i, std::vector<Candidate>& out) {
  if (i == path.size() || value == nullptr) {
    out.push_back({value, false});
    if (value != nullptr && value->is_array()) {
      for (const Value& element : value->as_array()) out.push_back({&element, true});
    }
    return;
  }
  if (value->is_document()) {
    walk(value->as_document().get(path[i]), path, i + 1, out);
  } else if (value->is_array()) {
    walk_array_middle(value->as_array(), path, i, out);
  } else {
    out.push_back({nullptr, false});  // a scalar has no sub-fields: the path is missing
  }
}

}  // namespace

void collect_candidates(const Document& doc, const Path& path, std::vector<Candidate>& out) {
  assert(!path.empty());
  walk(doc.get(path[0]), path, 1, out);
}

const Value* lookup_exact(const Document& doc, const Path& path) {
  assert(!path.empty());
  const Value* current = doc.get(path[0]);
  for (size_t i = 1; i < path.size() && current != nullptr; ++i) {
    if (current->is_document()) {
      current = current->as_document().get(path[i]);
    } else if (current->is_array()) {
      auto index = array_index(path[i]);
      const Array& arr = current->as_array();
      current = index && *index < arr.size() ? &arr[*index] : nullptr;
    } else {
      current = nullptr;
    }
  }
  return current;
}

}  // namespace mongosim::query
