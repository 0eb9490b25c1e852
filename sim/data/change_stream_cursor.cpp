#include "data/change_stream_cursor.h"

#include <algorithm>
#include <cassert>

#include "bson/codec.h"
#include "data/read_as_of.h"
#include "data/store_impl.h"

namespace mongosim::data {

namespace {

[[noreturn]] void token_not_found(bson::Timestamp found) {
  throw CommandError(
      code::kChangeStreamFatalError,
      "cannot resume stream; the resume token was not found. " +
          bson::to_json(ResumeToken{found, ResumeToken::Kind::kEvent}.to_document()));
}

[[noreturn]] void id_modified(const bson::Document& expected, const bson::Document& found) {
  bson::Document found_id;
  if (const bson::Value* id = found.get("_id")) found_id.append("_id", *id);
  throw CommandError(code::kChangeStreamFatalError,
                     "Encountered an event whose _id field, which contains the resume token, was "
                     "modified by the pipeline. Modifying the _id field of an event makes it "
                     "impossible to resume the stream from that point. Only transformations that "
                     "retain the unmodified _id field are allowed. Expected: " +
                         bson::to_json(bson::Document{{"_id", bson::V(expected)}}) +
                         " but found: " + bson::to_json(found_id));
}

}  // namespace

ChangeStreamCursor::ChangeStreamCursor(ChangeStreamSpec spec, bson::Timestamp position,
                                       std::optional<bson::Timestamp> must_find,
                                       ChangeSignal& signal)
    : spec_(std::move(spec)), position_(position), must_find_(must_find), signal_(signal) {}

void ChangeStreamCursor::interrupt(int32_t code, const std::string& message) {
  {
    std::lock_guard lock(interrupt_mu_);
    if (!interruption_) interruption_.emplace(code, message);
  }
  signal_.notify();
}

std::optional<CommandError> ChangeStreamCursor::interruption() const {
  std::lock_guard lock(interrupt_mu_);
  return interruption_;
}

ChangeStreamCursor::Emitted ChangeStreamCursor::emit(const ChangeEvent& event, size_t max_events,
                                                     const query::EvalContext& ectx, Batch& batch,
                                                     Progress& progress) {
  if (batch.events.size() >= max_events) return Emitted::kFull;
  // spec_.stages were parsed when the stream was opened (user_stages in change_stream_spec).
  std::vector<bson::Document> out = spec_.stages.run({event.doc}, ectx);
  if (out.empty()) return Emitted::kFiltered;
  assert(out.size() == 1);  // the allowed stages map one document to at most one
  // Measured first: the _id check renders what it found, and a pipeline can build an _id whose
  // parts are shared many times.
  const size_t size = result_document_bytes(out[0]);
  bson::Document token = event.token.to_document();
  const bson::Value* id = out[0].get("_id");
  if (id == nullptr || !id->is_document() || !id->as_document().identical(token)) {
    id_modified(token, out[0]);
  }
  if (!batch.events.empty() && progress.bytes + size > kMaxBatchBytes) return Emitted::kFull;
  progress.bytes += size;
  progress.last_token = event.token;
  batch.events.push_back(bson::V(std::move(out[0])));
  return Emitted::kAdded;
}

bool ChangeStreamCursor::emit_entry(const OplogEntry& entry, std::vector<ChangeEvent> events,
                                    size_t max_events, const query::EvalContext& ectx, Batch& batch,
                                    Progress& progress) {
  for (size_t k = 0; k < events.size(); ++k) {
    if (emit(events[k], max_events, ectx, batch, progress) == Emitted::kFull) {
      if (k == 0) return false;  // read the whole entry again next time
      pending_ = std::move(events[k]);
      position_ = entry.optime.ts;
      return false;
    }
    if (events[k].invalidates) closed_ = true;
  }
  position_ = entry.optime.ts;
  return !closed_;
}

bool ChangeStreamCursor::scan_chunk(Store::Impl& impl, size_t max_events, OpTime committed,
                                    const query::EvalContext& ectx, Batch& batch,
                                    Progress& progress) {
  std::lock_guard lock(impl.mu);
  if (position_ < impl.oplog.dropped_through()) {
    // The cap dropped entries this stream had not read: mongod's oplog scan dies the same way.
    throw CommandError(code::kCappedPositionLost,
                       "CollectionScan died due to position in capped collection being deleted");
  }
  const auto& entries = impl.oplog.entries();
  auto it = std::upper_bound(
      entries.begin(), entries.end(), position_,
      [](const bson::Timestamp& ts, const OplogEntry& e) { return ts < e.optime.ts; });
  DocumentLookup lookup = [&](const std::string& db, const std::string& coll,
                              const bson::Value& id) {
    return document_as_of(impl, db, coll, id, committed);
  };
  for (size_t examined = 0; it != entries.end(); ++it, ++examined) {
    if (examined == kScanChunkEntries) return false;
    const OplogEntry& e = *it;
    if (committed < e.optime) return true;  // not majority committed (yet)
    if (must_find_) {
      if (e.optime.ts != *must_find_) token_not_found(e.optime.ts);
      must_find_.reset();
      position_ = e.optime.ts;
      continue;
    }
    if (!emit_entry(e, events_for(e, spec_, lookup), max_events, ectx, batch, progress)) {
      return true;
    }
  }
  return true;
}

ChangeStreamCursor::Batch ChangeStreamCursor::read_batch(Store::Impl& impl, size_t max_events,
                                                         OpTime committed,
                                                         const query::EvalContext& ectx) {
  assert(!closed_);
  Batch batch;
  Progress progress;
  if (pending_ && max_events > 0) {
    ChangeEvent invalidate = std::move(*pending_);
    pending_.reset();
    (void)emit(invalidate, max_events, ectx, batch, progress);
    closed_ = true;
  }
  while (!closed_ && max_events > 0 &&
         !scan_chunk(impl, max_events, committed, ectx, batch, progress)) {
  }
  if (closed_) {
    batch.post_batch_token = ResumeToken{position_, ResumeToken::Kind::kInvalidate};
  } else if (progress.last_token && progress.last_token->ts == position_) {
    batch.post_batch_token = *progress.last_token;
  } else {
    batch.post_batch_token = ResumeToken{position_, ResumeToken::Kind::kHighWaterMark};
  }
  return batch;
}

}  // namespace mongosim::data
