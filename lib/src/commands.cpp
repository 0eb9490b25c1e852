#include "commands.h"

#include <bson/bson.h>

#include <cassert>
#include <cstring>
#include <optional>
#include <string>

namespace mongolock::detail {

namespace {

void append_utf8(bson_t* doc, const char* key, std::string_view value) {
  bson_append_utf8(doc, key, -1, value.data(), static_cast<int>(value.size()));
}

// The lock is free when nobody holds it or the hold expired, on the server clock.
Bson free_expr() {
  return Bson(BCON_NEW("$or", "[", "{", "$eq", "[", "{", "$ifNull", "[", BCON_UTF8("$holder"),
                       BCON_NULL, "]", "}", BCON_NULL, "]", "}", "{", "$lte", "[", "{", "$ifNull",
                       "[", BCON_UTF8("$expiresAt"), BCON_DATE_TIME(0), "]", "}",
                       BCON_UTF8("$$NOW"), "]", "}", "]"));
}

// max(stored token + 1, NOW_ms * 2^20): strictly above the stored token, and above every token
// of a reaped document (see mongolock.h "Fencing").
Bson next_token_expr() {
  return Bson(BCON_NEW("$max", "[", "{", "$add", "[", "{", "$ifNull", "[", BCON_UTF8("$token"),
                       BCON_INT64(0), "]", "}", BCON_INT64(1), "]", "}", "{", "$multiply", "[", "{",
                       "$toLong", BCON_UTF8("$$NOW"), "}", BCON_INT64(kTokenTimeScale), "]", "}",
                       "]"));
}

// {$map: {input: <array>, in: "$$this.id"}}: the ids of a list of tombstones.
Bson tombstone_ids(const bson_t& list) {
  return Bson(
      BCON_NEW("$map", "{", "input", BCON_DOCUMENT(&list), "in", BCON_UTF8("$$this.id"), "}"));
}

// ID was not given up by a resolution: it is neither in `tombstones` (any entry, live or past
// its keep time: ids are random, so an old entry never names a new attempt) nor in the
// `abandoned` list of ids that earlier versions wrote (still honoured, never written).
Bson not_abandoned_expr(std::string_view id) {
  const std::string id_text(id);
  Bson all(BCON_NEW("$ifNull", "[", BCON_UTF8("$tombstones"), "[", "]", "]"));
  Bson ids = tombstone_ids(*all);
  return Bson(BCON_NEW("$and", "[", "{", "$not", "[", "{", "$in", "[", BCON_UTF8(id_text.c_str()),
                       BCON_DOCUMENT(ids.get()), "]", "}", "]", "}", "{", "$not", "[", "{", "$in",
                       "[", BCON_UTF8(id_text.c_str()), "{", "$ifNull", "[",
                       BCON_UTF8("$abandoned"), "[", "]", "]", "}", "]", "}", "]", "}", "]"));
}

// A plain lock grants when it is free AND this acquisition id carries no tombstone.
Bson plain_grant_expr(std::string_view id) {
  return Bson(BCON_NEW("$and", "[", BCON_DOCUMENT(free_expr().get()),
                       BCON_DOCUMENT(not_abandoned_expr(id).get()), "]"));
}

Bson lease_end_expr(int64_t expiry_ms) {
  return Bson(BCON_NEW("$add", "[", BCON_UTF8("$$NOW"), BCON_INT64(expiry_ms), "]"));
}

Bson owner_doc(const Owner& owner) {
  Bson doc = make_bson();
  append_utf8(doc.get(), "host", owner.host);
  bson_append_int64(doc.get(), "pid", -1, owner.pid);
  append_utf8(doc.get(), "description", owner.description);
  return doc;
}

// {$cond: [test, then, "$field"]} appended under key; `then` is a document expression.
void append_cond_doc(bson_t* out, const char* key, const bson_t& test, const bson_t& then) {
  const std::string keep = std::string("$") + key;
  Bson cond(BCON_NEW("$cond", "[", BCON_DOCUMENT(&test), BCON_DOCUMENT(&then),
                     BCON_UTF8(keep.c_str()), "]"));
  bson_append_document(out, key, -1, cond.get());
}

// {$cond: [test, <utf8 literal>, "$field"]}.
void append_cond_utf8(bson_t* out, const char* key, const bson_t& test, std::string_view then) {
  const std::string keep = std::string("$") + key;
  const std::string value(then);
  Bson cond(BCON_NEW("$cond", "[", BCON_DOCUMENT(&test), BCON_UTF8(value.c_str()),
                     BCON_UTF8(keep.c_str()), "]"));
  bson_append_document(out, key, -1, cond.get());
}

// The fields of an exclusive grant, each guarded by `granted` (a document expression).
void append_exclusive_grant(bson_t* set, const bson_t& granted, const HoldRequest& request,
                            const bson_t& next_token) {
  assert(request.owner != nullptr);
  Bson owner = owner_doc(*request.owner);
  Bson owner_literal(BCON_NEW("$literal", BCON_DOCUMENT(owner.get())));
  append_cond_doc(set, "token", granted, next_token);
  append_cond_utf8(set, "holder", granted, request.id);
  append_cond_doc(set, "owner", granted, *owner_literal);
  append_cond_utf8(set, "acquiredAt", granted, "$$NOW");
  append_cond_doc(set, "expiresAt", granted, *lease_end_expr(request.expiry_ms));
}

Bson find_and_modify(std::string_view collection, std::string_view name, const bson_t& pipeline,
                     bool upsert, bool return_new) {
  Bson cmd = make_bson();
  append_utf8(cmd.get(), "findAndModify", collection);
  bson_t query;
  bson_append_document_begin(cmd.get(), "query", -1, &query);
  append_utf8(&query, "_id", name);
  bson_append_document_end(cmd.get(), &query);
  bson_append_array(cmd.get(), "update", -1, &pipeline);
  bson_append_bool(cmd.get(), "upsert", -1, upsert);
  bson_append_bool(cmd.get(), "new", -1, return_new);
  return cmd;
}

// {update: C, updates: [{q: query, u: pipeline}]}
Bson update_one(std::string_view collection, const bson_t& query, const bson_t& pipeline,
                bool upsert = false) {
  Bson cmd = make_bson();
  append_utf8(cmd.get(), "update", collection);
  bson_t updates;
  bson_t statement;
  bson_append_array_begin(cmd.get(), "updates", -1, &updates);
  bson_append_document_begin(&updates, "0", -1, &statement);
  bson_append_document(&statement, "q", -1, &query);
  bson_append_array(&statement, "u", -1, &pipeline);
  if (upsert) bson_append_bool(&statement, "upsert", -1, true);
  bson_append_document_end(&updates, &statement);
  bson_append_array_end(cmd.get(), &updates);
  return cmd;
}

// A pipeline of one stage {$set: set}.
Bson single_set_pipeline(const bson_t& set) {
  return Bson(BCON_NEW("0", "{", "$set", BCON_DOCUMENT(&set), "}"));
}

Bson free_pipeline_set() {
  return Bson(BCON_NEW("holder", BCON_NULL, "owner", "{", "$literal", BCON_NULL, "}", "expiresAt",
                       BCON_UTF8("$$NOW")));
}

Bson holder_query(std::string_view name, std::string_view id) {
  Bson query = make_bson();
  append_utf8(query.get(), "_id", name);
  append_utf8(query.get(), "holder", id);
  return query;
}

// {$max: [{$ifNull: ["$reapAt", Date(0)]}, NOW + expiry]}
Bson reap_at_expr(int64_t expiry_ms) {
  Bson end = lease_end_expr(expiry_ms);
  return Bson(BCON_NEW("$max", "[", "{", "$ifNull", "[", BCON_UTF8("$reapAt"), BCON_DATE_TIME(0),
                       "]", "}", BCON_DOCUMENT(end.get()), "]"));
}

// {$filter: {input: {$ifNull: ["$shared", []]}, cond: <cond>}}
Bson shared_filter(const bson_t& cond) {
  return Bson(BCON_NEW("$filter", "{", "input", "{", "$ifNull", "[", BCON_UTF8("$shared"), "[", "]",
                       "]", "}", "cond", BCON_DOCUMENT(&cond), "}"));
}

Bson shared_entry_live(std::string_view id) {
  const std::string id_text(id);
  return Bson(BCON_NEW("$and", "[", "{", "$eq", "[", BCON_UTF8("$$this.id"),
                       BCON_UTF8(id_text.c_str()), "]", "}", "{", "$gt", "[",
                       BCON_UTF8("$$this.expiresAt"), BCON_UTF8("$$NOW"), "]", "}", "]"));
}

}  // namespace

namespace {

// The queue's live entries: {$filter: {input: {$ifNull: ["$queue", []]},
// cond: {$gt: ["$$this.until", "$$NOW"]}}}.
Bson live_queue() {
  Bson all(BCON_NEW("$ifNull", "[", BCON_UTF8("$queue"), "[", "]", "]"));
  Bson live(BCON_NEW("$gt", "[", BCON_UTF8("$$this.until"), BCON_UTF8("$$NOW"), "]"));
  return Bson(BCON_NEW("$filter", "{", "input", BCON_DOCUMENT(all.get()), "cond",
                       BCON_DOCUMENT(live.get()), "}"));
}

// {w: W, p: P, x: lease, o: owner, until: NOW + keep}: the waiter's entry as this attempt
// leaves it (x and o are what a hand-over grants it: a release cannot know the waiter's lease).
Bson queue_entry(const QueueTicket& ticket) {
  assert(ticket.owner != nullptr && ticket.expiry_ms > 0);
  const std::string waiter(ticket.waiter);
  const std::string provider(ticket.provider);
  Bson owner = owner_doc(*ticket.owner);
  return Bson(BCON_NEW("w", BCON_UTF8(waiter.c_str()), "p", BCON_UTF8(provider.c_str()), "x",
                       BCON_INT64(ticket.expiry_ms), "o", "{", "$literal",
                       BCON_DOCUMENT(owner.get()), "}", "until", "{", "$add", "[",
                       BCON_UTF8("$$NOW"), BCON_INT64(ticket.keep_ms), "]", "}"));
}

// It is this waiter's turn: no live entry, its entry first, or the lock free for grace_ms (the
// head did not come: it died, was paused or missed its wake-up).
Bson turn_expr(const QueueTicket& ticket) {
  const std::string waiter(ticket.waiter);
  return Bson(BCON_NEW("$or", "[", "{", "$eq", "[", "{", "$ifNull", "[", BCON_UTF8("$_h"),
                       BCON_NULL, "]", "}", BCON_NULL, "]", "}", "{", "$eq", "[", BCON_UTF8("$_h"),
                       BCON_UTF8(waiter.c_str()), "]", "}", "{", "$lte", "[", "{", "$add", "[", "{",
                       "$ifNull", "[", BCON_UTF8("$expiresAt"), BCON_DATE_TIME(0), "]", "}",
                       BCON_INT64(ticket.grace_ms), "]", "}", BCON_UTF8("$$NOW"), "]", "}", "]"));
}

// The queue after the attempt: granted, without the waiter and the head it may have passed;
// refused, with the waiter's entry refreshed in place or appended while there is room.
Bson queue_after_expr(const QueueTicket& ticket) {
  const std::string waiter(ticket.waiter);
  Bson entry = queue_entry(ticket);
  Bson granted(BCON_NEW("$filter", "{", "input", BCON_UTF8("$_q"), "cond", "{", "$and", "[", "{",
                        "$ne", "[", BCON_UTF8("$$this.w"), BCON_UTF8(waiter.c_str()), "]", "}", "{",
                        "$ne", "[", BCON_UTF8("$$this.w"), BCON_UTF8("$_h"), "]", "}", "]", "}",
                        "}"));
  Bson listed(BCON_NEW("$in", "[", BCON_UTF8(waiter.c_str()), "{", "$map", "{", "input",
                       BCON_UTF8("$_q"), "in", BCON_UTF8("$$this.w"), "}", "}", "]"));
  Bson refreshed(BCON_NEW("$map", "{", "input", BCON_UTF8("$_q"), "in", "{", "$cond", "[", "{",
                          "$eq", "[", BCON_UTF8("$$this.w"), BCON_UTF8(waiter.c_str()), "]", "}",
                          BCON_DOCUMENT(entry.get()), BCON_UTF8("$$this"), "]", "}", "}"));
  Bson appended(BCON_NEW("$cond", "[", "{", "$lt", "[", "{", "$size", BCON_UTF8("$_q"), "}",
                         BCON_INT64(kQueueEntriesMax), "]", "}", "{", "$concatArrays", "[",
                         BCON_UTF8("$_q"), "[", BCON_DOCUMENT(entry.get()), "]", "]", "}",
                         BCON_UTF8("$_q"), "]"));
  Bson queued(BCON_NEW("$cond", "[", BCON_DOCUMENT(listed.get()), BCON_DOCUMENT(refreshed.get()),
                       BCON_DOCUMENT(appended.get()), "]"));
  // _s: the queue stays as it is (see stay_expr).
  Bson refused(
      BCON_NEW("$cond", "[", BCON_UTF8("$_s"), BCON_UTF8("$_q"), BCON_DOCUMENT(queued.get()), "]"));
  return Bson(BCON_NEW("$cond", "[", BCON_UTF8("$_g"), BCON_DOCUMENT(granted.get()),
                       BCON_DOCUMENT(refused.get()), "]"));
}

// A refused attempt leaves the queue as it is when its id is tombstoned (it runs late, after its
// call resolved it: it must not queue the waiter again) or its waiter holds the lock by a
// hand-over that has not lapsed (it would queue behind itself).
Bson stay_expr(const HoldRequest& request) {
  const std::string waiter(request.ticket->waiter);
  Bson tombstoned(BCON_NEW("$not", "[", BCON_DOCUMENT(not_abandoned_expr(request.id).get()), "]"));
  Bson holding(BCON_NEW("$and", "[", "{", "$eq", "[", BCON_UTF8("$holder"),
                        BCON_UTF8(waiter.c_str()), "]", "}", "{", "$not", "[",
                        BCON_DOCUMENT(free_expr().get()), "]", "}", "]"));
  return Bson(
      BCON_NEW("$or", "[", BCON_DOCUMENT(tombstoned.get()), BCON_DOCUMENT(holding.get()), "]"));
}

void append_statement(bson_t* updates, const char* index, const bson_t& query,
                      const bson_t& pipeline, bool upsert) {
  bson_t statement;
  bson_append_document_begin(updates, index, -1, &statement);
  bson_append_document(&statement, "q", -1, &query);
  bson_append_array(&statement, "u", -1, &pipeline);
  if (upsert) bson_append_bool(&statement, "upsert", -1, true);
  bson_append_document_end(updates, &statement);
}

// {$cond: ["$_gh", then, else]} under key: the hand-over's guard (then and else are values).
void append_hand_over(bson_t* set, const char* key, const bson_value_t& then,
                      const bson_value_t& otherwise) {
  bson_t cond;
  bson_t args;
  bson_append_document_begin(set, key, -1, &cond);
  bson_append_array_begin(&cond, "$cond", -1, &args);
  bson_append_utf8(&args, "0", -1, "$_gh", -1);
  bson_append_value(&args, "1", -1, &then);
  bson_append_value(&args, "2", -1, &otherwise);
  bson_append_array_end(&cond, &args);
  bson_append_document_end(set, &cond);
}

bson_value_t utf8_value(const char* text) {
  bson_value_t value{};
  value.value_type = BSON_TYPE_UTF8;
  value.value.v_utf8.str = const_cast<char*>(text);
  value.value.v_utf8.len = static_cast<uint32_t>(std::strlen(text));
  return value;
}

bson_value_t null_value() {
  bson_value_t value{};
  value.value_type = BSON_TYPE_NULL;
  return value;
}

bson_value_t document_value(const bson_t& doc) {
  bson_value_t value{};
  value.value_type = BSON_TYPE_DOCUMENT;
  value.value.v_doc.data = const_cast<uint8_t*>(bson_get_data(&doc));
  value.value.v_doc.data_len = doc.len;
  return value;
}

// {$set: {_h: the first of `candidates` that is not the holder's own entry and not tombstoned}}:
// the hand-over's grantee (the queue's live entries, and after them a local line's seat).
Bson head_stage(const bson_value_t& candidates) {
  Bson filter(BCON_NEW("cond", "{", "$and", "[", "{", "$ne", "[", BCON_UTF8("$$this.w"),
                       BCON_UTF8("$holder"), "]", "}", "{", "$not", "[", "{", "$in", "[",
                       BCON_UTF8("$$this.w"), BCON_UTF8("$_t"), "]", "}", "]", "}", "]", "}"));
  Bson input = make_bson();
  bson_append_value(input.get(), "input", -1, &candidates);
  bson_concat(input.get(), filter.get());
  return Bson(BCON_NEW("$set", "{", "_h", "{", "$arrayElemAt", "[", "{", "$filter",
                       BCON_DOCUMENT(input.get()), "}", BCON_INT32(0), "]", "}", "}"));
}

// The release of a notify holder: the lock goes to the first live queue entry that is not the
// current holder's own (a queued waiter is never granted to itself), not tombstoned (a waiter
// that gave up with an unknown outcome) and carries its lease (x: an entry of an earlier version
// has none and is woken to attempt instead), as hold id w with a new token, owner o and lease
// NOW + x; that entry leaves the queue and grantW / grantP name it (its Provider's stream picks
// the event up by them). With no such entry the lock is freed as the plain release frees it.
// Five stages: $set _q, _t, _m; $set _h; $set _gh; $set the grant; $unset. `leaving` W: the
// leave of waiter W, one statement: a first stage drops W's entry, and only a hold of W (_m) is
// handed over (or freed); a document W does not hold keeps its hold.
Bson hand_over_pipeline(std::optional<std::string_view> leaving) {
  Bson tombstones(BCON_NEW("$ifNull", "[", BCON_UTF8("$tombstones"), "[", "]", "]"));
  // _m: the hold is the releasing one's. A release matched its holder; a leave matched the
  // document by its holder or its entry, and first drops that entry.
  Bson stage_leave = make_bson();
  Bson mine = make_bson();
  if (leaving) {
    const std::string waiter(*leaving);
    stage_leave =
        Bson(BCON_NEW("$set", "{", "queue", "{", "$filter", "{", "input", "{", "$ifNull", "[",
                      BCON_UTF8("$queue"), "[", "]", "]", "}", "cond", "{", "$ne", "[",
                      BCON_UTF8("$$this.w"), BCON_UTF8(waiter.c_str()), "]", "}", "}", "}", "}"));
    mine = Bson(BCON_NEW("$eq", "[", BCON_UTF8("$holder"), BCON_UTF8(waiter.c_str()), "]"));
  } else {
    mine = Bson(BCON_NEW("$literal", BCON_BOOL(true)));
  }
  Bson stage0(BCON_NEW("$set", "{", "_q", BCON_DOCUMENT(live_queue().get()), "_t",
                       BCON_DOCUMENT(tombstone_ids(*tombstones).get()), "_m",
                       BCON_DOCUMENT(mine.get()), "}"));
  Bson stage1 = head_stage(utf8_value("$_q"));
  Bson stage2(BCON_NEW("$set", "{", "_gh", "{", "$and", "[", BCON_UTF8("$_m"), "{", "$gt", "[", "{",
                       "$ifNull", "[", BCON_UTF8("$_h.x"), BCON_INT64(0), "]", "}", BCON_INT64(0),
                       "]", "}", "]", "}", "}"));
  Bson lease_end(BCON_NEW("$add", "[", BCON_UTF8("$$NOW"), BCON_UTF8("$_h.x"), "]"));
  Bson reap(BCON_NEW("$max", "[", "{", "$ifNull", "[", BCON_UTF8("$reapAt"), BCON_DATE_TIME(0), "]",
                     "}", BCON_DOCUMENT(lease_end.get()), "]"));
  Bson rest(BCON_NEW("$filter", "{", "input", BCON_UTF8("$_q"), "cond", "{", "$ne", "[",
                     BCON_UTF8("$$this.w"), BCON_UTF8("$_h.w"), "]", "}", "}"));
  Bson set = make_bson();
  append_hand_over(set.get(), "token", document_value(*next_token_expr()), utf8_value("$token"));
  // Not handed over: a release frees; a leave that did not hold changes none of these.
  const auto freed = [](const bson_value_t& value, const char* keep) {
    Bson cond = make_bson();
    bson_t args;
    bson_append_array_begin(cond.get(), "$cond", -1, &args);
    bson_append_utf8(&args, "0", -1, "$_m", -1);
    bson_append_value(&args, "1", -1, &value);
    bson_append_utf8(&args, "2", -1, keep, -1);
    bson_append_array_end(cond.get(), &args);
    return cond;
  };
  Bson free_holder = freed(null_value(), "$holder");
  Bson free_owner = freed(null_value(), "$owner");
  Bson free_expiry = freed(utf8_value("$$NOW"), "$expiresAt");
  Bson free_grant_w = freed(null_value(), "$grantW");
  Bson free_grant_p = freed(null_value(), "$grantP");
  append_hand_over(set.get(), "holder", utf8_value("$_h.w"), document_value(*free_holder));
  append_hand_over(set.get(), "owner", utf8_value("$_h.o"), document_value(*free_owner));
  append_hand_over(set.get(), "acquiredAt", utf8_value("$$NOW"), utf8_value("$acquiredAt"));
  append_hand_over(set.get(), "expiresAt", document_value(*lease_end),
                   document_value(*free_expiry));
  append_hand_over(set.get(), "reapAt", document_value(*reap), utf8_value("$reapAt"));
  append_hand_over(set.get(), "grantW", utf8_value("$_h.w"), document_value(*free_grant_w));
  append_hand_over(set.get(), "grantP", utf8_value("$_h.p"), document_value(*free_grant_p));
  append_hand_over(set.get(), "queue", document_value(*rest), utf8_value("$_q"));
  Bson stage3(BCON_NEW("$set", BCON_DOCUMENT(set.get())));
  Bson stage4(BCON_NEW("$unset", "[", BCON_UTF8("_q"), BCON_UTF8("_t"), BCON_UTF8("_m"),
                       BCON_UTF8("_h"), BCON_UTF8("_gh"), "]"));
  Bson pipeline = make_bson();
  int index = 0;
  for (const Bson* stage : {&stage_leave, &stage0, &stage1, &stage2, &stage3, &stage4}) {
    if (stage == &stage_leave && !leaving) continue;
    const std::string key = std::to_string(index++);
    bson_append_document(pipeline.get(), key.c_str(), -1, stage->get());
  }
  return pipeline;
}

// acquire_command with a ticket: the plain grant of acquire_command, further guarded by the
// waiter's turn, in five stages ($set _q, _t; $set _h; $set _g, _s; $set the grant and the
// queue; $unset).
Bson queued_acquire_command(const HoldRequest& request) {
  const QueueTicket& ticket = *request.ticket;
  // The head: the first live entry whose waiter is not tombstoned (one that gave up with its
  // leave lost holds no turn).
  Bson head(BCON_NEW("$arrayElemAt", "[", "{", "$map", "{", "input", "{", "$filter", "{", "input",
                     BCON_UTF8("$_q"), "cond", "{", "$not", "[", "{", "$in", "[",
                     BCON_UTF8("$$this.w"), BCON_UTF8("$_t"), "]", "}", "]", "}", "}", "}", "in",
                     BCON_UTF8("$$this.w"), "}", "}", BCON_INT32(0), "]"));
  Bson tombstones(BCON_NEW("$ifNull", "[", BCON_UTF8("$tombstones"), "[", "]", "]"));
  Bson stage0(BCON_NEW("$set", "{", "_q", BCON_DOCUMENT(live_queue().get()), "_t",
                       BCON_DOCUMENT(tombstone_ids(*tombstones).get()), "}"));
  Bson stage1(BCON_NEW("$set", "{", "_h", BCON_DOCUMENT(head.get()), "}"));
  Bson stage2(BCON_NEW("$set", "{", "_g", "{", "$and", "[",
                       BCON_DOCUMENT(plain_grant_expr(request.id).get()),
                       BCON_DOCUMENT(turn_expr(ticket).get()), "]", "}", "_s",
                       BCON_DOCUMENT(stay_expr(request).get()), "}"));
  Bson granted(BCON_NEW("$and", "[", BCON_UTF8("$_g"), "]"));
  Bson set = make_bson();
  append_cond_doc(set.get(), "reapAt", *granted, *reap_at_expr(request.expiry_ms));
  append_exclusive_grant(set.get(), *granted, request, *next_token_expr());
  // A grant here is no hand-over: the last one's names go (its Provider's stream would
  // otherwise be passed every later grant of this lock).
  Bson null_value(BCON_NEW("$literal", BCON_NULL));
  append_cond_doc(set.get(), "grantW", *granted, *null_value);
  append_cond_doc(set.get(), "grantP", *granted, *null_value);
  bson_append_document(set.get(), "queue", -1, queue_after_expr(ticket).get());
  Bson pipeline(BCON_NEW("0", BCON_DOCUMENT(stage0.get()), "1", BCON_DOCUMENT(stage1.get()), "2",
                         BCON_DOCUMENT(stage2.get()), "3", "{", "$set", BCON_DOCUMENT(set.get()),
                         "}", "4", "{", "$unset", "[", BCON_UTF8("_q"), BCON_UTF8("_t"),
                         BCON_UTF8("_h"), BCON_UTF8("_g"), BCON_UTF8("_s"), "]", "}"));
  return find_and_modify(request.collection, request.name, *pipeline, /*upsert=*/true,
                         /*return_new=*/true);
}

// The release's hand-over pipeline (stage 1 at index 1: no leave stage) with a local line's seat
// offered after the queue: {w: seat, p: null, x: lease, o: owner}. Its p is null, so the grant's
// grantP is null and no Provider's stream passes it on: the releaser wakes the seat itself. Only
// stage 1 is built per release; the others are copied from the built pipeline.
Bson seated_pipeline(const bson_t& hand_over, const HoldRequest& request) {
  assert(request.owner != nullptr && request.expiry_ms > 0);
  const std::string seat(request.seat);
  Bson owner = owner_doc(*request.owner);
  Bson candidates(BCON_NEW("$concatArrays", "[", BCON_UTF8("$_q"), "[", "{", "w",
                           BCON_UTF8(seat.c_str()), "p", BCON_NULL, "x",
                           BCON_INT64(request.expiry_ms), "o", "{", "$literal",
                           BCON_DOCUMENT(owner.get()), "}", "}", "]", "]"));
  Bson stage1 = head_stage(document_value(*candidates));
  Bson pipeline = make_bson();
  bson_iter_t iter;
  bool ok = bson_iter_init(&iter, &hand_over);
  assert(ok);
  while (ok && bson_iter_next(&iter)) {
    const char* key = bson_iter_key(&iter);
    if (std::strcmp(key, "1") == 0) {
      bson_append_document(pipeline.get(), key, -1, stage1.get());
    } else {
      bson_append_iter(pipeline.get(), key, -1, &iter);
    }
  }
  return pipeline;
}

}  // namespace

Bson leave_queue_command(std::string_view collection, std::string_view name,
                         std::string_view waiter) {
  const std::string name_text(name);
  const std::string waiter_text(waiter);
  Bson query(BCON_NEW("_id", BCON_UTF8(name_text.c_str()), "$or", "[", "{", "holder",
                      BCON_UTF8(waiter_text.c_str()), "}", "{", "queue.w",
                      BCON_UTF8(waiter_text.c_str()), "}", "]"));
  return update_one(collection, *query, *hand_over_pipeline(waiter));
}

Bson acquire_command(const HoldRequest& request) {
  if (request.ticket != nullptr) return queued_acquire_command(request);
  Bson set = make_bson();
  Bson granted = plain_grant_expr(request.id);
  append_cond_doc(set.get(), "reapAt", *granted, *reap_at_expr(request.expiry_ms));
  append_exclusive_grant(set.get(), *granted, request, *next_token_expr());
  return find_and_modify(request.collection, request.name, *single_set_pipeline(*set),
                         /*upsert=*/true, /*return_new=*/true);
}

namespace {

// Both kinds of document are reaped on reapAt, which must stay >= every expiry ever granted.
Bson extend_exclusive(const HoldRequest& request) {
  Bson query = holder_query(request.name, request.id);
  if (request.token > 0) bson_append_int64(query.get(), "token", -1, request.token);
  Bson alive(BCON_NEW("$gt", "[", BCON_UTF8("$expiresAt"), BCON_UTF8("$$NOW"), "]"));
  bson_append_document(query.get(), "$expr", -1, alive.get());
  Bson set = make_bson();
  bson_append_document(set.get(), "expiresAt", -1, lease_end_expr(request.expiry_ms).get());
  bson_append_document(set.get(), "reapAt", -1, reap_at_expr(request.expiry_ms).get());
  return update_one(request.collection, *query, *single_set_pipeline(*set));
}

}  // namespace

Bson extend_command(const HoldRequest& request) {
  return extend_exclusive(request);
}

Bson release_command(const HoldRequest& request) {
  if (request.hand_over) {
    Bson cmd = make_bson();
    append_utf8(cmd.get(), "findAndModify", request.collection);
    bson_append_document(cmd.get(), "query", -1, holder_query(request.name, request.id).get());
    // The pipeline names no hold and no lock, so it is built once (building it cost a release
    // about 60 us, results/backoff/notes.md) and then only read, by any number of threads at
    // once: the exception to Bson's one-thread rule, safe because nothing writes it. Never
    // destroyed: a release racing the process's exit must not read a freed document.
    static const Bson* const kHandOver = new Bson(hand_over_pipeline(std::nullopt));
    if (request.seat.empty()) {
      bson_append_array(cmd.get(), "update", -1, kHandOver->get());
    } else {
      bson_append_array(cmd.get(), "update", -1, seated_pipeline(*kHandOver->get(), request).get());
    }
    bson_append_bool(cmd.get(), "new", -1, true);
    // What the releaser needs to see whom it handed the lock to; the queue stays on the server.
    Bson fields(BCON_NEW("_id", BCON_INT32(0), "holder", BCON_INT32(1), "token", BCON_INT32(1),
                         "grantW", BCON_INT32(1), "grantP", BCON_INT32(1)));
    bson_append_document(cmd.get(), "fields", -1, fields.get());
    return cmd;
  }
  return update_one(request.collection, *holder_query(request.name, request.id),
                    *single_set_pipeline(*free_pipeline_set()));
}

Bson seat_release_command(const HoldRequest& request) {
  assert(!request.seat.empty() && request.owner != nullptr && request.expiry_ms > 0);
  const std::string seat(request.seat);
  Bson query = holder_query(request.name, request.id);
  Bson empty_queue(BCON_NEW("0", "{", "queue", "{", "$exists", BCON_BOOL(false), "}", "}", "1", "{",
                            "queue", "{", "$size", BCON_INT32(0), "}", "}"));
  bson_append_array(query.get(), "$or", -1, empty_queue.get());
  // As the full release's head filter: a tombstoned id is never granted. The seat's id is
  // tombstoned when a release that offered it had an unknown outcome, and that release may run
  // late, after its seat has attempted under a new id.
  Bson not_tombstoned(BCON_NEW("$ne", BCON_UTF8(seat.c_str())));
  bson_append_document(query.get(), "tombstones.id", -1, not_tombstoned.get());
  Bson owner = owner_doc(*request.owner);
  Bson set(BCON_NEW("token", BCON_DOCUMENT(next_token_expr().get()), "holder",
                    BCON_UTF8(seat.c_str()), "owner", "{", "$literal", BCON_DOCUMENT(owner.get()),
                    "}", "acquiredAt", BCON_UTF8("$$NOW"), "expiresAt",
                    BCON_DOCUMENT(lease_end_expr(request.expiry_ms).get()), "reapAt",
                    BCON_DOCUMENT(reap_at_expr(request.expiry_ms).get()), "grantW",
                    BCON_UTF8(seat.c_str()), "grantP", BCON_NULL));
  Bson cmd = make_bson();
  append_utf8(cmd.get(), "findAndModify", request.collection);
  bson_append_document(cmd.get(), "query", -1, query.get());
  bson_append_array(cmd.get(), "update", -1, single_set_pipeline(*set).get());
  bson_append_bool(cmd.get(), "new", -1, true);
  Bson fields(BCON_NEW("_id", BCON_INT32(0), "holder", BCON_INT32(1), "token", BCON_INT32(1),
                       "grantW", BCON_INT32(1), "grantP", BCON_INT32(1)));
  bson_append_document(cmd.get(), "fields", -1, fields.get());
  return cmd;
}

bool release_removed_hold(const bson_t& reply) {
  if (bson_has_field(&reply, "value")) return !find_is_null_or_missing(reply, "value");
  return find_int64(reply, "n").value_or(0) == 1;
}

std::optional<HandOverSeen> hand_over_in_release(const bson_t& reply,
                                                 std::string_view provider_id) {
  std::optional<Bson> value = find_document(reply, "value");
  if (!value) return std::nullopt;
  std::optional<std::string> grantee = find_utf8(**value, "grantW");
  std::optional<int64_t> token = find_int64(**value, "token");
  if (!grantee || !token || find_utf8(**value, "holder") != grantee ||
      find_utf8(**value, "grantP") != provider_id) {
    return std::nullopt;
  }
  return HandOverSeen{std::move(*grantee), *token};
}

Bson rw_acquire_command(const HoldRequest& request, bool exclusive, int32_t max_shared) {
  Bson live_cond(BCON_NEW("$gt", "[", BCON_UTF8("$$this.expiresAt"), BCON_UTF8("$$NOW"), "]"));
  Bson live = shared_filter(*live_cond);
  Bson stage1(BCON_NEW("$set", "{", "_live", BCON_DOCUMENT(live.get()), "_xfree",
                       BCON_DOCUMENT(free_expr().get()), "}"));
  const int64_t limit = max_shared > 0 ? max_shared : INT64_MAX;
  Bson shared_ok =
      exclusive
          ? Bson(BCON_NEW("$eq", "[", "{", "$size", BCON_UTF8("$_live"), "}", BCON_INT64(0), "]"))
          : Bson(BCON_NEW("$lt", "[", "{", "$size", BCON_UTF8("$_live"), "}", BCON_INT64(limit),
                          "]"));
  // Exclusive grants mint a new token; a shared grant joins the epoch of the live readers
  // (their common token) or, with none live, mints a new epoch (see mongolock.h "Fencing").
  Bson next = exclusive
                  ? next_token_expr()
                  : Bson(BCON_NEW("$cond", "[", "{", "$gt", "[", "{", "$size", BCON_UTF8("$_live"),
                                  "}", BCON_INT64(0), "]", "}", BCON_UTF8("$token"),
                                  BCON_DOCUMENT(next_token_expr().get()), "]"));
  Bson stage2(BCON_NEW("$set", "{", "_grant", "{", "$and", "[", BCON_UTF8("$_xfree"),
                       BCON_DOCUMENT(shared_ok.get()),
                       BCON_DOCUMENT(not_abandoned_expr(request.id).get()), "]", "}", "_next",
                       BCON_DOCUMENT(next.get()), "}"));
  Bson granted(BCON_NEW("$and", "[", BCON_UTF8("$_grant"), "]"));
  Bson next_value(BCON_NEW("$add", "[", BCON_UTF8("$_next"), BCON_INT64(0), "]"));
  Bson set = make_bson();
  append_cond_doc(set.get(), "reapAt", *granted, *reap_at_expr(request.expiry_ms));
  if (exclusive) {
    append_exclusive_grant(set.get(), *granted, request, *next_value);
    Bson empty(BCON_NEW("$literal", "[", "]"));
    append_cond_doc(set.get(), "shared", *granted, *empty);
  } else {
    append_cond_doc(set.get(), "token", *granted, *next_value);
    Bson owner = owner_doc(*request.owner);
    const std::string id_text(request.id);
    Bson entries(BCON_NEW("$concatArrays", "[", BCON_UTF8("$_live"), "[", "{", "id",
                          BCON_UTF8(id_text.c_str()), "owner", "{", "$literal",
                          BCON_DOCUMENT(owner.get()), "}", "acquiredAt", BCON_UTF8("$$NOW"),
                          "expiresAt", BCON_DOCUMENT(lease_end_expr(request.expiry_ms).get()),
                          "token", BCON_UTF8("$_next"), "}", "]", "]"));
    append_cond_doc(set.get(), "shared", *granted, *entries);
  }
  Bson pipeline(BCON_NEW("0", BCON_DOCUMENT(stage1.get()), "1", BCON_DOCUMENT(stage2.get()), "2",
                         "{", "$set", BCON_DOCUMENT(set.get()), "}", "3", "{", "$unset", "[",
                         BCON_UTF8("_live"), BCON_UTF8("_xfree"), BCON_UTF8("_grant"),
                         BCON_UTF8("_next"), "]", "}"));
  return find_and_modify(request.collection, request.name, *pipeline, true, true);
}

Bson rw_extend_command(const HoldRequest& request, bool exclusive) {
  if (exclusive) return extend_exclusive(request);
  Bson query = make_bson();
  append_utf8(query.get(), "_id", request.name);
  Bson matching = shared_filter(*shared_entry_live(request.id));
  Bson alive(
      BCON_NEW("$gt", "[", "{", "$size", BCON_DOCUMENT(matching.get()), "}", BCON_INT64(0), "]"));
  bson_append_document(query.get(), "$expr", -1, alive.get());
  const std::string id_text(request.id);
  Bson end = lease_end_expr(request.expiry_ms);
  Bson mapped(BCON_NEW("$map", "{", "input", BCON_UTF8("$shared"), "in", "{", "$cond", "[", "{",
                       "$eq", "[", BCON_UTF8("$$this.id"), BCON_UTF8(id_text.c_str()), "]", "}",
                       "{", "$mergeObjects", "[", BCON_UTF8("$$this"), "{", "expiresAt",
                       BCON_DOCUMENT(end.get()), "}", "]", "}", BCON_UTF8("$$this"), "]", "}",
                       "}"));
  Bson set = make_bson();
  bson_append_document(set.get(), "shared", -1, mapped.get());
  bson_append_document(set.get(), "reapAt", -1, reap_at_expr(request.expiry_ms).get());
  return update_one(request.collection, *query, *single_set_pipeline(*set));
}

Bson rw_release_command(const HoldRequest& request, bool exclusive) {
  if (exclusive) return release_command(request);
  Bson query = make_bson();
  append_utf8(query.get(), "_id", request.name);
  append_utf8(query.get(), "shared.id", request.id);
  const std::string id_text(request.id);
  Bson others(BCON_NEW("$ne", "[", BCON_UTF8("$$this.id"), BCON_UTF8(id_text.c_str()), "]"));
  Bson set = make_bson();
  bson_append_document(set.get(), "shared", -1, shared_filter(*others).get());
  return update_one(request.collection, *query, *single_set_pipeline(*set));
}

namespace {

// The tombstones still kept: {$filter: {input: {$ifNull: ["$tombstones", []]},
// cond: {$gt: ["$$this.until", "$$NOW"]}}}.
Bson live_tombstones() {
  Bson all(BCON_NEW("$ifNull", "[", BCON_UTF8("$tombstones"), "[", "]", "]"));
  Bson kept(BCON_NEW("$gt", "[", BCON_UTF8("$$this.until"), BCON_UTF8("$$NOW"), "]"));
  return Bson(BCON_NEW("$filter", "{", "input", BCON_DOCUMENT(all.get()), "cond",
                       BCON_DOCUMENT(kept.get()), "}"));
}

// ID is among the kept tombstones.
Bson listed_expr(std::string_view id) {
  const std::string id_text(id);
  Bson ids = tombstone_ids(*live_tombstones());
  return Bson(BCON_NEW("$in", "[", BCON_UTF8(id_text.c_str()), BCON_DOCUMENT(ids.get()), "]"));
}

// The resolution may record ID: it is already kept, or fewer than kTombstonesMax are kept.
Bson recordable_expr(std::string_view id) {
  Bson room(BCON_NEW("$lt", "[", "{", "$size", BCON_DOCUMENT(live_tombstones().get()), "}",
                     BCON_INT64(kTombstonesMax), "]"));
  return Bson(
      BCON_NEW("$or", "[", BCON_DOCUMENT(listed_expr(id).get()), BCON_DOCUMENT(room.get()), "]"));
}

// The kept tombstones, with {id: ID, until: NOW + keep} appended unless ID is among them.
// Entries past their `until` are dropped here: nothing else removes them.
Bson tombstone_expr(const HoldRequest& request) {
  const std::string id_text(request.id);
  Bson until(BCON_NEW("$add", "[", BCON_UTF8("$$NOW"), BCON_INT64(request.tombstone_keep_ms), "]"));
  Bson appended(BCON_NEW("$concatArrays", "[", BCON_DOCUMENT(live_tombstones().get()), "[", "{",
                         "id", BCON_UTF8(id_text.c_str()), "until", BCON_DOCUMENT(until.get()), "}",
                         "]", "]"));
  return Bson(BCON_NEW("$cond", "[", BCON_DOCUMENT(listed_expr(request.id).get()),
                       BCON_DOCUMENT(live_tombstones().get()), BCON_DOCUMENT(appended.get()), "]"));
}

// holder/owner/expiresAt of a hold with ID cleared (and, for rw, its shared entry dropped),
// reapAt raised to REAP: what both statements of a resolution set.
Bson free_id_set(const HoldRequest& request, bool rw) {
  const std::string id_text(request.id);
  Bson mine(BCON_NEW("$eq", "[", BCON_UTF8("$holder"), BCON_UTF8(id_text.c_str()), "]"));
  Bson null_value(BCON_NEW("$literal", BCON_NULL));
  Bson now(BCON_NEW("$add", "[", BCON_UTF8("$$NOW"), BCON_INT64(0), "]"));
  Bson set = make_bson();
  append_cond_doc(set.get(), "holder", *mine, *null_value);
  append_cond_doc(set.get(), "owner", *mine, *null_value);
  append_cond_doc(set.get(), "expiresAt", *mine, *now);
  if (rw) {
    Bson others(BCON_NEW("$ne", "[", BCON_UTF8("$$this.id"), BCON_UTF8(id_text.c_str()), "]"));
    bson_append_document(set.get(), "shared", -1, shared_filter(*others).get());
  }
  bson_append_document(set.get(), "reapAt", -1, reap_at_expr(request.expiry_ms).get());
  return set;
}

}  // namespace

Bson resolve_command(const HoldRequest& request, bool rw) {
  Bson by_name = make_bson();
  append_utf8(by_name.get(), "_id", request.name);
  Bson recordable = make_bson();
  append_utf8(recordable.get(), "_id", request.name);
  bson_append_document(recordable.get(), "$expr", -1, recordable_expr(request.id).get());
  Bson tombstone_set = free_id_set(request, rw);
  bson_append_document(tombstone_set.get(), "tombstones", -1, tombstone_expr(request).get());
  Bson cmd = make_bson();
  append_utf8(cmd.get(), "update", request.collection);
  bson_t updates;
  bson_append_array_begin(cmd.get(), "updates", -1, &updates);
  append_statement(&updates, "0", *by_name, *single_set_pipeline(*free_id_set(request, rw)),
                   /*upsert=*/true);
  append_statement(&updates, "1", *recordable, *single_set_pipeline(*tombstone_set),
                   /*upsert=*/false);
  bson_append_array_end(cmd.get(), &updates);
  return cmd;
}

Bson force_release_command(std::string_view collection, std::string_view name, bool rw) {
  Bson set = free_pipeline_set();
  if (rw) {
    Bson empty(BCON_NEW("$literal", "[", "]"));
    bson_append_document(set.get(), "shared", -1, empty.get());
  }
  return find_and_modify(collection, name, *single_set_pipeline(*set), /*upsert=*/false,
                         /*return_new=*/false);
}

Bson inspect_command(std::string_view collection, std::string_view name) {
  Bson cmd = make_bson();
  append_utf8(cmd.get(), "aggregate", collection);
  const std::string name_text(name);
  Bson pipeline(BCON_NEW("0", "{", "$match", "{", "_id", BCON_UTF8(name_text.c_str()), "}", "}",
                         "1", "{", "$set", "{", "_now", BCON_UTF8("$$NOW"), "}", "}"));
  bson_append_array(cmd.get(), "pipeline", -1, pipeline.get());
  bson_t cursor;
  bson_append_document_begin(cmd.get(), "cursor", -1, &cursor);
  bson_append_document_end(cmd.get(), &cursor);
  return cmd;
}

Bson list_indexes_command(std::string_view collection) {
  Bson cmd = make_bson();
  append_utf8(cmd.get(), "listIndexes", collection);
  return cmd;
}

Bson index_command(std::string_view collection, const char* field, const char* name,
                   int64_t reap_after_s) {
  Bson cmd = make_bson();
  append_utf8(cmd.get(), "createIndexes", collection);
  Bson indexes(BCON_NEW("0", "{", "key", "{", field, BCON_INT32(1), "}", "name", BCON_UTF8(name),
                        "expireAfterSeconds", BCON_INT64(reap_after_s), "}"));
  bson_append_array(cmd.get(), "indexes", -1, indexes.get());
  return cmd;
}

}  // namespace mongolock::detail
