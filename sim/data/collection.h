// One collection: its documents, its indexes and the unique-key maps that enforce them.
//
// Invariants:
// - every record has an _id, and `by_id` maps each _id (compared with query::compare_values)
//   to exactly one record id; `records` holds records in insertion (natural) order;
// - indexes()[0] is always the _id index "_id_";
// - every unique index's key map holds exactly the keys of the current records, so a write
//   that would duplicate a key is refused before anything changes.
//
// Thread rules: not synchronised; the Store's data mutex guards every Collection.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bson/value.h"
#include "command/command.h"

namespace mongosim::data {

// Orders values and compound keys the way MongoDB indexes do (query::compare_values).
struct ValueLess {
  bool operator()(const bson::Value& a, const bson::Value& b) const;
};
using IndexKey = std::vector<bson::Value>;
struct IndexKeyLess {
  bool operator()(const IndexKey& a, const IndexKey& b) const;
};

struct IndexSpec {
  std::string name;
  bson::Document key;  // {a: 1, b: -1}
  bool unique = false;
  bool sparse = false;
  std::optional<int64_t> expire_after_secs;
  bson::Document to_document() const;  // the listIndexes shape {v:2, key, name, ...}
};

using RecordId = uint64_t;

class Collection {
 public:
  Collection(std::string db, std::string name, bson::Value uuid);

  const std::string& ns() const { return ns_; }
  const std::string& name() const { return name_; }
  const bson::Value& uuid() const { return uuid_; }
  const std::vector<IndexSpec>& indexes() const { return indexes_; }
  const std::map<RecordId, bson::Document>& records() const { return records_; }
  size_t size() const { return records_.size(); }

  std::optional<RecordId> find_id(const bson::Value& id) const;
  const bson::Document& get(RecordId rid) const;

  // Throws DuplicateKey (11000) if `doc` would duplicate a unique key of another record
  // (`replacing` is the record being replaced, whose own keys do not count).
  void check_unique(const bson::Document& doc, std::optional<RecordId> replacing) const;

  // Mutations; callers run check_unique first (asserted in debug builds).
  RecordId insert(bson::Document doc);
  void replace(RecordId rid, bson::Document doc);
  void erase(RecordId rid);

  // Adds an index; throws DuplicateKey if a unique index meets existing duplicates.
  void add_index(IndexSpec spec);
  bool drop_index(const std::string& name);

 private:
  struct UniqueIndex {
    std::map<IndexKey, RecordId, IndexKeyLess> keys;
  };
  std::vector<IndexKey> keys_for(const IndexSpec& spec, const bson::Document& doc) const;
  CommandError duplicate_key_error(const IndexSpec& spec, const IndexKey& key) const;
  void add_keys(size_t index, const bson::Document& doc, RecordId rid);
  void remove_keys(size_t index, const bson::Document& doc);

  std::string db_;
  std::string name_;
  std::string ns_;
  bson::Value uuid_;
  RecordId next_record_id_ = 1;
  std::map<RecordId, bson::Document> records_;
  std::map<bson::Value, RecordId, ValueLess> by_id_;
  std::vector<IndexSpec> indexes_;
  std::vector<UniqueIndex> unique_;  // parallel to indexes_ (empty maps for non-unique)
};

// "E11000 duplicate key error collection: db.c index: x_1 dup key: { x: "foo" }" formatting
// of one value, as mongod prints it.
std::string format_key_value(const bson::Value& v);

}  // namespace mongosim::data
