// createIndexes, listIndexes, listCollections, listDatabases, create, drop and dropDatabase
// (docs/mongodb-behaviour.md, Catalog commands).
#include <deque>
#include <limits>
#include <string>

#include "bson/codec.h"
#include "data/command_args.h"
#include "data/store_impl.h"

namespace mongosim::data {

namespace {

// "a_1_b_-1": the name drivers and the shell generate for a key pattern.
std::string default_index_name(const bson::Document& key) {
  std::string name;
  for (const auto& [field, dir] : key) {
    if (!name.empty()) name += "_";
    name += field + "_";
    if (dir.is_string()) {
      name += dir.as_string();
    } else {
      auto exact = dir.number_as_exact_int64();
      name += exact ? std::to_string(*exact) : bson::to_json(dir);
    }
  }
  return name;
}

}  // namespace

IndexSpec parse_index_spec(const bson::Value& raw) {
  if (!raw.is_document()) {
    throw CommandError(code::kTypeMismatch, "The elements of the 'indexes' array must be objects");
  }
  const bson::Document& d = raw.as_document();
  IndexSpec spec;
  const bson::Value* key = d.get("key");
  if (key == nullptr || !key->is_document()) {
    throw CommandError(code::kFailedToParse,
                       "The 'key' field is a required property of an index specification");
  }
  if (key->as_document().empty()) {
    throw CommandError(code::kCannotCreateIndex, "Index keys cannot be empty.");
  }
  for (const auto& [field, dir] : key->as_document()) {
    if (field.empty() || !dir.is_number() || dir.number_as_double() == 0) {
      throw CommandError(code::kCannotCreateIndex,
                         "Values in the index key pattern can only be non-zero numbers; field '" +
                             field + "' has " + bson::to_json(dir));
    }
  }
  spec.key = key->as_document();
  if (const bson::Value* name = d.get("name")) {
    if (!name->is_string()) throw wrong_type("createIndexes.indexes", "name", *name, " 'string'");
    spec.name = name->as_string();
  } else {
    spec.name = default_index_name(spec.key);
  }
  spec.unique = bool_field(d, "createIndexes.indexes", "unique").value_or(false);
  spec.sparse = bool_field(d, "createIndexes.indexes", "sparse").value_or(false);
  if (const bson::Value* ttl = d.get("expireAfterSeconds")) {
    if (!ttl->is_number()) {
      throw CommandError(code::kCannotCreateIndex,
                         "TTL index 'expireAfterSeconds' option must be numeric, but received a "
                         "type of '" +
                             std::string(bson::type_name(ttl->type())) + "'");
    }
    // mongod takes [0, 2^31 - 1] seconds; beyond it (or NaN) is refused, not cast.
    std::optional<int64_t> secs = ttl->number_as_truncated_int64();
    if (!secs || *secs > std::numeric_limits<int32_t>::max()) {
      throw CommandError(code::kCannotCreateIndex,
                         "TTL index 'expireAfterSeconds' option must be within an acceptable "
                         "range, try a lower number");
    }
    spec.expire_after_secs = *secs;
    if (*spec.expire_after_secs < 0) {
      throw CommandError(code::kCannotCreateIndex,
                         "TTL index 'expireAfterSeconds' option cannot be less than 0");
    }
    if (spec.key.size() != 1) {
      throw CommandError(code::kCannotCreateIndex,
                         "TTL indexes are single-field indexes, compound indexes do not support "
                         "TTL. Index spec: " +
                             bson::to_json(d));
    }
  }
  bool is_id = spec.key.size() == 1 && spec.key.at(0).first == "_id";
  if (is_id && (spec.unique || spec.expire_after_secs || spec.sparse)) {
    throw CommandError(code::kInvalidOptions,
                       "The field '" +
                           std::string(spec.unique   ? "unique"
                                       : spec.sparse ? "sparse"
                                                     : "expireAfterSeconds") +
                           "' is not valid for an _id index specification. "
                           "Specification: " +
                           bson::to_json(d));
  }
  return spec;
}

namespace {

bool same_options(const IndexSpec& a, const IndexSpec& b) {
  return a.unique == b.unique && a.sparse == b.sparse && a.expire_after_secs == b.expire_after_secs;
}

// True if `spec` already exists identically; throws 85/86 for a conflicting one.
bool index_exists(const Collection& c, const IndexSpec& spec) {
  for (const auto& existing : c.indexes()) {
    bool same_key = existing.key.identical(spec.key);
    bool same_name = existing.name == spec.name;
    if (!same_key && !same_name) continue;
    std::string detail = "Requested index: " + bson::to_json(spec.to_document()) +
                         ", existing index: " + bson::to_json(existing.to_document());
    if (same_name && !same_key) {
      throw CommandError(code::kIndexKeySpecsConflict,
                         "An existing index has the same name as the requested index. When index "
                         "names are not specified, they are auto generated and can cause "
                         "conflicts. Please refer to our documentation. " +
                             detail);
    }
    if (!same_name) {
      if (existing.name == "_id_") return true;  // {_id: 1} under another name: mongod ignores it
      throw CommandError(code::kIndexOptionsConflict,
                         "Index already exists with a different name: " + existing.name);
    }
    if (!same_options(existing, spec)) {
      throw CommandError(code::kIndexOptionsConflict,
                         "An equivalent index already exists with the same name but different "
                         "options. " +
                             detail);
    }
    return true;
  }
  return false;
}

bson::Document cmd_create_indexes(Store::Impl& impl, CommandContext& ctx) {
  std::string coll = collection_argument(ctx);
  const bson::Array& raw = required_array_field(ctx.body, "createIndexes", "indexes");
  if (raw.empty()) throw CommandError(code::kBadValue, "Must specify at least one index to create");
  std::vector<IndexSpec> specs;
  for (const auto& r : raw) specs.push_back(parse_index_spec(r));
  WriteScope scope(impl);
  scope.require_writable();
  bool created = false;
  Collection& c = impl.collection_for_write(ctx.db, coll, ctx.now_ms, &created);
  auto before = static_cast<int32_t>(c.indexes().size());
  std::vector<IndexSpec> fresh;
  for (auto& spec : specs) {
    if (!index_exists(c, spec)) fresh.push_back(std::move(spec));
  }
  if (created) ctx.last_write_optime = impl.oplog.last_optime();
  bson::Document reply{{"numIndexesBefore", bson::V(before)}};
  if (fresh.empty()) {
    reply.append("numIndexesAfter", bson::V(before));
    reply.append("note", bson::V("all indexes already exist"));
    return reply;
  }
  for (auto& spec : fresh) {
    bson::Document o{{"createIndexes", bson::V(coll)}};
    for (const auto& [k, v] : spec.to_document()) o.append(k, v);
    impl.before_write_change();
    c.add_index(std::move(spec));  // throws DuplicateKey over existing duplicates
    ctx.last_write_optime = impl.log_command(ctx.db, c.uuid(), std::move(o), ctx.now_ms);
  }
  reply.append("numIndexesAfter", bson::V(static_cast<int32_t>(c.indexes().size())));
  reply.append("createdCollectionAutomatically", bson::V(created));
  reply.append("commitQuorum", bson::V("votingMembers"));
  return reply;
}

int64_t batch_size_of(const CommandContext& ctx, const char* cmd) {
  const bson::Document* cursor = document_field(ctx.body, cmd, "cursor");
  if (cursor == nullptr) return CursorManager::kDefaultBatchSize;
  auto b = int_field(*cursor, "cursor", "batchSize");
  return b.value_or(CursorManager::kDefaultBatchSize);
}

bson::Document cmd_list_indexes(Store::Impl& impl, CommandContext& ctx) {
  std::string coll = collection_argument(ctx);
  std::deque<bson::Document> docs;
  {
    std::lock_guard lock(impl.mu);
    Collection* c = impl.find_collection(ctx.db, coll);
    if (c == nullptr) {
      throw CommandError(code::kNamespaceNotFound, "ns does not exist: " + ctx.db + "." + coll);
    }
    for (const auto& spec : c->indexes()) docs.push_back(spec.to_document());
  }
  // mongod names this cursor's namespace "db.$cmd.listIndexes.<coll>" (docs/mongodb-behaviour.md,
  // Reads and cursors).
  return impl.cursors.open(ctx.db + ".$cmd.listIndexes." + coll, std::move(docs),
                           batch_size_of(ctx, "listIndexes"), false, impl.options.clock->now_ms());
}

bson::Document collection_info(const Collection& c, bool name_only) {
  if (name_only) {
    return bson::Document{{"name", bson::V(c.name())}, {"type", bson::V("collection")}};
  }
  return bson::Document{
      {"name", bson::V(c.name())},
      {"type", bson::V("collection")},
      {"options", bson::V(bson::Document{})},
      {"info", bson::V(bson::Document{{"readOnly", bson::V(false)}, {"uuid", c.uuid()}})},
      {"idIndex", bson::V(c.indexes()[0].to_document())}};
}

bson::Document cmd_list_collections(Store::Impl& impl, CommandContext& ctx) {
  validate_db_name(ctx.db);
  bson::Document filter;
  if (const bson::Document* f = document_field(ctx.body, "listCollections", "filter")) filter = *f;
  query::Matcher m = query::Matcher::parse(filter);
  bool name_only = bool_field(ctx.body, "listCollections", "nameOnly").value_or(false);
  query::EvalContext ectx = impl.eval_context(ctx);
  std::deque<bson::Document> docs;
  {
    std::lock_guard lock(impl.mu);
    auto db = impl.dbs.find(ctx.db);
    if (db != impl.dbs.end()) {
      for (const auto& [name, c] : db->second) {
        bson::Document info = collection_info(*c, name_only);
        if (m.matches(info, ectx)) docs.push_back(std::move(info));
      }
    }
  }
  return impl.cursors.open(ctx.db + ".$cmd.listCollections", std::move(docs),
                           batch_size_of(ctx, "listCollections"), false, ectx.now_ms);
}

bson::Document cmd_list_databases(Store::Impl& impl, CommandContext& ctx) {
  bool name_only = bool_field(ctx.body, "listDatabases", "nameOnly").value_or(false);
  bson::Array dbs;
  int64_t total = 0;
  std::lock_guard lock(impl.mu);
  for (const auto& [name, db] : impl.dbs) {
    if (db.empty()) continue;
    int64_t bytes = 0;
    for (const auto& [cname, c] : db) {
      for (const auto& [rid, doc] : c->records()) {
        bytes += static_cast<int64_t>(bson::encoded_size(doc));
      }
    }
    total += bytes;
    bson::Document entry{{"name", bson::V(name)}};
    if (!name_only) {
      entry.append("sizeOnDisk", bson::V(bytes));
      entry.append("empty", bson::V(bytes == 0));
    }
    dbs.push_back(bson::V(std::move(entry)));
  }
  bson::Document reply{{"databases", bson::V(std::move(dbs))}};
  if (!name_only) {
    reply.append("totalSize", bson::V(total));
    reply.append("totalSizeMb", bson::V(total / (1024 * 1024)));
  }
  return reply;
}

bson::Document cmd_create(Store::Impl& impl, CommandContext& ctx) {
  std::string coll = collection_argument(ctx);
  WriteScope scope(impl);
  scope.require_writable();
  bool created = false;
  impl.collection_for_write(ctx.db, coll, ctx.now_ms, &created);
  if (created) ctx.last_write_optime = impl.oplog.last_optime();
  return bson::Document{};
}

bson::Document cmd_drop(Store::Impl& impl, CommandContext& ctx) {
  std::string coll = collection_argument(ctx);
  bson::Document reply;
  {
    WriteScope scope(impl);
    scope.require_writable();
    Collection* c = impl.find_collection(ctx.db, coll);
    // Since 7.0 dropping a missing collection succeeds (docs/mongodb-behaviour.md, Catalog
    // commands).
    if (c == nullptr) return reply;
    impl.before_write_change();
    reply.append("nIndexesWas", bson::V(static_cast<int32_t>(c->indexes().size())));
    reply.append("ns", bson::V(c->ns()));
    bson::Value ui = c->uuid();
    auto& db = impl.dbs[ctx.db];
    db.erase(coll);
    if (db.empty()) impl.dbs.erase(ctx.db);
    ctx.last_write_optime =
        impl.log_command(ctx.db, ui, bson::Document{{"drop", bson::V(coll)}}, ctx.now_ms);
  }
  impl.cursors.kill_namespace_prefix(ctx.db + "." + coll);
  return reply;
}

bson::Document cmd_drop_database(Store::Impl& impl, CommandContext& ctx) {
  validate_db_name(ctx.db);
  bson::Document reply;
  {
    WriteScope scope(impl);
    scope.require_writable();
    auto db = impl.dbs.find(ctx.db);
    if (db == impl.dbs.end()) return reply;
    impl.before_write_change();
    // mongod drops each collection first, each with its own oplog entry, then logs the database's
    // drop; change streams report them in that order (docs/mongodb-behaviour.md, Change streams).
    for (const auto& [name, coll] : db->second) {
      impl.log_command(ctx.db, coll->uuid(), bson::Document{{"drop", bson::V(name)}}, ctx.now_ms);
    }
    impl.dbs.erase(db);
    ctx.last_write_optime =
        impl.log_command(ctx.db, bson::Value::null(),
                         bson::Document{{"dropDatabase", bson::V(int32_t{1})}}, ctx.now_ms);
    reply.append("dropped", bson::V(ctx.db));
  }
  impl.cursors.kill_namespace_prefix(ctx.db + ".");
  return reply;
}

}  // namespace

void register_catalog_commands(Store::Impl& impl, CommandRegistry& registry) {
  auto add = [&](std::string name, bson::Document (*fn)(Store::Impl&, CommandContext&),
                 bool is_write, bool admin_only = false) {
    CommandSpec s;
    s.name = std::move(name);
    s.handler = [&impl, fn](CommandContext& ctx) { return fn(impl, ctx); };
    s.is_write = is_write;
    s.secondary_ok = !is_write;
    s.admin_only = admin_only;
    registry.add(std::move(s));
  };
  add("createIndexes", cmd_create_indexes, true);
  add("listIndexes", cmd_list_indexes, false);
  add("listCollections", cmd_list_collections, false);
  add("listDatabases", cmd_list_databases, false, true);
  add("create", cmd_create, true);
  add("drop", cmd_drop, true);
  add("dropDatabase", cmd_drop_database, true);
}

}  // namespace mongosim::data
