// findAndModify (docs/mongodb-behaviour.md, findAndModify): one document found by query and sort,
// then removed, updated or upserted, returning the pre- or post-image; retries answered from the
// stored images (docs/mongodb-behaviour.md, Retryable writes).
#include <string>

#include "data/command_args.h"
#include "data/cursors.h"
#include "data/store_impl.h"

namespace mongosim::data {

namespace {

constexpr int32_t kRetryWasDelete = 40606;  // original removed, retry asks for an update
constexpr int32_t kRetryWasUpsert = 40608;  // original upserted, retry is no upsert
constexpr int32_t kRetryWasUpdate = 40609;  // original updated, retry asks for a remove
constexpr int32_t kMissingImage = 40613;

struct FamRequest {
  std::string coll;
  bson::Document query;
  std::optional<query::Sort> sort;
  bool remove = false;
  std::optional<bson::Value> update;
  std::optional<bson::Array> array_filters;
  bool return_new = false;
  bool upsert = false;
  std::optional<query::Projection> fields;
  std::optional<query::Matcher> matcher;
  std::optional<query::Update> parsed_update;
};

void fail_parse(const char* message) {
  throw CommandError(code::kFailedToParse, message);
}

FamRequest parse_request(const CommandContext& ctx) {
  const char* cmd = "findAndModify";
  FamRequest r;
  r.coll = collection_argument(ctx);
  if (const bson::Document* q = document_field(ctx.body, cmd, "query")) r.query = *q;
  if (const bson::Document* s = document_field(ctx.body, cmd, "sort"))
    r.sort = query::Sort::parse(*s);
  r.remove = bool_field(ctx.body, cmd, "remove").value_or(false);
  if (const bson::Value* u = ctx.body.get("update"); u != nullptr && !u->is_null()) {
    if (!u->is_document() && !u->is_array()) {
      throw wrong_type(cmd, "update", *u, "s '[object, array]'");
    }
    r.update = *u;
  }
  if (const bson::Array* af = array_field(ctx.body, cmd, "arrayFilters")) r.array_filters = *af;
  r.return_new = bool_field(ctx.body, cmd, "new").value_or(false);
  r.upsert = bool_field(ctx.body, cmd, "upsert").value_or(false);
  if (const bson::Document* f = document_field(ctx.body, cmd, "fields")) {
    r.fields = query::Projection::parse(*f);
  }
  bool_field(ctx.body, cmd, "bypassDocumentValidation");  // accepted, no validators exist
  if (!r.update && !r.remove) fail_parse("Either an update or remove=true must be specified");
  if (r.update && r.remove) fail_parse("Cannot specify both an update and remove=true");
  if (r.remove && r.upsert) fail_parse("Cannot specify both upsert=true and remove=true ");
  if (r.remove && r.return_new) {
    fail_parse(
        "Cannot specify both new=true and remove=true; 'remove' always returns the deleted "
        "document");
  }
  if (r.remove && r.array_filters) fail_parse("Cannot specify arrayFilters and remove=true");
  if (r.update && r.update->is_array() && r.array_filters) {
    fail_parse("Cannot specify arrayFilters and a pipeline update");
  }
  r.matcher = query::Matcher::parse(r.query);
  if (r.update) r.parsed_update = query::Update::parse(*r.update, r.array_filters);
  return r;
}

bson::Value shown(const FamRequest& r, const std::optional<bson::Document>& doc,
                  const query::EvalContext& ectx) {
  if (!doc) return bson::Value::null();
  if (!r.fields) return bson::V(*doc);
  // A computed field can build a document whose parts are shared many times: measured before the
  // reply is encoded (the write is done either way, as in mongod).
  bson::Document projected = r.fields->apply(*doc, ectx);
  (void)result_document_bytes(projected);
  return bson::V(std::move(projected));
}

bson::Document reply(bson::Document last_error, bson::Value value) {
  return bson::Document{{"lastErrorObject", bson::V(std::move(last_error))},
                        {"value", std::move(value)}};
}

// Rebuilds the reply of an executed findAndModify from its images, refusing a retry whose shape
// differs from the original (docs/mongodb-behaviour.md, Retryable writes).
bson::Document replay(const FamRequest& r, const ExecutedStatement& done,
                      const query::EvalContext& ectx) {
  bson::Document result;
  if (done.op == 'd') {
    if (!r.remove) {
      throw CommandError(kRetryWasDelete,
                         "findAndModify retry request: the original request "
                         "removed a document but the retry does not");
    }
    if (!done.pre_image) throw CommandError(kMissingImage, "pre-image of the retry is missing");
    result = reply(bson::Document{{"n", bson::V(int32_t{1})}}, shown(r, done.pre_image, ectx));
  } else if (done.upserted_id) {
    if (r.remove || !r.upsert) {
      throw CommandError(kRetryWasUpsert,
                         "findAndModify retry request: the original request "
                         "upserted a document but the retry is not an upsert");
    }
    bson::Document le{{"n", bson::V(int32_t{1})},
                      {"updatedExisting", bson::V(false)},
                      {"upserted", *done.upserted_id}};
    result =
        reply(std::move(le), r.return_new ? shown(r, done.post_image, ectx) : bson::Value::null());
  } else {
    if (r.remove) {
      throw CommandError(kRetryWasUpdate,
                         "findAndModify retry request: the original request "
                         "updated a document but the retry is a remove");
    }
    const auto& image = r.return_new ? done.post_image : done.pre_image;
    if (!image) {
      throw CommandError(code::kIncompleteTransactionHistory,
                         "image of the original findAndModify is missing");
    }
    result = reply(bson::Document{{"n", bson::V(int32_t{1})}, {"updatedExisting", bson::V(true)}},
                   shown(r, image, ectx));
  }
  result.append("retriedStmtId", bson::V(int32_t{0}));
  return result;
}

std::optional<RecordId> pick(const Collection* c, const FamRequest& r, const query::Matcher& m,
                             const query::EvalContext& ectx) {
  if (c == nullptr) return std::nullopt;
  bool sorted = r.sort && !r.sort->empty();
  std::vector<RecordId> hits = matching_records(*c, m, ectx, !sorted);
  if (hits.empty()) return std::nullopt;
  RecordId best = hits[0];
  for (RecordId rid : hits) {
    if (sorted && r.sort->compare(c->get(rid), c->get(best)) < 0) best = rid;
  }
  return best;
}

bson::Document execute(Store::Impl& impl, CommandContext& ctx, const FamRequest& r,
                       const RetryableStatement* stmt) {
  query::EvalContext ectx = impl.eval_context(ctx);
  const query::Matcher& m = *r.matcher;
  const std::optional<query::Update>& update = r.parsed_update;
  Collection* c = impl.find_collection(ctx.db, r.coll);
  std::optional<RecordId> rid = pick(c, r, m, ectx);
  if (r.remove) {
    if (!rid) return reply(bson::Document{{"n", bson::V(int32_t{0})}}, bson::Value::null());
    bson::Document pre = c->get(*rid);
    ExecutedStatement record{'d', std::nullopt, true, pre, std::nullopt, {}};
    ctx.last_write_optime = impl.apply_delete(*c, *rid, stmt, std::move(record), ctx.now_ms);
    return reply(bson::Document{{"n", bson::V(int32_t{1})}}, shown(r, pre, ectx));
  }
  if (rid) {
    bson::Document pre = c->get(*rid);
    bson::Document post = update->apply(pre, false, ectx);
    check_document_size(post, kUpdateResultTooLarge,
                        "Resulting document after update is larger than 16777216;");
    if (!post.identical(pre)) {
      ExecutedStatement record{'u', std::nullopt, true, pre, post, {}};
      ctx.last_write_optime = impl.apply_update(*c, *rid, post, update_kind_of(*update), stmt,
                                                std::move(record), ctx.now_ms);
    }
    return reply(bson::Document{{"n", bson::V(int32_t{1})}, {"updatedExisting", bson::V(true)}},
                 shown(r, r.return_new ? post : pre, ectx));
  }
  if (!r.upsert) {
    return reply(bson::Document{{"n", bson::V(int32_t{0})}, {"updatedExisting", bson::V(false)}},
                 bson::Value::null());
  }
  bson::Document doc = build_upsert_document(m, *update, ectx);
  bson::Value id = *doc.get("_id");
  Collection& target = impl.collection_for_write(ctx.db, r.coll, ctx.now_ms);
  ExecutedStatement record{'i', id, true, std::nullopt, doc, {}};
  ctx.last_write_optime = impl.apply_insert(target, doc, stmt, std::move(record), ctx.now_ms);
  bson::Document le{
      {"n", bson::V(int32_t{1})}, {"updatedExisting", bson::V(false)}, {"upserted", id}};
  return reply(std::move(le), r.return_new ? shown(r, doc, ectx) : bson::Value::null());
}

bson::Document cmd_find_and_modify(Store::Impl& impl, CommandContext& ctx) {
  FamRequest r = parse_request(ctx);
  RetryScope retry = impl.begin_retryable(ctx, true);
  WriteScope scope(impl);
  scope.require_writable();
  // findAndModify is statement 0 (docs/mongodb-behaviour.md, Retryable writes).
  auto stmt = retry.statement(0);
  if (retry.active()) {
    impl.sessions.begin(*retry.session_key, retry.txn_number);
    if (const auto* done = impl.sessions.executed(*retry.session_key, retry.txn_number, 0)) {
      ctx.last_write_optime = impl.oplog.last_optime();
      return replay(r, *done, impl.eval_context(ctx));
    }
  }
  try {
    return execute(impl, ctx, r, stmt ? &*stmt : nullptr);
  } catch (const CommandError& e) {
    // Errors raised while executing carry the plan executor's context prefix
    // (docs/mongodb-behaviour.md, findAndModify).
    throw CommandError(
        e.code(),
        std::string("Plan executor error during findAndModify :: caused by :: ") + e.what(),
        e.extra());
  }
}

}  // namespace

void register_find_and_modify(Store::Impl& impl, CommandRegistry& registry) {
  CommandSpec s;
  s.name = "findAndModify";
  s.aliases = {"findandmodify"};
  s.handler = [&impl](CommandContext& ctx) { return cmd_find_and_modify(impl, ctx); };
  s.is_write = true;
  s.retryable_write = true;
  s.secondary_ok = false;
  registry.add(std::move(s));
}

}  // namespace mongosim::data
