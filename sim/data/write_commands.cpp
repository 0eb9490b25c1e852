// insert, update and delete (docs/mongodb-behaviour.md, Write commands): per-statement execution
// with writeErrors, ordered/unordered batches, upserts, and retryable-write deduplication
// (docs/mongodb-behaviour.md, Retryable writes).
#include <climits>
#include <cmath>
#include <string>
#include <vector>

#include "data/command_args.h"
#include "data/store_impl.h"

namespace mongosim::data {

namespace {

// An interruption (a step-down, maxTimeMS) fails the whole command, not one statement.
bool fails_whole_command(int32_t code) {
  return code == code::kInterruptedDueToReplStateChange || code == code::kMaxTimeMSExpired;
}

// What one batch has done so far; becomes the reply.
struct BatchResult {
  int32_t n = 0;
  int32_t n_modified = 0;
  bson::Array upserted;
  bson::Array write_errors;
  bson::Array retried_stmt_ids;
};

const bson::Array& batch_argument(const CommandContext& ctx, const char* cmd, const char* field) {
  const bson::Array& statements = required_array_field(ctx.body, cmd, field);
  if (statements.empty() || statements.size() > kMaxWriteBatchStatements) {
    throw CommandError(kInvalidLength, "Write batch sizes must be between 1 and " +
                                           std::to_string(kMaxWriteBatchStatements) + ". Got " +
                                           std::to_string(statements.size()) + " operations.");
  }
  return statements;
}

// The statements' stmtIds: those the client gave, which override the default "statement i has
// stmtId i" (docs/mongodb-behaviour.md, Retryable writes). The whole list is checked before any
// statement runs: one entry per statement (else InvalidLength), each a whole number that fits
// an int (else TypeMismatch: a cast of a larger one would be undefined).
std::vector<int32_t> stmt_ids_of(const CommandContext& ctx, const char* cmd, size_t count) {
  std::vector<int32_t> out(count);
  const bson::Array* ids = array_field(ctx.body, cmd, "stmtIds");
  if (ids != nullptr && ids->size() != count) {
    throw CommandError(kInvalidLength,
                       "Number of statement ids must match the number of batch entries");
  }
  for (size_t i = 0; i < count; ++i) {
    if (ids == nullptr) {
      out[i] = static_cast<int32_t>(i);
      continue;
    }
    const bson::Value& id = (*ids)[i];
    const double d = id.is_number() ? id.number_as_double() : 0.5;
    // NaN fails both bounds; 0.5 stands for "not a number".
    if (!(d >= INT32_MIN && d <= INT32_MAX) || std::trunc(d) != d) {
      throw wrong_type(cmd, "stmtIds." + std::to_string(i), id, " 'int'");
    }
    out[i] = static_cast<int32_t>(d);
  }
  return out;
}

const bson::Document& statement_document(const bson::Array& statements, size_t i, const char* cmd,
                                         const char* field) {
  const bson::Value& v = statements[i];
  if (!v.is_document()) {
    throw wrong_type(cmd, std::string(field) + "." + std::to_string(i), v, " 'object'");
  }
  return v.as_document();
}

const bson::Value& required_value(const bson::Document& stmt, const char* cmd, const char* field,
                                  const char* key) {
  const bson::Value* v = stmt.get(key);
  if (v == nullptr) {
    throw CommandError(kMissingRequiredField, "BSON field '" + std::string(cmd) + "." + field +
                                                  "." + key + "' is missing but a required field");
  }
  return *v;
}

bson::Document batch_reply(const BatchResult& r, bool with_modified) {
  bson::Document reply{{"n", bson::V(r.n)}};
  if (with_modified) reply.append("nModified", bson::V(r.n_modified));
  if (!r.upserted.empty()) reply.append("upserted", bson::V(r.upserted));
  if (!r.retried_stmt_ids.empty()) reply.append("retriedStmtIds", bson::V(r.retried_stmt_ids));
  if (!r.write_errors.empty()) reply.append("writeErrors", bson::V(r.write_errors));
  return reply;
}

// Rebuilds a retried statement's contribution to the reply from its record
// (docs/mongodb-behaviour.md, Retryable writes).
void replay_statement(const ExecutedStatement& done, size_t index, int32_t stmt_id,
                      BatchResult& r) {
  r.n += 1;
  if (done.op == 'u') r.n_modified += 1;
  if (done.upserted_id) {
    r.upserted.push_back(bson::V(bson::Document{{"index", bson::V(static_cast<int32_t>(index))},
                                                {"_id", *done.upserted_id}}));
  }
  r.retried_stmt_ids.push_back(bson::V(stmt_id));
}

// Takes the session (if the command is a retryable write) and checks the txnNumber.
const ExecutedStatement* already_executed(Store::Impl& impl, const RetryScope& retry,
                                          int32_t stmt_id) {
  if (!retry.active()) return nullptr;
  return impl.sessions.executed(*retry.session_key, retry.txn_number, stmt_id);
}

// The batch every write command runs: its statements in order, each once per retryable write
// (one already executed is replayed from the session table), a statement's error kept as a write
// error (or thrown, for the codes that fail the whole command), an ordered batch stopping at the
// first. `one(i, stmt_id, retry, r)` runs statement i. The command's arguments are checked first,
// by the caller: a malformed statement fails the whole command before anything is written.
template <typename Statement>
BatchResult run_batch(Store::Impl& impl, CommandContext& ctx, const char* cmd, size_t count,
                      const Statement& one) {
  const bool ordered = bool_field(ctx.body, cmd, "ordered").value_or(true);
  const std::vector<int32_t> stmt_ids = stmt_ids_of(ctx, cmd, count);
  RetryScope retry = impl.begin_retryable(ctx, true);
  WriteScope scope(impl);
  scope.require_writable();
  if (retry.active()) impl.sessions.begin(*retry.session_key, retry.txn_number);
  BatchResult r;
  for (size_t i = 0; i < count; ++i) {
    const int32_t stmt_id = stmt_ids[i];
    if (const auto* done = already_executed(impl, retry, stmt_id)) {
      replay_statement(*done, i, stmt_id, r);
      continue;
    }
    try {
      one(i, stmt_id, retry, r);
    } catch (const CommandError& e) {
      if (fails_whole_command(e.code())) throw;
      r.write_errors.push_back(bson::V(write_error(i, e)));
      if (ordered) break;
    }
  }
  // Nothing written, every statement a retry: the write concern waits on the newest optime,
  // which covers the statements' first executions.
  if (!r.retried_stmt_ids.empty() && !ctx.last_write_optime) {
    ctx.last_write_optime = impl.oplog.last_optime();
  }
  return r;
}

// --- insert ---

void insert_one(Store::Impl& impl, CommandContext& ctx, const std::string& coll,
                const bson::Value& raw, const RetryScope& retry, int32_t stmt_id) {
  if (!raw.is_document()) throw CommandError(code::kTypeMismatch, "documents must be objects");
  bson::Document doc = with_id_first(raw.as_document());
  check_document_size(doc, code::kBadValue, "object to insert too large.", /*inserting=*/true);
  Collection& c = impl.collection_for_write(ctx.db, coll, ctx.now_ms);
  auto stmt = retry.statement(stmt_id);
  ExecutedStatement record;
  record.op = 'i';
  ctx.last_write_optime =
      impl.apply_insert(c, std::move(doc), stmt ? &*stmt : nullptr, std::move(record), ctx.now_ms);
}

bson::Document cmd_insert(Store::Impl& impl, CommandContext& ctx) {
  std::string coll = collection_argument(ctx);
  const bson::Array& docs = batch_argument(ctx, "insert", "documents");
  for (size_t i = 0; i < docs.size(); ++i) statement_document(docs, i, "insert", "documents");
  const BatchResult r =
      run_batch(impl, ctx, "insert", docs.size(),
                [&](size_t i, int32_t stmt_id, const RetryScope& retry, BatchResult& out) {
                  insert_one(impl, ctx, coll, docs[i], retry, stmt_id);
                  out.n += 1;
                });
  return batch_reply(r, false);
}

// --- update ---

struct UpdateStatement {
  query::Matcher matcher;
  query::Update update;
  bool upsert = false;
  bool multi = false;
};

UpdateStatement parse_update_statement(const bson::Document& s) {
  const bson::Value& q = required_value(s, "update", "updates", "q");
  const bson::Value& u = required_value(s, "update", "updates", "u");
  if (!q.is_document()) throw wrong_type("update.updates", "q", q, " 'object'");
  if (!u.is_document() && !u.is_array()) {
    throw wrong_type("update.updates", "u", u, "s '[object, array]'");
  }
  std::optional<bson::Array> array_filters;
  if (const bson::Array* af = array_field(s, "update.updates", "arrayFilters")) {
    array_filters = *af;
  }
  UpdateStatement st{query::Matcher::parse(q.as_document()), query::Update::parse(u, array_filters),
                     bool_field(s, "update.updates", "upsert").value_or(false),
                     bool_field(s, "update.updates", "multi").value_or(false)};
  if (st.multi && st.update.kind() == query::Update::Kind::kReplacement) {
    throw CommandError(code::kFailedToParse,
                       "multi update is not supported for replacement-style update");
  }
  return st;
}

void update_one_statement(Store::Impl& impl, CommandContext& ctx, const std::string& coll,
                          const bson::Document& raw, size_t index, const RetryScope& retry,
                          int32_t stmt_id, BatchResult& r) {
  UpdateStatement st = parse_update_statement(raw);
  query::EvalContext ectx = impl.eval_context(ctx);
  auto stmt = retry.statement(stmt_id);
  const RetryableStatement* stmt_ptr = stmt ? &*stmt : nullptr;
  Collection* c = impl.find_collection(ctx.db, coll);
  std::vector<RecordId> hits;
  if (c != nullptr) hits = matching_records(*c, st.matcher, ectx, !st.multi);
  for (RecordId rid : hits) {
    const bson::Document& old_doc = c->get(rid);
    bson::Document new_doc = st.update.apply(old_doc, false, ectx);
    check_document_size(new_doc, kUpdateResultTooLarge,
                        "Resulting document after update is larger than 16777216;");
    r.n += 1;
    // A no-op writes nothing (docs/mongodb-behaviour.md, Retryable writes).
    if (new_doc.identical(old_doc)) continue;
    ExecutedStatement record;
    record.op = 'u';
    ctx.last_write_optime =
        impl.apply_update(*c, rid, std::move(new_doc), update_kind_of(st.update), stmt_ptr,
                          std::move(record), ctx.now_ms);
    r.n_modified += 1;
  }
  if (!hits.empty() || !st.upsert) return;
  bson::Document doc = build_upsert_document(st.matcher, st.update, ectx);
  bson::Value id = *doc.get("_id");
  Collection& target = impl.collection_for_write(ctx.db, coll, ctx.now_ms);
  ExecutedStatement record;
  record.op = 'i';
  record.upserted_id = id;
  ctx.last_write_optime =
      impl.apply_insert(target, std::move(doc), stmt_ptr, std::move(record), ctx.now_ms);
  r.n += 1;
  r.upserted.push_back(bson::V(
      bson::Document{{"index", bson::V(static_cast<int32_t>(index))}, {"_id", std::move(id)}}));
}

bson::Document cmd_update(Store::Impl& impl, CommandContext& ctx) {
  std::string coll = collection_argument(ctx);
  const bson::Array& updates = batch_argument(ctx, "update", "updates");
  for (size_t i = 0; i < updates.size(); ++i) {
    const bson::Document& s = statement_document(updates, i, "update", "updates");
    required_value(s, "update", "updates", "q");
    required_value(s, "update", "updates", "u");
  }
  const BatchResult r = run_batch(
      impl, ctx, "update", updates.size(),
      [&](size_t i, int32_t stmt_id, const RetryScope& retry, BatchResult& out) {
        update_one_statement(impl, ctx, coll, updates[i].as_document(), i, retry, stmt_id, out);
      });
  return batch_reply(r, true);
}

// --- delete ---

void delete_one_statement(Store::Impl& impl, CommandContext& ctx, const std::string& coll,
                          const bson::Document& raw, const RetryScope& retry, int32_t stmt_id,
                          BatchResult& r) {
  const bson::Value& q = required_value(raw, "delete", "deletes", "q");
  if (!q.is_document()) throw wrong_type("delete.deletes", "q", q, " 'object'");
  auto limit = int_field(raw, "delete.deletes", "limit");
  if (!limit) {
    throw CommandError(kMissingRequiredField,
                       "BSON field 'delete.deletes.limit' is missing but a required field");
  }
  if (*limit != 0 && *limit != 1) {
    throw CommandError(
        code::kFailedToParse,
        "The limit field in delete objects must be 0 or 1. Got " + std::to_string(*limit));
  }
  query::Matcher m = query::Matcher::parse(q.as_document());
  query::EvalContext ectx = impl.eval_context(ctx);
  Collection* c = impl.find_collection(ctx.db, coll);
  if (c == nullptr) return;
  auto stmt = retry.statement(stmt_id);
  for (RecordId rid : matching_records(*c, m, ectx, *limit == 1)) {
    ExecutedStatement record;
    record.op = 'd';
    ctx.last_write_optime =
        impl.apply_delete(*c, rid, stmt ? &*stmt : nullptr, std::move(record), ctx.now_ms);
    r.n += 1;
  }
}

bson::Document cmd_delete(Store::Impl& impl, CommandContext& ctx) {
  std::string coll = collection_argument(ctx);
  const bson::Array& deletes = batch_argument(ctx, "delete", "deletes");
  for (size_t i = 0; i < deletes.size(); ++i) {
    // Missing fields are parse errors of the whole command, as mongod's IDL parser makes them.
    const bson::Document& s = statement_document(deletes, i, "delete", "deletes");
    required_value(s, "delete", "deletes", "q");
    required_value(s, "delete", "deletes", "limit");
  }
  const BatchResult r = run_batch(
      impl, ctx, "delete", deletes.size(),
      [&](size_t i, int32_t stmt_id, const RetryScope& retry, BatchResult& out) {
        delete_one_statement(impl, ctx, coll, deletes[i].as_document(), retry, stmt_id, out);
      });
  return batch_reply(r, false);
}

}  // namespace

void register_write_commands(Store::Impl& impl, CommandRegistry& registry) {
  auto spec = [&](std::string name, bson::Document (*fn)(Store::Impl&, CommandContext&)) {
    CommandSpec s;
    s.name = std::move(name);
    s.handler = [&impl, fn](CommandContext& ctx) { return fn(impl, ctx); };
    s.is_write = true;
    s.retryable_write = true;
    s.secondary_ok = false;
    registry.add(std::move(s));
  };
  spec("insert", cmd_insert);
  spec("update", cmd_update);
  spec("delete", cmd_delete);
}

}  // namespace mongosim::data
