// Open cursors of find, aggregate, listIndexes and listCollections: the documents not yet
// returned, handed out in batches by getMore (docs/mongodb-behaviour.md, Reads and cursors).
//
// Invariants: cursor ids are positive, non-zero int64 values never reused while open; at most
// kMaxCursors are open (opening one more closes the least recently used); a cursor idle for
// kIdleTimeoutMs (mongod's cursorTimeoutMillis, 10 minutes) is closed.
//
// Thread rules: internally synchronised; independent of the data mutex.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "bson/value.h"

namespace mongosim::data {

class CursorManager {
 public:
  static constexpr size_t kMaxCursors = 10'000;
  static constexpr int64_t kIdleTimeoutMs = 10 * 60 * 1000;
  static constexpr int64_t kDefaultBatchSize = 101;
  // A batch is cut once it reaches this many bytes, as mongod cuts at 16 MiB.
  static constexpr size_t kMaxBatchBytes = 16 * 1024 * 1024;

  // Takes the first batch out of `docs` and, if any remain, opens a cursor on the rest.
  // Returns the {cursor: {firstBatch, id, ns}} reply.
  bson::Document open(std::string ns, std::deque<bson::Document> docs, int64_t batch_size,
                      bool single_batch, int64_t now_ms);

  // The getMore reply {cursor: {nextBatch, id, ns}}; throws CursorNotFound (43) for an unknown
  // id, or a cursor of another namespace.
  bson::Document get_more(int64_t id, const std::string& ns, int64_t batch_size, int64_t now_ms);

  // killCursors: true if the cursor existed.
  bool kill(int64_t id, const std::string& ns);
  // Closes every cursor of a namespace ("db." prefix closes a database's) — drop does this.
  void kill_namespace_prefix(const std::string& prefix);
  void expire_idle(int64_t now_ms);
  size_t size() const;

 private:
  struct Cursor {
    std::string ns;
    std::deque<bson::Document> docs;
    int64_t last_used_ms = 0;
  };
  static bson::Array take_batch(std::deque<bson::Document>& docs, int64_t batch_size);
  int64_t new_id();
  void evict_least_recently_used();

  mutable std::mutex mu_;
  std::map<int64_t, Cursor> cursors_;
  std::mt19937_64 rng_{std::random_device{}()};
};

}  // namespace mongosim::data
