#include "query/update_description.h"

#include <bit>
#include <cassert>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>

#include "bson/codec.h"

namespace mongosim::query {

namespace {

// mongod pads a top-level delta by the bytes of its {$v: 2, diff: ...} wrapper when it decides
// between a delta and a replacement (update_oplog_entry::kSizeOfDeltaOplogEntryMetadata).
constexpr size_t kDeltaEntryOverheadBytes = 15;
// BSON framing: an int32 length and a terminating NUL per document; a type byte and a NUL after
// each field name per element.
constexpr size_t kDocumentFramingBytes = 5;
constexpr size_t kElementFramingBytes = 2;

// The payload size of a value inside a document (what follows its field name).
size_t value_bytes(const Value& v) {
  return bson::encoded_size(v);
}

size_t element_bytes(std::string_view name, const Value& v) {
  return kElementFramingBytes + name.size() + value_bytes(v);
}

// Exact equality as mongod's binaryEqual: same type, same bytes (so 1 and 1.0, or 0.0 and -0.0,
// differ).
bool binary_equal(const Value& a, const Value& b) {
  if (a.type() == bson::Type::kDouble && b.type() == bson::Type::kDouble) {
    return std::bit_cast<uint64_t>(a.as_double()) == std::bit_cast<uint64_t>(b.as_double());
  }
  if (a.type() != b.type()) return false;
  if (a.is_document()) {
    const Document& x = a.as_document();
    const Document& y = b.as_document();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x.at(i).first != y.at(i).first || !binary_equal(x.at(i).second, y.at(i).second))
        return false;
    }
    return true;
  }
  if (a.is_array()) {
    const Array& x = a.as_array();
    const Array& y = b.as_array();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!binary_equal(x[i], y[i])) return false;
    }
    return true;
  }
  return a.identical(b);
}

struct Node;
using Child = std::unique_ptr<Node>;

// One level of a delta: for a document, updated, inserted and deleted fields and sub-deltas; for
// an array, updated elements, sub-deltas by index and a new (shorter) length.
struct Node {
  bool is_array = false;
  size_t padding = 0;
  std::vector<std::pair<std::string, Value>> updates;
  std::vector<std::pair<std::string, Value>> inserts;
  std::vector<std::string> deletes;
  std::vector<std::pair<std::string, Child>> children;  // name or index, in diff order
  std::optional<int32_t> new_size;
  // Array entries in index order: either an update (value) or a child.
  std::vector<std::pair<size_t, std::variant<Value, Child>>> elements;

  // The delta's BSON size in mongod's $v: 2 form: a document level is {d: {f: false}, u: {f: v},
  // i: {f: v}, s<f>: <child>}, an array level {a: true, l: n, u<i>: v, s<i>: <child>}.
  // Computed once: each level asks it of its children while it is built, and a node is never
  // changed once its parent (or describe_pipeline_update) has asked.
  size_t bytes() const;

 private:
  size_t compute_bytes() const;
  mutable std::optional<size_t> bytes_;
};

size_t section_bytes(const std::vector<std::pair<std::string, Value>>& fields) {
  if (fields.empty()) return 0;
  size_t inner = kDocumentFramingBytes;
  for (const auto& [name, v] : fields) inner += element_bytes(name, v);
  return kElementFramingBytes + 1 + inner;  // the one-letter section name
}

size_t Node::bytes() const {
  if (!bytes_) bytes_ = compute_bytes();
  return *bytes_;
}

size_t Node::compute_bytes() const {
  constexpr size_t kBoolBytes = 1;
  constexpr size_t kInt32Bytes = 4;
  size_t total = kDocumentFramingBytes + padding;
  if (is_array) {
    total += kElementFramingBytes + 1 + kBoolBytes;  // a: true
    if (new_size) total += kElementFramingBytes + 1 + kInt32Bytes;
    for (const auto& [index, entry] : elements) {
      const size_t name_bytes = 1 + bson::index_name_bytes(index);  // "u<i>" or "s<i>"
      if (const Value* v = std::get_if<Value>(&entry)) {
        total += kElementFramingBytes + name_bytes + value_bytes(*v);
      } else {
        total += kElementFramingBytes + name_bytes + std::get<Child>(entry)->bytes();
      }
    }
    return total;
  }
  if (!deletes.empty()) {
    size_t inner = kDocumentFramingBytes;
    for (const auto& name : deletes) inner += kElementFramingBytes + name.size() + kBoolBytes;
    total += kElementFramingBytes + 1 + inner;
  }
  total += section_bytes(updates) + section_bytes(inserts);
  for (const auto& [name, child] : children) {
    total += kElementFramingBytes + 1 + name.size() + child->bytes();
  }
  return total;
}

Child diff_documents(const Document& pre, const Document& post, bool bounded, size_t padding);
Child diff_arrays(const Array& pre, const Array& post, bool bounded);

// The delta of two values of the same container type, or null when it is bounded and not
// smaller than the new value (the caller then records the new value whole).
Child diff_values(const Value& pre, const Value& post, bool bounded) {
  Child child = pre.is_document()
                    ? diff_documents(pre.as_document(), post.as_document(), bounded, 0)
                    : diff_arrays(pre.as_array(), post.as_array(), bounded);
  if (bounded && child->bytes() >= value_bytes(post)) return nullptr;
  return child;
}

bool same_container_type(const Value& a, const Value& b) {
  return a.type() == b.type() && (a.is_document() || a.is_array());
}

Child diff_documents(const Document& pre, const Document& post, bool bounded, size_t padding) {
  auto node = std::make_unique<Node>();
  node->padding = padding;
  std::set<std::string> moved_or_deleted;  // deleted unless they come back among the inserts
  size_t i = 0;
  size_t j = 0;
  while (i < pre.size() && j < post.size()) {
    const auto& [pre_name, pre_value] = pre.at(i);
    const auto& [post_name, post_value] = post.at(j);
    if (pre_name != post_name) {
      // Not at this place any more: deleted, or inserted again further down.
      moved_or_deleted.insert(pre_name);
      ++i;
      continue;
    }
    if (!binary_equal(pre_value, post_value)) {
      Child child;
      if (same_container_type(pre_value, post_value))
        child = diff_values(pre_value, post_value, bounded);
      if (child) {
        node->children.emplace_back(pre_name, std::move(child));
      } else {
        node->updates.emplace_back(post_name, post_value);
      }
    }
    ++i;
    ++j;
  }
  for (; i < pre.size(); ++i) node->deletes.push_back(pre.at(i).first);
  for (; j < post.size(); ++j) {
    node->inserts.emplace_back(post.at(j).first, post.at(j).second);
    moved_or_deleted.erase(post.at(j).first);
  }
  for (const auto& name : moved_or_deleted) node->deletes.push_back(name);
  return node;
}

Child diff_arrays(const Array& pre, const Array& post, bool bounded) {
  auto node = std::make_unique<Node>();
  node->is_array = true;
  size_t n = std::min(pre.size(), post.size());
  for (size_t k = 0; k < n; ++k) {
    if (binary_equal(pre[k], post[k])) continue;
    Child child;
    if (same_container_type(pre[k], post[k])) child = diff_values(pre[k], post[k], bounded);
    if (child) {
      node->elements.emplace_back(k, std::move(child));
    } else {
      node->elements.emplace_back(k, post[k]);
    }
  }
  for (size_t k = n; k < post.size(); ++k) node->elements.emplace_back(k, post[k]);
  if (pre.size() > post.size()) node->new_size = static_cast<int32_t>(post.size());
  return node;
}

std::string join(const std::string& prefix, std::string_view name) {
  return prefix.empty() ? std::string(name) : prefix + "." + std::string(name);
}

// Renders a delta as a change stream does: each level's updated and inserted fields, then its
// deleted ones, then its children, depth first.
void render(const Node& node, const std::string& path, UpdateDescription& out) {
  if (node.is_array) {
    assert(!path.empty());
    if (node.new_size) {
      out.truncated_arrays.push_back(
          bson::V(Document{{"field", bson::V(path)}, {"newSize", bson::V(*node.new_size)}}));
    }
    for (const auto& [index, entry] : node.elements) {
      std::string at = join(path, std::to_string(index));
      if (const Value* v = std::get_if<Value>(&entry)) {
        out.updated_fields.append(at, *v);
      } else {
        render(*std::get<Child>(entry), at, out);
      }
    }
    return;
  }
  for (const auto& [name, v] : node.updates) out.updated_fields.append(join(path, name), v);
  for (const auto& [name, v] : node.inserts) out.updated_fields.append(join(path, name), v);
  for (const auto& name : node.deletes) out.removed_fields.push_back(bson::V(join(path, name)));
  for (const auto& [name, child] : node.children) render(*child, join(path, name), out);
}

}  // namespace

Document UpdateDescription::to_document() const {
  return Document{{"updatedFields", bson::V(updated_fields)},
                  {"removedFields", bson::V(removed_fields)},
                  {"truncatedArrays", bson::V(truncated_arrays)}};
}

UpdateDescription describe_operator_update(const Document& pre, const Document& post) {
  UpdateDescription out;
  render(*diff_documents(pre, post, false, 0), "", out);
  return out;
}

std::optional<UpdateDescription> describe_pipeline_update(const Document& pre,
                                                          const Document& post) {
  Child delta = diff_documents(pre, post, true, kDeltaEntryOverheadBytes);
  if (delta->bytes() >= bson::encoded_size(post)) return std::nullopt;
  UpdateDescription out;
  render(*delta, "", out);
  return out;
}

}  // namespace mongosim::query
