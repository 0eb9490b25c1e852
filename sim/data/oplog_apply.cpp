// Applying fetched oplog entries on a secondary, and the new primary's no-op. Entries arrive in
// the shape OplogEntry::to_document() produces on the sync source.
#include <cassert>
#include <stdexcept>

#include "base/error_codes.h"
#include "data/store.h"
#include "data/store_impl.h"

namespace mongosim::data {

namespace {

[[noreturn]] void bad_entry(const std::string& field) {
  throw CommandError(code::kBadValue, "oplog entry field '" + field + "' is missing or invalid");
}

const bson::Value& field(const bson::Document& entry, const char* name) {
  const bson::Value* v = entry.get(name);
  if (v == nullptr) bad_entry(name);
  return *v;
}

const bson::Document& document_field(const bson::Document& entry, const char* name) {
  const bson::Value& v = field(entry, name);
  if (!v.is_document()) bad_entry(name);
  return v.as_document();
}

std::pair<std::string, std::string> split_ns(const std::string& ns) {
  size_t dot = ns.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == ns.size()) bad_entry("ns");
  return {ns.substr(0, dot), ns.substr(dot + 1)};
}

// A whole number in [min, max]; nullopt for any other value (a cast of 1e300 is undefined).
std::optional<int64_t> whole_in(const bson::Value& v, int64_t min, int64_t max) {
  std::optional<int64_t> n = v.is_number() ? v.number_as_exact_int64() : std::nullopt;
  if (n && (*n < min || *n > max)) n.reset();
  return n;
}

OplogEntry parse_entry(const bson::Document& doc) {
  OplogEntry e;
  const bson::Value& ts = field(doc, "ts");
  const bson::Value& t = field(doc, "t");
  if (ts.type() != bson::Type::kTimestamp) bad_entry("ts");
  // A sync source's numbers are checked before they are converted: 1e300 is no term.
  const std::optional<int64_t> term = whole_in(t, -1, kMaxTerm);
  if (!term) bad_entry("t");
  e.optime = OpTime{ts.as_timestamp(), *term};
  const bson::Value& op = field(doc, "op");
  if (!op.is_string() || op.as_string().size() != 1) bad_entry("op");
  e.op = op.as_string()[0];
  const bson::Value& ns = field(doc, "ns");
  if (!ns.is_string()) bad_entry("ns");
  e.ns = ns.as_string();
  if (const bson::Value* ui = doc.get("ui")) e.ui = *ui;
  e.o = document_field(doc, "o");
  if (doc.has("o2")) e.o2 = document_field(doc, "o2");
  if (const bson::Value* kind = doc.get("updateKind")) {
    auto parsed = kind->is_string() ? parse_update_kind(kind->as_string()) : std::nullopt;
    if (!parsed) bad_entry("updateKind");
    e.update_kind = *parsed;
  }
  if (const bson::Value* wall = doc.get("wall");
      wall != nullptr && wall->type() == bson::Type::kDateTime)
    e.wall_ms = wall->as_date_ms();
  const bson::Value* lsid = doc.get("lsid");
  const bson::Value* txn = doc.get("txnNumber");
  const bson::Value* stmt = doc.get("stmtId");
  if (lsid != nullptr && txn != nullptr && stmt != nullptr) {
    // A txnNumber is a non-negative long, a stmtId an int (not 2^32 + 1, which is no statement).
    const std::optional<int64_t> txn_number = whole_in(*txn, 0, INT64_MAX);
    const std::optional<int64_t> stmt_id = whole_in(*stmt, INT32_MIN, INT32_MAX);
    if (!txn_number) bad_entry("txnNumber");
    if (!stmt_id) bad_entry("stmtId");
    e.statement = StatementId{*lsid, *txn_number, static_cast<int32_t>(*stmt_id)};
  }
  return e;
}

Collection& collection_for_apply(Store::Impl& impl, const std::string& ns, const bson::Value& ui) {
  auto [db, coll] = split_ns(ns);
  if (Collection* c = impl.find_collection(db, coll)) return *c;
  auto owned = std::make_unique<Collection>(db, coll, ui);
  Collection& c = *owned;
  impl.dbs[db].emplace(coll, std::move(owned));
  return c;
}

const bson::Value& id_of(const bson::Document& doc, const char* where) {
  const bson::Value* id = doc.get("_id");
  if (id == nullptr) bad_entry(std::string(where) + "._id");
  return *id;
}

// A createIndexes entry's index, built here too: secondaries serve TTL and unique indexes after
// they become primary, and journal replay rebuilds the catalog from these entries.
void apply_create_index(Collection& c, const bson::Document& o) {
  bson::Document spec;
  for (const auto& [k, v] : o) {
    if (k != "createIndexes") spec.append(k, v);
  }
  IndexSpec parsed = parse_index_spec(bson::V(std::move(spec)));
  for (const auto& existing : c.indexes()) {
    if (existing.name == parsed.name) return;  // re-applied
  }
  c.add_index(std::move(parsed));
}

// The change itself, idempotently. Unique secondary indexes are not checked: a secondary applies
// with them relaxed, as mongod's does (after a rollback, entries replayed over the source's
// refetched documents can collide for a while; refusing them stalled the member for good). The
// entries come from another process or a file, so what the collection itself asserts is checked:
// an update whose document names another _id than the one it updates is a bad entry.
void apply_change(Store::Impl& impl, OplogEntry& e) {
  switch (e.op) {
    case 'i': {
      Collection& c = collection_for_apply(impl, e.ns, e.ui);
      const std::optional<RecordId> rid = c.find_id(id_of(e.o, "o"));
      if (rid) {
        c.replace(*rid, e.o);
      } else {
        c.insert(e.o);
      }
      return;
    }
    case 'u': {
      if (!e.o2) bad_entry("o2");
      Collection& c = collection_for_apply(impl, e.ns, e.ui);
      const bson::Value& id = id_of(*e.o2, "o2");
      if (query::compare_values(id_of(e.o, "o"), id) != 0) bad_entry("o._id");
      const std::optional<RecordId> rid = c.find_id(id);
      if (rid) {
        e.pre_image = c.get(*rid);  // majority reads undo the change with it (read_as_of.h)
        c.replace(*rid, e.o);
      } else {
        c.insert(e.o);
      }
      return;
    }
    case 'd': {
      Collection& c = collection_for_apply(impl, e.ns, e.ui);
      if (auto rid = c.find_id(id_of(e.o, "o"))) {
        e.pre_image = c.get(*rid);
        c.erase(*rid);
      }
      return;
    }
    case 'c': {
      auto [db, suffix] = split_ns(e.ns);
      if (const bson::Value* create = e.o.get("create"); create != nullptr && create->is_string()) {
        collection_for_apply(impl, db + "." + create->as_string(), e.ui);
      } else if (const bson::Value* drop = e.o.get("drop"); drop != nullptr && drop->is_string()) {
        if (auto it = impl.dbs.find(db); it != impl.dbs.end()) {
          it->second.erase(drop->as_string());
          if (it->second.empty()) impl.dbs.erase(it);
        }
      } else if (e.o.has("dropDatabase")) {
        impl.dbs.erase(db);
      } else if (const bson::Value* index = e.o.get("createIndexes");
                 index != nullptr && index->is_string()) {
        apply_create_index(collection_for_apply(impl, db + "." + index->as_string(), e.ui), e.o);
      }
      // Index builds and other catalog entries only matter on a primary; they are logged below.
      return;
    }
    case 'n':
      return;
    default:
      bad_entry("op");
  }
}

}  // namespace

bool Store::has_oplog_entry(OpTime optime) const {
  std::lock_guard lock(impl_->mu);
  return impl_->holds_entry(optime);
}

void Store::apply_oplog_entry(const bson::Document& doc) {
  OplogEntry e = parse_entry(doc);
  std::lock_guard lock(impl_->mu);
  // Full optimes, term first: an entry of an older term with a larger timestamp is not newer.
  if (!impl_->oplog.last_optime().is_null() && !(impl_->oplog.last_optime() < e.optime)) {
    return;  // already applied
  }
  impl_->check_journal_capacity();
  apply_change(*impl_, e);
  if (e.statement && (e.op == 'i' || e.op == 'u' || e.op == 'd')) {
    // A retried write that reaches this member after it becomes primary must find its result.
    ExecutedStatement record;
    record.op = e.op;
    record.optime = e.optime;
    std::string key = SessionTable::key_of(e.statement->lsid);
    try {
      impl_->sessions.begin(key, e.statement->txn_number);
      impl_->sessions.record(key, e.statement->txn_number, e.statement->stmt_id, std::move(record));
    } catch (const CommandError&) {
      // A newer transaction already started on this session: the old statement cannot be
      // retried any more, so there is nothing to remember.
    }
  }
  impl_->oplog_append(std::move(e));
}

OpTime Store::append_noop(const std::string& message, int64_t term) {
  std::lock_guard lock(impl_->mu);
  int64_t now_ms = impl_->options.clock->now_ms();
  if (impl_->oplog.last_optime().term > term) {
    throw std::logic_error("the oplog already ends in term " +
                           std::to_string(impl_->oplog.last_optime().term) +
                           ", after the no-op's term " + std::to_string(term));
  }
  OplogEntry e;
  e.op = 'n';
  e.ns = "";
  e.o = bson::Document{{"msg", bson::V(message)}};
  e.optime = impl_->oplog.next_optime(now_ms, term);
  e.wall_ms = now_ms;
  OpTime optime = e.optime;
  impl_->check_journal_capacity();
  impl_->oplog_append(std::move(e));
  assert(optime.term == term);
  return optime;
}

}  // namespace mongosim::data
