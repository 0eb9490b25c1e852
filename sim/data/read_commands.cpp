// find, getMore, killCursors, count and aggregate (docs/mongodb-behaviour.md, Reads and cursors).
#include <algorithm>
#include <deque>
#include <string>

#include "data/change_stream_spec.h"
#include "data/command_args.h"
#include "data/read_as_of.h"
#include "data/store_impl.h"

namespace mongosim::data {

namespace {

constexpr int32_t kNonNegativeRequired = 51024;  // IDL validator: "value must be >= 0"

int64_t non_negative(const bson::Document& body, const char* cmd, const char* key,
                     int64_t default_value) {
  auto v = int_field(body, cmd, key);
  if (!v) return default_value;
  if (*v < 0) {
    throw CommandError(kNonNegativeRequired, "BSON field '" + std::string(key) +
                                                 "' value must be >= 0, actual value '" +
                                                 std::to_string(*v) + "'");
  }
  return *v;
}

// Matching documents of a collection in natural order (empty if the collection is missing), as
// of the read concern's commit point when it names one (read_as_of.h).
std::vector<bson::Document> scan(Store::Impl& impl, const CommandContext& ctx,
                                 const std::string& coll, const query::Matcher& m,
                                 const query::EvalContext& ectx) {
  std::vector<bson::Document> out;
  if (const auto& point = ctx.read_concern.read_at) {
    for (bson::Document& doc : documents_as_of(impl, ctx.db, coll, *point)) {
      if (m.matches(doc, ectx)) out.push_back(std::move(doc));
    }
    return out;
  }
  Collection* c = impl.find_collection(ctx.db, coll);
  if (c == nullptr) return out;
  for (RecordId rid : matching_records(*c, m, ectx, false)) out.push_back(c->get(rid));
  return out;
}

void sort_documents(std::vector<bson::Document>& docs, const query::Sort& sort) {
  if (sort.empty()) return;
  std::stable_sort(docs.begin(), docs.end(), [&](const bson::Document& a, const bson::Document& b) {
    return sort.compare(a, b) < 0;
  });
}

bson::Document cmd_find(Store::Impl& impl, CommandContext& ctx) {
  const char* cmd = "find";
  std::string coll = collection_argument(ctx);
  bson::Document filter;
  if (const bson::Document* f = document_field(ctx.body, cmd, "filter")) filter = *f;
  query::Matcher m = query::Matcher::parse(filter);
  query::Sort sort;
  if (const bson::Document* s = document_field(ctx.body, cmd, "sort"))
    sort = query::Sort::parse(*s);
  std::optional<query::Projection> projection;
  if (const bson::Document* p = document_field(ctx.body, cmd, "projection")) {
    projection = query::Projection::parse(*p);
  }
  int64_t skip = non_negative(ctx.body, cmd, "skip", 0);
  int64_t limit = non_negative(ctx.body, cmd, "limit", 0);
  int64_t batch_size = non_negative(ctx.body, cmd, "batchSize", CursorManager::kDefaultBatchSize);
  bool single_batch = bool_field(ctx.body, cmd, "singleBatch").value_or(false);
  query::EvalContext ectx = impl.eval_context(ctx);
  std::vector<bson::Document> docs;
  {
    std::lock_guard lock(impl.mu);
    docs = scan(impl, ctx, coll, m, ectx);
  }
  sort_documents(docs, sort);
  std::deque<bson::Document> out;
  for (size_t i = static_cast<size_t>(std::min<int64_t>(skip, static_cast<int64_t>(docs.size())));
       i < docs.size() && (limit == 0 || static_cast<int64_t>(out.size()) < limit); ++i) {
    out.push_back(projection ? projection->apply(docs[i], ectx) : std::move(docs[i]));
  }
  return impl.cursors.open(ctx.db + "." + coll, std::move(out), batch_size, single_batch,
                           ectx.now_ms);
}

bson::Document cmd_get_more(Store::Impl& impl, CommandContext& ctx) {
  const bson::Value& id = ctx.body.at(0).second;
  if (id.type() != bson::Type::kInt64) throw wrong_type("getMore", "getMore", id, " 'long'");
  const bson::Value* coll = ctx.body.get("collection");
  if (coll == nullptr) {
    throw CommandError(kMissingRequiredField,
                       "BSON field 'getMore.collection' is missing but a required field");
  }
  if (!coll->is_string()) throw wrong_type("getMore", "collection", *coll, " 'string'");
  int64_t batch_size = non_negative(ctx.body, "getMore", "batchSize", 0);
  std::string ns = ctx.db + "." + coll->as_string();
  int64_t now_ms = impl.options.clock->now_ms();
  if (auto stream = impl.cursors.check_out_stream(id.as_int64(), ns, now_ms)) {
    return change_stream_get_more(impl, ctx, id.as_int64(), ns, stream, batch_size);
  }
  if (ctx.body.has("maxTimeMS")) {
    throw CommandError(code::kBadValue,
                       "cannot set maxTimeMS on getMore command for a non-awaitData cursor");
  }
  return impl.cursors.get_more(id.as_int64(), ns, batch_size, now_ms);
}

bson::Document cmd_kill_cursors(Store::Impl& impl, CommandContext& ctx) {
  std::string coll = collection_argument(ctx);
  const bson::Array& ids = required_array_field(ctx.body, "killCursors", "cursors");
  bson::Array killed, not_found;
  for (const auto& id : ids) {
    if (id.type() != bson::Type::kInt64) throw wrong_type("killCursors", "cursors", id, " 'long'");
    bool ok = impl.cursors.kill(id.as_int64(), ctx.db + "." + coll);
    (ok ? killed : not_found).push_back(id);
  }
  return bson::Document{{"cursorsKilled", bson::V(std::move(killed))},
                        {"cursorsNotFound", bson::V(std::move(not_found))},
                        {"cursorsAlive", bson::V(bson::Array{})},
                        {"cursorsUnknown", bson::V(bson::Array{})}};
}

bson::Document cmd_count(Store::Impl& impl, CommandContext& ctx) {
  const char* cmd = "count";
  std::string coll = collection_argument(ctx);
  bson::Document filter;
  if (const bson::Document* q = document_field(ctx.body, cmd, "query")) filter = *q;
  query::Matcher m = query::Matcher::parse(filter);
  int64_t skip = non_negative(ctx.body, cmd, "skip", 0);
  // count treats a negative limit like its absolute value.
  int64_t limit = int_field(ctx.body, cmd, "limit").value_or(0);
  if (limit < 0) limit = limit == INT64_MIN ? INT64_MAX : -limit;
  query::EvalContext ectx = impl.eval_context(ctx);
  int64_t n = 0;
  {
    std::lock_guard lock(impl.mu);
    Collection* c = impl.find_collection(ctx.db, coll);
    if (ctx.read_concern.read_at) {
      n = static_cast<int64_t>(scan(impl, ctx, coll, m, ectx).size());
    } else if (c != nullptr) {
      n = static_cast<int64_t>(matching_records(*c, m, ectx, false).size());
    }
  }
  n = std::max<int64_t>(n - skip, 0);
  if (limit != 0) n = std::min(n, limit);
  return bson::Document{{"n", bson::V(static_cast<int32_t>(n))}};
}

bson::Document cmd_aggregate(Store::Impl& impl, CommandContext& ctx) {
  const char* cmd = "aggregate";
  const bson::Array& pipeline = required_array_field(ctx.body, cmd, "pipeline");
  for (size_t i = 0; i < pipeline.size(); ++i) {
    if (!pipeline[i].is_document()) {
      throw CommandError(code::kTypeMismatch,
                         "Each element of the 'pipeline' array must be an "
                         "object");
    }
  }
  const bson::Document* cursor = document_field(ctx.body, cmd, "cursor");
  if (cursor == nullptr) {
    throw CommandError(code::kFailedToParse,
                       "The 'cursor' option is required, except for aggregate with the explain "
                       "argument");
  }
  int64_t batch_size =
      non_negative(*cursor, "aggregate.cursor", "batchSize", CursorManager::kDefaultBatchSize);
  if (is_change_stream_pipeline(pipeline)) {
    return open_change_stream(impl, ctx, pipeline, batch_size);
  }
  for (size_t i = 1; i < pipeline.size(); ++i) {
    // An empty stage is refused by the pipeline's own parse (40323), after this check.
    const bson::Document& stage = pipeline[i].as_document();
    if (!stage.empty() && stage.first_key() == "$changeStream") {
      throw CommandError(40602, "$changeStream is only valid as the first stage in a pipeline.");
    }
  }
  std::string coll = collection_argument(ctx);
  query::EvalContext ectx = impl.eval_context(ctx);
  std::vector<bson::Document> input;
  {
    std::lock_guard lock(impl.mu);
    input = scan(impl, ctx, coll, query::Matcher::parse(bson::Document{}), ectx);
  }
  std::vector<bson::Document> result = query::run_pipeline(pipeline, std::move(input), ectx);
  std::deque<bson::Document> out(std::make_move_iterator(result.begin()),
                                 std::make_move_iterator(result.end()));
  return impl.cursors.open(ctx.db + "." + coll, std::move(out), batch_size, false, ectx.now_ms);
}

}  // namespace

void register_read_commands(Store::Impl& impl, CommandRegistry& registry) {
  auto add = [&](std::string name, bson::Document (*fn)(Store::Impl&, CommandContext&),
                 std::function<bool(const CommandContext&)> is_change_stream = nullptr) {
    CommandSpec s;
    // A cursor's getMore and killCursors follow the read that opened it: the driver sends them
    // without $readPreference, and mongod runs them in any member state.
    s.any_member_state = name == "getMore" || name == "killCursors";
    s.name = std::move(name);
    s.handler = [&impl, fn](CommandContext& ctx) { return fn(impl, ctx); };
    s.is_change_stream = std::move(is_change_stream);
    registry.add(std::move(s));
  };
  add("find", cmd_find);
  add("getMore", cmd_get_more, [&impl](const CommandContext& ctx) {
    const bson::Value& id = ctx.body.at(0).second;
    return id.type() == bson::Type::kInt64 && impl.cursors.is_stream(id.as_int64());
  });
  add("killCursors", cmd_kill_cursors);
  add("count", cmd_count);
  add("aggregate", cmd_aggregate, [](const CommandContext& ctx) {
    const bson::Value* pipeline = ctx.body.get("pipeline");
    return pipeline != nullptr && pipeline->is_array() &&
           is_change_stream_pipeline(pipeline->as_array());
  });
}

}  // namespace mongosim::data
