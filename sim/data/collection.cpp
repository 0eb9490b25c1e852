#include "data/collection.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <set>

#include "bson/codec.h"
#include "query/query.h"

namespace mongosim::data {

bool ValueLess::operator()(const bson::Value& a, const bson::Value& b) const {
  return query::compare_values(a, b) < 0;
}

bool IndexKeyLess::operator()(const IndexKey& a, const IndexKey& b) const {
  assert(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    int c = query::compare_values(a[i], b[i]);
    if (c != 0) return c < 0;
  }
  return false;
}

bson::Document IndexSpec::to_document() const {
  bson::Document d{{"v", bson::V(int32_t{2})}, {"key", bson::V(key)}, {"name", bson::V(name)}};
  if (unique) d.append("unique", bson::V(true));
  if (sparse) d.append("sparse", bson::V(true));
  if (expire_after_secs) d.append("expireAfterSeconds", bson::V(*expire_after_secs));
  return d;
}

std::string format_key_value(const bson::Value& v) {
  switch (v.type()) {
    case bson::Type::kString:
      return "\"" + v.as_string() + "\"";
    case bson::Type::kInt32:
      return std::to_string(v.as_int32());
    case bson::Type::kInt64:
      return std::to_string(v.as_int64());
    case bson::Type::kDouble: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", v.as_double());
      return buf;
    }
    case bson::Type::kBool:
      return v.as_bool() ? "true" : "false";
    case bson::Type::kNull:
      return "null";
    case bson::Type::kObjectId:
      return "ObjectId('" + v.as_object_id().hex() + "')";
    case bson::Type::kDateTime:
      return "new Date(" + std::to_string(v.as_date_ms()) + ")";
    case bson::Type::kDocument: {
      std::string out = "{ ";
      bool first = true;
      for (const auto& [k, fv] : v.as_document()) {
        out += (first ? "" : ", ") + k + ": " + format_key_value(fv);
        first = false;
      }
      return out + (first ? "}" : " }");
    }
    case bson::Type::kArray: {
      std::string out = "[ ";
      bool first = true;
      for (const auto& e : v.as_array()) {
        out += (first ? "" : ", ") + format_key_value(e);
        first = false;
      }
      return out + (first ? "]" : " ]");
    }
    default:
      return bson::to_json(v);
  }
}

Collection::Collection(std::string db, std::string name, bson::Value uuid)
    : db_(std::move(db)), name_(std::move(name)), ns_(db_ + "." + name_), uuid_(std::move(uuid)) {
  IndexSpec id_index;
  id_index.name = "_id_";
  id_index.key = bson::Document{{"_id", bson::V(int32_t{1})}};
  indexes_.push_back(std::move(id_index));
  unique_.emplace_back();
}

std::optional<RecordId> Collection::find_id(const bson::Value& id) const {
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return std::nullopt;
  return it->second;
}

const bson::Document& Collection::get(RecordId rid) const {
  auto it = records_.find(rid);
  assert(it != records_.end());
  return it->second;
}

namespace {

// Whether walking `dotted` from `doc` meets an array (its values then fan out: a multikey path).
bool path_meets_array(const bson::Document& doc, const std::string& dotted) {
  const bson::Document* at = &doc;
  size_t from = 0;
  while (true) {
    const size_t dot = dotted.find('.', from);
    const bson::Value* v =
        at->get(dotted.substr(from, dot == std::string::npos ? dot : dot - from));
    if (v == nullptr) return false;
    if (v->is_array()) return true;
    if (dot == std::string::npos || !v->is_document()) return false;
    at = &v->as_document();
    from = dot + 1;
  }
}

}  // namespace

// Multikey expansion: a field holding an array contributes one key per element, an empty
// array contributes undefined, a missing field contributes null (so a unique index refuses a
// second document without the field, as mongod's non-sparse unique indexes do).
// At most one field of a compound key may meet an array (171 otherwise, as mongod: the keys
// would be the product of the arrays).
std::vector<IndexKey> Collection::keys_for(const IndexSpec& spec, const bson::Document& doc) const {
  std::vector<IndexKey> keys{IndexKey{}};
  bool any_present = false;
  // The field whose values fan out (an array on its path): mongod indexes at most one per
  // compound key, so the keys stay as many as that array's elements, never a product of arrays.
  const std::string* fanned_out = nullptr;
  for (const auto& [path, direction] : spec.key) {
    (void)direction;
    std::vector<bson::Value> values;
    const std::vector<bson::Value> at_path = query::values_at_path(doc, path);
    const bool fans_out = path_meets_array(doc, path);
    if (fans_out && fanned_out != nullptr) {
      throw CommandError(171, "cannot index parallel arrays [" + path + "] [" + *fanned_out + "]");
    }
    if (fans_out) fanned_out = &path;
    for (const auto& v : at_path) {
      if (v.is_array()) {
        if (v.as_array().empty()) values.push_back(bson::Value::undefined());
        for (const auto& e : v.as_array()) values.push_back(e);
      } else {
        values.push_back(v);
      }
    }
    if (values.empty()) {
      values.push_back(bson::Value::null());
    } else {
      any_present = true;
    }
    std::vector<IndexKey> next;
    for (const auto& prefix : keys) {
      for (const auto& v : values) {
        IndexKey k = prefix;
        k.push_back(v);
        next.push_back(std::move(k));
      }
    }
    keys = std::move(next);
  }
  if (spec.sparse && !any_present) return {};
  std::sort(keys.begin(), keys.end(), IndexKeyLess{});
  keys.erase(std::unique(keys.begin(), keys.end(),
                         [](const IndexKey& a, const IndexKey& b) {
                           return !IndexKeyLess{}(a, b) && !IndexKeyLess{}(b, a);
                         }),
             keys.end());
  return keys;
}

CommandError Collection::duplicate_key_error(const IndexSpec& spec, const IndexKey& key) const {
  bson::Document key_value;
  std::string shown = "{ ";
  size_t i = 0;
  for (const auto& [path, direction] : spec.key) {
    (void)direction;
    key_value.append(path, key[i]);
    shown += (i == 0 ? "" : ", ") + path + ": " + format_key_value(key[i]);
    ++i;
  }
  shown += " }";
  return CommandError(
      code::kDuplicateKey,
      "E11000 duplicate key error collection: " + ns_ + " index: " + spec.name +
          " dup key: " + shown,
      bson::Document{{"keyPattern", bson::V(spec.key)}, {"keyValue", bson::V(key_value)}});
}

void Collection::check_unique(const bson::Document& doc, std::optional<RecordId> replacing) const {
  const bson::Value* id = doc.get("_id");
  assert(id != nullptr);
  auto existing = find_id(*id);
  if (existing && existing != replacing) throw duplicate_key_error(indexes_[0], IndexKey{*id});
  for (size_t i = 1; i < indexes_.size(); ++i) {
    if (!indexes_[i].unique) continue;
    for (const auto& key : keys_for(indexes_[i], doc)) {
      auto it = unique_[i].keys.find(key);
      if (it != unique_[i].keys.end() && it->second != replacing) {
        throw duplicate_key_error(indexes_[i], key);
      }
    }
  }
}

void Collection::add_keys(size_t index, const bson::Document& doc, RecordId rid) {
  for (auto& key : keys_for(indexes_[index], doc)) unique_[index].keys.emplace(std::move(key), rid);
}

void Collection::remove_keys(size_t index, const bson::Document& doc) {
  for (const auto& key : keys_for(indexes_[index], doc)) unique_[index].keys.erase(key);
}

RecordId Collection::insert(bson::Document doc) {
  RecordId rid = next_record_id_++;
  bool inserted = by_id_.emplace(*doc.get("_id"), rid).second;
  assert(inserted && "check_unique must run before insert");
  (void)inserted;
  for (size_t i = 1; i < indexes_.size(); ++i) {
    if (indexes_[i].unique) add_keys(i, doc, rid);
  }
  records_.emplace(rid, std::move(doc));
  return rid;
}

void Collection::replace(RecordId rid, bson::Document doc) {
  auto it = records_.find(rid);
  assert(it != records_.end());
  assert(query::compare_values(*it->second.get("_id"), *doc.get("_id")) == 0);
  for (size_t i = 1; i < indexes_.size(); ++i) {
    if (!indexes_[i].unique) continue;
    remove_keys(i, it->second);
    add_keys(i, doc, rid);
  }
  it->second = std::move(doc);
}

void Collection::erase(RecordId rid) {
  auto it = records_.find(rid);
  assert(it != records_.end());
  for (size_t i = 1; i < indexes_.size(); ++i) {
    if (indexes_[i].unique) remove_keys(i, it->second);
  }
  by_id_.erase(*it->second.get("_id"));
  records_.erase(it);
}

void Collection::add_index(IndexSpec spec) {
  UniqueIndex built;
  if (spec.unique) {
    for (const auto& [rid, doc] : records_) {
      for (auto& key : keys_for(spec, doc)) {
        if (!built.keys.emplace(key, rid).second) throw duplicate_key_error(spec, key);
      }
    }
  }
  indexes_.push_back(std::move(spec));
  unique_.push_back(std::move(built));
}

bool Collection::drop_index(const std::string& name) {
  for (size_t i = 1; i < indexes_.size(); ++i) {
    if (indexes_[i].name == name) {
      indexes_.erase(indexes_.begin() + static_cast<ptrdiff_t>(i));
      unique_.erase(unique_.begin() + static_cast<ptrdiff_t>(i));
      return true;
    }
  }
  return false;
}

}  // namespace mongosim::data
