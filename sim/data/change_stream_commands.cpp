// aggregate with a $changeStream first stage and getMore on a change-stream cursor
// (docs/mongodb-behaviour.md, Change streams). The aggregate answers at once with the events
// already committed; a getMore waits (awaitData) up to its maxTimeMS, default one second, for
// the first event to be committed, parked on the store's ChangeSignal's pump (which reads for it
// and wakes it only for an event) rather than polling, and holds no lock while it waits.
#include <chrono>
#include <optional>

#include "base/change_pump.h"
#include "data/change_stream_cursor.h"
#include "data/store_impl.h"

namespace mongosim::data {

namespace {

// How long a getMore without maxTimeMS waits for events, as mongod's awaitData default.
constexpr int64_t kDefaultAwaitMs = 1'000;

// The timestamp just before `ts`: a stream starting at `ts` has seen everything before it.
bson::Timestamp predecessor(bson::Timestamp ts) {
  if (ts.increment > 0) return bson::Timestamp{ts.seconds, ts.increment - 1};
  if (ts.seconds > 0) return bson::Timestamp{ts.seconds - 1, UINT32_MAX};
  return ts;
}

// The majority commit point the stream reads through; null while there is none to read at
// (134 after a rollback, until the member has applied through its minValid).
OpTime committed_point(Store::Impl& impl) {
  if (!impl.options.majority_read_point) return impl.oplog.published_last();
  try {
    return impl.options.majority_read_point();
  } catch (const CommandError& e) {
    if (e.code() != 134) throw;
    return OpTime{};
  }
}

struct Start {
  bson::Timestamp position;
  std::optional<bson::Timestamp> must_find;
};

// Where a new stream starts: after a resume token, just before startAtOperationTime, or after
// the newest entry this member has (mongod starts a new stream after its latest optime, so a
// write not yet majority committed when the stream opens is not in it).
Start start_of(const Store::Impl& impl, const ChangeStreamSpec& spec) {
  const std::optional<ResumeToken>& token =
      spec.resume_after ? spec.resume_after : spec.start_after;
  if (token && token->kind == ResumeToken::Kind::kEvent) {
    return Start{predecessor(token->ts), token->ts};
  }
  if (token) return Start{token->ts, std::nullopt};
  if (spec.start_at_operation_time) {
    return Start{predecessor(*spec.start_at_operation_time), std::nullopt};
  }
  return Start{impl.oplog.published_last().ts, std::nullopt};
}

// ChangeStreamHistoryLost when the oplog cap has dropped entries the stream would need.
void check_history(Store::Impl& impl, const Start& start) {
  std::lock_guard lock(impl.mu);
  bson::Timestamp dropped = impl.oplog.dropped_through();
  if (dropped == bson::Timestamp{}) return;
  bool lost = start.must_find ? *start.must_find <= dropped : start.position < dropped;
  if (lost) {
    throw CommandError(code::kChangeStreamHistoryLost,
                       "Resume of change stream was not possible, as the resume point may no "
                       "longer be in the oplog.");
  }
}

// Reads a batch; errors raised while reading carry mongod's executor prefix.
ChangeStreamCursor::Batch read(Store::Impl& impl, ChangeStreamCursor& cursor, size_t max_events,
                               const query::EvalContext& ectx, const std::string& prefix) {
  try {
    return cursor.read_batch(impl, max_events, committed_point(impl), ectx);
  } catch (const CommandError& e) {
    throw CommandError(e.code(), prefix + e.what(), e.extra());
  }
}

bson::Document cursor_reply(int64_t id, const std::string& ns, const char* batch_name,
                            ChangeStreamCursor::Batch batch) {
  bson::Document cursor;
  cursor.append(batch_name, bson::V(std::move(batch.events)));
  cursor.append("postBatchResumeToken", bson::V(batch.post_batch_token.to_document()));
  cursor.append("id", bson::V(id));
  cursor.append("ns", bson::V(ns));
  return bson::Document{{"cursor", bson::V(std::move(cursor))}};
}

size_t event_limit(int64_t batch_size) {
  return batch_size > 0 ? static_cast<size_t>(batch_size) : SIZE_MAX;
}

}  // namespace

bson::Document open_change_stream(Store::Impl& impl, CommandContext& ctx,
                                  const bson::Array& pipeline, int64_t batch_size) {
  ChangeStreamSpec spec =
      parse_change_stream(ctx.db, ctx.body.at(0).second, pipeline, impl.options.replica_set());
  Start start = start_of(impl, spec);
  check_history(impl, start);
  std::string ns = spec.cursor_ns();
  auto cursor = std::make_shared<ChangeStreamCursor>(std::move(spec), start.position,
                                                     start.must_find, *impl.signal);
  query::EvalContext ectx = impl.eval_context(ctx);
  ChangeStreamCursor::Batch batch;
  if (batch_size == 0) {
    batch.post_batch_token = ResumeToken{start.position, ResumeToken::Kind::kHighWaterMark};
  } else {
    batch =
        read(impl, *cursor, event_limit(batch_size), ectx,
             "Executor error during aggregate command on namespace: " + ns + " :: caused by :: ");
  }
  int64_t id = cursor->closed() ? 0 : impl.cursors.open_stream(ns, cursor, ectx.now_ms);
  return cursor_reply(id, ns, "firstBatch", std::move(batch));
}

bson::Document change_stream_get_more(Store::Impl& impl, CommandContext& ctx, int64_t id,
                                      const std::string& ns,
                                      const std::shared_ptr<ChangeStreamCursor>& cursor,
                                      int64_t batch_size) {
  // Given back on every way out; an error closes the cursor, as it does mongod's.
  struct CheckIn {
    Store::Impl& impl;
    int64_t id;
    bool exhausted = true;
    ~CheckIn() { impl.cursors.check_in_stream(id, exhausted, impl.options.clock->now_ms()); }
  } check_in{impl, id};
  const bson::Value* max_time = ctx.body.get("maxTimeMS");
  int64_t await_ms = max_time != nullptr && max_time->is_number()
                         ? static_cast<int64_t>(max_time->number_as_double())
                         : kDefaultAwaitMs;
  auto deadline = ChangeSignal::Clock::now() + std::chrono::milliseconds(await_ms);
  query::EvalContext ectx = impl.eval_context(ctx);
  for (;;) {
    uint64_t seen = impl.signal->generation();  // before looking: no wake-up is lost
    if (auto error = cursor->interruption()) throw *error;
    if (impl.signal->shutting_down()) {
      throw CommandError(code::kInterruptedAtShutdown, "interrupted at shutdown");
    }
    ChangeStreamCursor::Batch batch = read(impl, *cursor, event_limit(batch_size), ectx,
                                           "Executor error during getMore :: caused by :: ");
    if (!batch.events.empty() || cursor->closed() || ChangeSignal::Clock::now() >= deadline) {
      check_in.exhausted = cursor->closed();
      return cursor_reply(cursor->closed() ? 0 : id, ns, "nextBatch", std::move(batch));
    }
    // Parked on the pump, which reads for this stream after every move of the signal and wakes
    // it only for events (change_pump.h); an interruption or shutdown wakes it to the checks
    // above. An empty read by the pump moves the position as this thread's own would.
    std::optional<ChangeStreamCursor::Batch> found;
    auto look = [&] {
      if (cursor->interruption() || impl.signal->shutting_down()) return true;
      ChangeStreamCursor::Batch next = read(impl, *cursor, event_limit(batch_size), ectx,
                                            "Executor error during getMore :: caused by :: ");
      if (next.events.empty() && !cursor->closed()) return false;
      found = std::move(next);
      return true;
    };
    (void)impl.signal->pump().wait(seen, deadline, look);
    if (found) {
      check_in.exhausted = cursor->closed();
      return cursor_reply(cursor->closed() ? 0 : id, ns, "nextBatch", std::move(*found));
    }
  }
}

}  // namespace mongosim::data
