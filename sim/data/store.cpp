#include "data/store.h"

#include <cassert>
#include <chrono>
#include <random>

#include "bson/codec.h"
#include "data/command_args.h"
#include "data/cursors.h"
#include "data/store_impl.h"

namespace mongosim::data {

namespace {

bson::Value new_uuid() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string bytes(16, '\0');
  for (auto& b : bytes) b = static_cast<char>(rng() & 0xff);
  bytes[6] = static_cast<char>((bytes[6] & 0x0f) | 0x40);  // RFC 4122 version 4
  bytes[8] = static_cast<char>((bytes[8] & 0x3f) | 0x80);
  return bson::Value::binary(4, std::move(bytes));
}

}  // namespace

std::optional<RetryableStatement> RetryScope::statement(int32_t stmt_id) const {
  if (!active()) return std::nullopt;
  return RetryableStatement{*session_key, StatementId{lsid, txn_number, stmt_id}};
}

Store::Impl::Impl(StoreOptions opts)
    : options(std::move(opts)),
      oplog(options.oplog_max_entries > 0 ? options.oplog_max_entries : Oplog::kMaxEntries),
      cursors(options.cursor_id_seed) {
  assert(options.clock != nullptr && options.failpoints != nullptr);
  signal = options.change_signal != nullptr ? options.change_signal : &own_signal;
  repl_lock = options.repl_state_lock != nullptr ? options.repl_state_lock : &own_repl_lock;
  own_repl_lock.set_unmanaged_source([this] {
    return WriteState{options.can_accept_writes(), options.current_term()};
  });
}

WriteScope::WriteScope(Store::Impl& impl) : impl_(impl), rstl_(*impl.repl_lock), lock_(impl.mu) {
  assert(impl_.write_hold == nullptr);
  impl_.write_hold = &rstl_;
}

WriteScope::~WriteScope() {
  impl_.write_hold = nullptr;
}

void WriteScope::require_writable() const {
  if (!rstl_.state().writable) {
    throw CommandError(code::kInterruptedDueToReplStateChange, "operation was interrupted");
  }
}

Collection* Store::Impl::find_collection(const std::string& db, const std::string& coll) {
  auto d = dbs.find(db);
  if (d == dbs.end()) return nullptr;
  auto c = d->second.find(coll);
  return c == d->second.end() ? nullptr : c->second.get();
}

Collection& Store::Impl::collection_for_write(const std::string& db, const std::string& coll,
                                              int64_t now_ms, bool* created) {
  if (created != nullptr) *created = false;
  if (Collection* c = find_collection(db, coll)) return *c;
  before_write_change();
  auto owned = std::make_unique<Collection>(db, coll, new_uuid());
  Collection& c = *owned;
  dbs[db].emplace(coll, std::move(owned));
  log_command(
      db, c.uuid(),
      bson::Document{{"create", bson::V(coll)}, {"idIndex", bson::V(c.indexes()[0].to_document())}},
      now_ms);
  if (created != nullptr) *created = true;
  return c;
}

void Store::Impl::before_write_change() {
  assert(write_hold != nullptr && write_hold->state().writable);
  check_journal_capacity();
  // Ended by a replication state change or by shutdown (which must end every wait).
  auto interrupted = [this] {
    return write_hold->interrupt_requested() || signal->shutting_down();
  };
  options.failpoints->pause_while_set("hangBeforeOplogAppend", interrupted);
  if (signal->shutting_down()) {
    throw CommandError(code::kInterruptedAtShutdown, "interrupted at shutdown");
  }
  if (interrupted()) {
    throw CommandError(code::kInterruptedDueToReplStateChange,
                       "operation was interrupted by a replication state change");
  }
}

std::optional<TransactionalWriteFault> Store::Impl::before_commit(const RetryableStatement* stmt) {
  if (stmt == nullptr) return std::nullopt;
  auto fault = options.failpoints->match_primary_transactional_write();
  if (!fault) return std::nullopt;
  // onPrimaryTransactionalWrite (docs/mongodb-behaviour.md, Fail points): mongod ends the client's
  // session first, then throws failBeforeCommitExceptionCode so the write unit is abandoned.
  if (fault->fail_before_commit_code) {
    if (fault->close_connection) throw CloseConnection{};
    throw CommandError(*fault->fail_before_commit_code,
                       "Failing write for txnNumber " + std::to_string(stmt->id.txn_number) +
                           " due to failpoint. The write must not be reflected.");
  }
  return fault;
}

OpTime Store::Impl::append(OplogEntry entry, const RetryableStatement* stmt,
                           ExecutedStatement record, int64_t now_ms) {
  // The term captured under the ReplStateLock, never re-read: see store_impl.h.
  assert(write_hold != nullptr && write_hold->state().writable);
  int64_t term = write_hold->state().term;
  entry.optime = oplog.next_optime(now_ms, term);
  entry.wall_ms = now_ms;
  if (stmt != nullptr) {
    entry.statement = stmt->id;
    record.optime = entry.optime;
    sessions.record(stmt->session_key, stmt->id.txn_number, stmt->id.stmt_id, std::move(record));
  }
  OpTime optime = entry.optime;
  oplog_append(std::move(entry));
  return optime;
}

void Store::Impl::check_journal_capacity() const {
  if (journal != nullptr) journal->check_capacity();
}

void Store::Impl::oplog_append(OplogEntry entry) {
  if (journal != nullptr) journal->append_entry(entry.to_document(), entry.optime);
  oplog.append(std::move(entry));
  signal->notify();  // a leaf lock: allowed under mu
}

UpdateKind update_kind_of(const query::Update& update) {
  switch (update.kind()) {
    case query::Update::Kind::kReplacement:
      return UpdateKind::kReplacement;
    case query::Update::Kind::kOperators:
      return UpdateKind::kOperators;
    case query::Update::Kind::kPipeline:
      return UpdateKind::kPipeline;
  }
  return UpdateKind::kReplacement;
}

OpTime Store::Impl::apply_insert(Collection& c, bson::Document doc, const RetryableStatement* stmt,
                                 ExecutedStatement record, int64_t now_ms) {
  before_write_change();
  c.check_unique(doc, std::nullopt);
  auto fault = before_commit(stmt);
  OplogEntry entry;
  entry.op = 'i';
  entry.ns = c.ns();
  entry.ui = c.uuid();
  entry.o = doc;
  entry.post_image = doc;
  c.insert(std::move(doc));
  OpTime t = append(std::move(entry), stmt, std::move(record), now_ms);
  if (fault && fault->close_connection) throw CloseConnection{};
  return t;
}

OpTime Store::Impl::apply_update(Collection& c, RecordId rid, bson::Document doc, UpdateKind kind,
                                 const RetryableStatement* stmt, ExecutedStatement record,
                                 int64_t now_ms) {
  before_write_change();
  c.check_unique(doc, rid);
  auto fault = before_commit(stmt);
  OplogEntry entry;
  entry.op = 'u';
  entry.ns = c.ns();
  entry.ui = c.uuid();
  entry.o = doc;  // full-document form: simple to apply and to undo with the pre-image
  entry.o2 = bson::Document{{"_id", *doc.get("_id")}};
  entry.update_kind = kind;
  entry.pre_image = c.get(rid);
  entry.post_image = doc;
  c.replace(rid, std::move(doc));
  OpTime t = append(std::move(entry), stmt, std::move(record), now_ms);
  if (fault && fault->close_connection) throw CloseConnection{};
  return t;
}

OpTime Store::Impl::apply_delete(Collection& c, RecordId rid, const RetryableStatement* stmt,
                                 ExecutedStatement record, int64_t now_ms) {
  before_write_change();
  auto fault = before_commit(stmt);
  OplogEntry entry;
  entry.op = 'd';
  entry.ns = c.ns();
  entry.ui = c.uuid();
  entry.pre_image = c.get(rid);
  entry.o = bson::Document{{"_id", *entry.pre_image->get("_id")}};
  c.erase(rid);
  OpTime t = append(std::move(entry), stmt, std::move(record), now_ms);
  if (fault && fault->close_connection) throw CloseConnection{};
  return t;
}

OpTime Store::Impl::log_command(const std::string& db, const bson::Value& ui, bson::Document o,
                                int64_t now_ms) {
  check_journal_capacity();
  OplogEntry entry;
  entry.op = 'c';
  entry.ns = db + ".$cmd";
  entry.ui = ui;
  entry.o = std::move(o);
  return append(std::move(entry), nullptr, ExecutedStatement{}, now_ms);
}

RetryScope Store::Impl::begin_retryable(const CommandContext& ctx, bool eligible) {
  RetryScope scope;
  if (!eligible || !ctx.txn_number || !ctx.lsid) return scope;
  std::string key = SessionTable::key_of(*ctx.lsid);
  scope.lease = checkout.acquire(key);
  scope.session_key = std::move(key);
  scope.lsid = *ctx.lsid;
  scope.txn_number = *ctx.txn_number;
  return scope;
}

query::EvalContext Store::Impl::eval_context(const CommandContext& ctx) const {
  query::EvalContext e;
  e.now_ms = ctx.now_ms != 0 ? ctx.now_ms : options.clock->now_ms();
  e.cluster_time = oplog.last_timestamp();  // callers may not hold mu
  // maxTimeMS bounds the command's expressions, counted from its receipt, so every statement of a
  // write shares it (the dispatcher checked its form). A getMore's is how long it awaits data (a
  // change stream's events are evaluated after that wait), not a bound.
  if (const bson::Value* max_time = ctx.body.get("maxTimeMS");
      ctx.name != "getMore" && max_time != nullptr && max_time->is_number() &&
      max_time->number_as_double() > 0) {
    e.deadline = ctx.received_at +
                 std::chrono::milliseconds(static_cast<int64_t>(max_time->number_as_double()));
  }
  return e;
}

// A document expires when any Date at the indexed path is <= now - expireAfterSeconds; non-date
// values never expire (docs/mongodb-behaviour.md, TTL monitor).
size_t Store::Impl::ttl_pass(int64_t now_ms) {
  WriteScope scope(*this);
  if (!scope.writable()) return 0;  // only the writable primary deletes
  size_t deleted = 0;
  for (auto& [db_name, db] : dbs) {
    for (auto& [coll_name, coll] : db) {
      for (const auto& index : coll->indexes()) {
        if (!index.expire_after_secs || index.key.empty()) continue;
        int64_t cutoff_ms = now_ms - *index.expire_after_secs * 1000;
        std::vector<RecordId> expired;
        for (const auto& [rid, doc] : coll->records()) {
          for (const auto& v : query::values_at_path(doc, index.key.at(0).first)) {
            bool hit = v.type() == bson::Type::kDateTime && v.as_date_ms() <= cutoff_ms;
            if (v.is_array()) {
              for (const auto& e : v.as_array()) {
                hit = hit || (e.type() == bson::Type::kDateTime && e.as_date_ms() <= cutoff_ms);
              }
            }
            if (hit) {
              expired.push_back(rid);
              break;
            }
          }
        }
        for (RecordId rid : expired) {
          if (!coll->records().contains(rid)) continue;  // removed by an earlier TTL index
          try {
            apply_delete(*coll, rid, nullptr, ExecutedStatement{}, now_ms);
          } catch (const CommandError& e) {
            // A step-down interrupts the pass like any write; the next primary finishes it.
            if (e.code() == code::kInterruptedDueToReplStateChange) return deleted;
            throw;
          }
          ++deleted;
        }
      }
    }
  }
  return deleted;
}

void Store::Impl::ttl_loop() {
  std::unique_lock lock(ttl_mu);
  while (!ttl_stopping) {
    int64_t sleep_secs = std::max<int64_t>(options.ttl_monitor_sleep_secs(), 1);
    ttl_wake.wait_for(lock, std::chrono::seconds(sleep_secs), [&] { return ttl_stopping; });
    if (ttl_stopping) break;
    lock.unlock();
    int64_t now_ms = options.clock->now_ms();
    if (options.can_accept_writes()) ttl_pass(now_ms);
    cursors.expire_idle(now_ms);
    lock.lock();
  }
}

bson::Document with_id_first(bson::Document doc) {
  const bson::Value* id = doc.get("_id");
  if (id == nullptr) {
    doc.prepend("_id", bson::Value::object_id(bson::ObjectId::generate()));
    return doc;
  }
  if (id->is_array() || id->type() == bson::Type::kRegex || id->type() == bson::Type::kUndefined) {
    throw CommandError(code::kInvalidIdField, "The '_id' value cannot be of type " +
                                                  std::string(bson::type_name(id->type())));
  }
  if (doc.first_key() != "_id") {
    bson::Value v = *id;
    doc.erase("_id");
    doc.prepend("_id", std::move(v));
  }
  return doc;
}

void check_document_size(const bson::Document& doc, int32_t code, const char* what,
                         bool inserting) {
  // First: encoded_size recurses, and a pipeline update can build any depth.
  if (bson::deeper_than(doc, bson::kMaxStoredNestingDepth)) {
    const std::string limit = std::to_string(bson::kMaxStoredNestingDepth);
    throw CommandError(code::kOverflow, inserting
                                            ? "cannot insert document because it exceeds " + limit +
                                                  " levels of nesting"
                                            : "Document exceeds maximum nesting depth of " + limit);
  }
  // Within a bound: a pipeline update can build a document whose parts are shared many times;
  // past mongod's 64 MiB encoding buffer the error is its encoder's.
  const std::optional<size_t> bytes = bson::encoded_size_within(doc, kMaxEncodingBufferBytes);
  if (!bytes) throw_past_encoding_buffer();
  if (*bytes > kMaxDocumentBytes) {
    throw CommandError(code, std::string(what) + " size in bytes: " + std::to_string(*bytes) +
                                 ", max size: " + std::to_string(kMaxDocumentBytes));
  }
}

std::vector<RecordId> matching_records(const Collection& c, const query::Matcher& m,
                                       const query::EvalContext& ectx, bool first_only) {
  std::vector<RecordId> out;
  // An equality on _id (not an operator document or regex) can only match one record.
  const bson::Value* id = m.filter().get("_id");
  bool id_point =
      id != nullptr && !id->is_document() && !id->is_array() && id->type() != bson::Type::kRegex;
  if (id_point) {
    auto rid = c.find_id(*id);
    if (rid && m.matches(c.get(*rid), ectx)) out.push_back(*rid);
    return out;
  }
  for (const auto& [rid, doc] : c.records()) {
    if (!m.matches(doc, ectx)) continue;
    out.push_back(rid);
    if (first_only) break;
  }
  return out;
}

bson::Document build_upsert_document(const query::Matcher& m, const query::Update& u,
                                     const query::EvalContext& ectx) {
  // $expr cannot seed an inserted document (docs/mongodb-behaviour.md, Upsert documents).
  if (m.uses_expr()) {
    throw CommandError(code::kQueryFeatureNotAllowed,
                       "$expr is not allowed in the query predicate for an upsert");
  }
  bson::Document seed = query::upsert_seed(m.filter());
  if (u.kind() == query::Update::Kind::kReplacement) {
    // A replacement takes only _id from the query.
    bson::Document id_only;
    if (const bson::Value* id = seed.get("_id")) id_only.append("_id", *id);
    seed = std::move(id_only);
  }
  bson::Document doc = with_id_first(u.apply(seed, true, ectx));
  check_document_size(doc, kUpdateResultTooLarge,
                      "Resulting document after update is larger than 16777216;");
  return doc;
}

bson::Document write_error(size_t index, const CommandError& e) {
  bson::Document d{{"index", bson::V(static_cast<int32_t>(index))},
                   {"code", bson::V(e.code())},
                   {"errmsg", bson::V(std::string(e.what()))}};
  for (const auto& [k, v] : e.extra()) d.append(k, v);
  return d;
}

Store::Store(StoreOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Store::~Store() {
  stop();
}

void Store::register_commands(CommandRegistry& registry) {
  register_write_commands(*impl_, registry);
  register_find_and_modify(*impl_, registry);
  register_read_commands(*impl_, registry);
  register_catalog_commands(*impl_, registry);
}

void Store::start_ttl_monitor() {
  std::lock_guard lock(impl_->ttl_mu);
  if (impl_->ttl_thread.joinable()) return;
  impl_->ttl_stopping = false;
  impl_->ttl_thread = std::thread([this] { impl_->ttl_loop(); });
}

void Store::stop() {
  {
    std::lock_guard lock(impl_->ttl_mu);
    impl_->ttl_stopping = true;
  }
  impl_->ttl_wake.notify_all();
  if (impl_->ttl_thread.joinable()) impl_->ttl_thread.join();
}

OpTime Store::last_applied() const {
  return impl_->oplog.published_last();  // without mu: see Oplog::published_last()
}

int64_t Store::last_write_date_ms() const {
  return impl_->oplog.published_wall_ms();
}

std::vector<bson::Document> Store::Impl::entries_after(OpTime after, size_t max_entries) const {
  std::vector<bson::Document> out;
  for (const auto& e : oplog.entries()) {
    if (out.size() >= max_entries) break;
    if (after.is_null() || after < e.optime) out.push_back(e.to_document());
  }
  return out;
}

bool Store::Impl::holds_entry(OpTime optime) const {
  for (auto it = oplog.entries().rbegin(); it != oplog.entries().rend(); ++it) {
    if (it->optime == optime) return true;
    if (it->optime.ts < optime.ts) return false;
  }
  return false;
}

std::vector<bson::Document> Store::oplog_after(OpTime after, size_t max_entries) const {
  std::lock_guard lock(impl_->mu);
  return impl_->entries_after(after, max_entries);
}

std::optional<std::vector<bson::Document>> Store::oplog_continuing(OpTime after,
                                                                   size_t max_entries) const {
  std::lock_guard lock(impl_->mu);
  if (!after.is_null() && !impl_->holds_entry(after)) return std::nullopt;
  return impl_->entries_after(after, max_entries);
}

size_t Store::run_ttl_pass() {
  return impl_->ttl_pass(impl_->options.clock->now_ms());
}

}  // namespace mongosim::data
