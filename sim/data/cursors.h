// Open cursors of find, aggregate, listIndexes and listCollections: the documents not yet
// returned, handed out in batches by getMore (docs/mongodb-behaviour.md, Reads and cursors); and
// change-stream cursors (docs/mongodb-behaviour.md, Change streams), whose state a getMore checks
// out while it runs (and waits).
//
// Invariants: cursor ids are positive, non-zero int64 values never reused while open, one id
// space for both kinds; at most kMaxCursors are open (opening one more closes the least recently
// used that is not checked out), at most kMaxStreamCursors of them change streams; a cursor idle
// for kIdleTimeoutMs (mongod's cursorTimeoutMillis, 10 minutes) is closed unless checked out; a
// checked-out stream is used by exactly one getMore.
//
// Thread rules: internally synchronised; independent of the data mutex, which is never taken
// while the manager's own lock is held.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bson/value.h"

namespace mongosim::data {

class ChangeStreamCursor;

// The largest document a reply carries (mongod's BSONObjMaxInternalSize: 16 MiB + 16 KiB), and
// the encoding buffer mongod gives up at (64 MiB).
inline constexpr size_t kMaxResultDocumentBytes = 16 * 1024 * 1024 + 16 * 1024;
inline constexpr size_t kMaxEncodingBufferBytes = 64 * 1024 * 1024;

// The encoded size of a document a reply returns. Throws CommandError 10334
// (BSONObjectTooLarge) past kMaxResultDocumentBytes, and 13548 past kMaxEncodingBufferBytes,
// where mongod's encoder stops; measured within that bound (an aggregation can build a document
// whose parts are shared many times: bson::encoded_size_within).
size_t result_document_bytes(const bson::Document& doc);
// The 13548 error, for a document whose encoding passes kMaxEncodingBufferBytes.
[[noreturn]] void throw_past_encoding_buffer();

class CursorManager {
 public:
  static constexpr size_t kMaxCursors = 10'000;
  static constexpr int64_t kIdleTimeoutMs = 10 * 60 * 1000;
  static constexpr int64_t kDefaultBatchSize = 101;
  // A batch is cut once it reaches this many bytes, as mongod cuts at 16 MiB.
  static constexpr size_t kMaxBatchBytes = 16 * 1024 * 1024;
  static constexpr size_t kMaxStreamCursors = 1'000;

  // Ids are random (std::random_device), or follow `id_seed` when it is set.
  explicit CursorManager(std::optional<uint64_t> id_seed = std::nullopt)
      : rng_(id_seed ? *id_seed : std::random_device{}()) {}

  // Takes the first batch out of `docs` and, if any remain, opens a cursor on the rest.
  // Returns the {cursor: {firstBatch, id, ns}} reply.
  bson::Document open(std::string ns, std::deque<bson::Document> docs, int64_t batch_size,
                      bool single_batch, int64_t now_ms);

  // The getMore reply {cursor: {nextBatch, id, ns}}; throws CursorNotFound (43) for an unknown
  // id, or a cursor of another namespace.
  bson::Document get_more(int64_t id, const std::string& ns, int64_t batch_size, int64_t now_ms);

  // Opens a change-stream cursor on `ns`; returns its id. When kMaxStreamCursors are open,
  // closes the least recently used one not checked out, or throws OperationFailed (96) when all
  // are.
  int64_t open_stream(std::string ns, std::shared_ptr<ChangeStreamCursor> stream, int64_t now_ms);
  // getMore on a change-stream cursor: checks it out to the caller until check_in_stream().
  // nullptr when `id` is an ordinary cursor of `ns`; throws CursorNotFound (43) for an unknown
  // id or another namespace, CursorInUse (292) while another getMore has it.
  std::shared_ptr<ChangeStreamCursor> check_out_stream(int64_t id, const std::string& ns,
                                                       int64_t now_ms);
  // Gives a checked-out stream back; `exhausted` closes it. Does nothing when it was killed
  // meanwhile.
  void check_in_stream(int64_t id, bool exhausted, int64_t now_ms);
  // Whether `id` is an open change-stream cursor.
  bool is_stream(int64_t id) const;
  // Closes every change-stream cursor; a getMore running on one fails with (code, message).
  // Rollback does this: the data a stream read may be about to change under it.
  void close_streams(int32_t code, const std::string& message);

  // killCursors: true if the cursor existed. A change stream's running getMore fails with
  // CursorKilled (237).
  bool kill(int64_t id, const std::string& ns);
  // Closes every ordinary cursor of a namespace ("db." prefix closes a database's) — drop does
  // this; change streams report the drop instead.
  void kill_namespace_prefix(const std::string& prefix);
  void expire_idle(int64_t now_ms);
  size_t size() const;

 private:
  struct Cursor {
    std::string ns;
    std::deque<bson::Document> docs;
    int64_t last_used_ms = 0;
    std::shared_ptr<ChangeStreamCursor> stream;  // null for ordinary cursors
    bool checked_out = false;
  };
  static bson::Array take_batch(std::deque<bson::Document>& docs, int64_t batch_size);
  int64_t new_id();
  // Closes the least recently used cursor not checked out (a stream only when `streams_only`);
  // false when there is none.
  bool evict_least_recently_used(bool streams_only);
  size_t stream_count() const;  // callers hold mu_

  mutable std::mutex mu_;
  std::map<int64_t, Cursor> cursors_;
  std::mt19937_64 rng_;
};

}  // namespace mongosim::data
