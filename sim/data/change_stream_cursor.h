// One open change stream (docs/mongodb-behaviour.md, Change streams): where it is in the oplog
// and how it reads its next batch. A batch holds only majority-committed events: the reader
// scans the oplog entries after the stream's position up to the commit point it is given, turns
// them into events (change_events.h), runs the user's stages over each and checks that `_id`
// still holds the token.
//
// Invariants: position() only grows, and only to timestamps of majority-committed entries (or
// the stream's start); every event returned sorts after the position it was read from; once
// closed() (an invalidate was returned) nothing more is read.
// Thread rules: the state is used by one getMore at a time (the cursor manager checks the
// cursor out); interrupt() and interruption() may be called from any thread. read_batch() takes
// the store's data mutex for at most kScanChunkEntries entries at a time.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/change_signal.h"
#include "base/command_error.h"
#include "base/optime.h"
#include "data/change_events.h"
#include "data/change_stream_spec.h"
#include "data/resume_token.h"
#include "data/store.h"
#include "query/query.h"

namespace mongosim::data {

class ChangeStreamCursor {
 public:
  // Oplog entries examined per hold of the data mutex.
  static constexpr size_t kScanChunkEntries = 1'000;
  // A batch stops growing at this many bytes, as mongod's does at 16 MiB.
  static constexpr size_t kMaxBatchBytes = 16 * 1024 * 1024;

  // A stream that has seen everything through `position`; with `must_find`, the first entry
  // after `position` must be at that timestamp (the event of a resumeAfter token) and is skipped.
  ChangeStreamCursor(ChangeStreamSpec spec, bson::Timestamp position,
                     std::optional<bson::Timestamp> must_find, ChangeSignal& signal);

  const ChangeStreamSpec& spec() const { return spec_; }
  bson::Timestamp position() const { return position_; }
  bool closed() const { return closed_; }

  struct Batch {
    bson::Array events;
    ResumeToken post_batch_token;  // the last event's token, or a high-water mark
  };
  // Reads up to `max_events` events (SIZE_MAX: no limit but the bytes), committed through
  // `committed`.
  // Throws CommandError: 280 when the resume token's event is missing or a stage changed an
  // event's _id, 47 when a required image is missing, the stages' own errors, 10334 for an
  // event over 16 MiB.
  Batch read_batch(Store::Impl& impl, size_t max_events, OpTime committed,
                   const query::EvalContext& ectx);

  // Makes the running (or next) getMore fail with this error and wakes it.
  void interrupt(int32_t code, const std::string& message);
  // The error interrupt() set, if any.
  std::optional<CommandError> interruption() const;

 private:
  struct Progress {
    size_t bytes = 0;
    std::optional<ResumeToken> last_token;  // of the last event added
  };
  enum class Emitted { kAdded, kFiltered, kFull };
  // One hold of the data mutex: up to kScanChunkEntries entries. Returns false when the scan
  // should go on with another chunk.
  bool scan_chunk(Store::Impl& impl, size_t max_events, OpTime committed,
                  const query::EvalContext& ectx, Batch& batch, Progress& progress);
  // The events of one entry; false when the batch filled up before the entry was done.
  bool emit_entry(const OplogEntry& entry, std::vector<ChangeEvent> events, size_t max_events,
                  const query::EvalContext& ectx, Batch& batch, Progress& progress);
  // Runs the user's stages over one event and appends what comes out, unless the batch is full.
  Emitted emit(const ChangeEvent& event, size_t max_events, const query::EvalContext& ectx,
               Batch& batch, Progress& progress);

  const ChangeStreamSpec spec_;
  bson::Timestamp position_;
  std::optional<bson::Timestamp> must_find_;
  std::optional<ChangeEvent> pending_;  // an invalidate that did not fit in the last batch
  bool closed_ = false;
  ChangeSignal& signal_;
  mutable std::mutex interrupt_mu_;  // a leaf lock
  std::optional<CommandError> interruption_;
};

}  // namespace mongosim::data
