// The oplog: every change to the data, in optime order (docs/mongodb-behaviour.md, Oplog and
// rollback), plus the images a replication layer needs to undo an entry on rollback and a
// findAndModify retry needs to rebuild its reply (docs/mongodb-behaviour.md, Retryable writes).
//
// Invariants: entries are strictly increasing by optime; timestamps never go backwards even if
// the server clock does; at most max_entries() are kept (the oldest are dropped, like a capped
// collection), and dropped_through() is the newest timestamp so dropped: the history before it is
// gone (docs/mongodb-behaviour.md, Change streams).
//
// Thread rules: not synchronised; the Store's data mutex guards it, and every append happens
// under the same lock hold as the change it describes.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/optime.h"
#include "bson/value.h"
#include "query/update_description.h"

namespace mongosim::data {

// The retryable-write identity a write carries into its oplog entry.
struct StatementId {
  bson::Value lsid;  // the lsid document {id: UUID}
  int64_t txn_number = 0;
  int32_t stmt_id = 0;
};

// How an update was written; mongod's oplog shows it in the entry's form (a whole document for a
// replacement, a delta otherwise) and a change stream reports "replace" or "update" from it
// (docs/mongodb-behaviour.md, Change streams). mongosim's 'u' entries always hold the whole new
// document, so the kind travels beside it.
enum class UpdateKind : uint8_t { kReplacement, kOperators, kPipeline };
std::string_view update_kind_name(UpdateKind kind);
// The kind named `name`, or nullopt.
std::optional<UpdateKind> parse_update_kind(std::string_view name);

struct OplogEntry {
  OpTime optime;
  int64_t wall_ms = 0;
  char op = 'n';  // i, u, d, c, n
  std::string ns;
  bson::Value ui;    // collection UUID (null for no-ops)
  bson::Document o;  // inserted doc, new doc (full replacement), {_id} for d, command
  std::optional<bson::Document> o2;                   // {_id} for u
  UpdateKind update_kind = UpdateKind::kReplacement;  // for u
  std::optional<StatementId> statement;
  // Kept for rollback and findAndModify retries; not part of the wire shape.
  std::optional<bson::Document> pre_image;
  std::optional<bson::Document> post_image;
  // A u entry's change-stream updateDescription as the event's field (nullopt inside: reported
  // as a replacement), computed by the first change stream that reads the entry and kept for
  // the others: it depends on the entry alone, and with a stream per process every stream read
  // every entry and diffed it again. A Value shares its document, so an event takes it without
  // a copy (a stage that changes it clones it first). Under the Store's data mutex, like the
  // entry.
  mutable std::optional<std::optional<bson::Value>> described;

  // {ts, t, v: 2, op, ns, ui?, o, o2?, updateKind?, wall, lsid?, txnNumber?, stmtId?}
  // (docs/mongodb-behaviour.md, Oplog and rollback); updateKind only on u entries.
  bson::Document to_document() const;
};

class Oplog {
 public:
  static constexpr size_t kMaxEntries = 200'000;

  Oplog() = default;
  // An oplog capped at `max_entries` (tests of lost history), at most kMaxEntries.
  explicit Oplog(size_t max_entries);

  // The next optime: (max(now seconds, last seconds), increment) strictly above the last.
  OpTime next_optime(int64_t now_ms, int64_t term) const;
  void append(OplogEntry entry);  // asserts the optime increases
  // Rollback: drops every entry after `common_point`; returns how many.
  size_t truncate_after(OpTime common_point);

  OpTime last_optime() const { return last_; }
  // The newest entry's timestamp, readable without the store's mutex (for $$CLUSTER_TIME in
  // evaluation contexts built before the mutex is taken).
  bson::Timestamp last_timestamp() const {
    uint64_t bits = last_ts_bits_.load(std::memory_order_acquire);
    return bson::Timestamp{static_cast<uint32_t>(bits >> 32), static_cast<uint32_t>(bits)};
  }
  int64_t last_wall_ms() const { return last_wall_ms_; }
  const std::deque<OplogEntry>& entries() const { return entries_; }
  size_t max_entries() const { return max_entries_; }
  // The newest timestamp the cap dropped; null (0, 0) while nothing was dropped.
  bson::Timestamp dropped_through() const { return dropped_through_; }
  // The newest optime and wall time, readable without the store's mutex: replication's heartbeat,
  // vote and tick paths and every reply's cluster time read them while a write may hold that
  // mutex for as long as it runs.
  OpTime published_last() const {
    std::lock_guard lock(published_mu_);
    return published_last_;
  }
  int64_t published_wall_ms() const {
    std::lock_guard lock(published_mu_);
    return published_wall_ms_;
  }

 private:
  std::deque<OplogEntry> entries_;
  size_t max_entries_ = kMaxEntries;
  bson::Timestamp dropped_through_;
  void set_last(OpTime optime) {
    last_ = optime;
    last_ts_bits_.store(uint64_t{optime.ts.seconds} << 32 | optime.ts.increment,
                        std::memory_order_release);
  }

  void publish() {
    std::lock_guard lock(published_mu_);
    published_last_ = last_;
    published_wall_ms_ = last_wall_ms_;
  }

  OpTime last_;
  std::atomic<uint64_t> last_ts_bits_{0};
  int64_t last_wall_ms_ = 0;
  mutable std::mutex published_mu_;  // a leaf lock: nothing is taken while holding it
  OpTime published_last_;
  int64_t published_wall_ms_ = 0;
};

}  // namespace mongosim::data
