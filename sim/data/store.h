// The data layer: databases, collections, indexes, the oplog, the session transaction table,
// cursors and the TTL monitor, plus the data commands that use them (insert, update, delete,
// findAndModify, find, getMore, killCursors, count, aggregate, createIndexes, listIndexes,
// listCollections, drop, dropDatabase).
//
// Replication contract (so a replication layer fits under it without a rewrite):
// - every write produces exactly one oplog entry per document changed, appended under the same
//   lock as the change, carrying an OpTime, the wall time and the retryable-write session info;
// - a write command reports the optime of its last entry in CommandContext::last_write_optime,
//   and the server core waits for the write concern on it after the handler returns.
//
// Thread-safety: every public member may be called from any connection thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/failpoint.h"
#include "base/optime.h"
#include "base/repl_state_lock.h"
#include "command/command.h"

namespace mongosim::data {

class Journal;

// Rollback (docs/mongodb-behaviour.md, Oplog and rollback), performed by the replication layer with
// the sync source's help.
struct RollbackDocument {
  std::string ns;
  bson::Value id;
  std::optional<bson::Document> source_version;  // absent: the source has no such document
};

struct RollbackRequest {
  OpTime expected_last;  // the local oplog's newest optime the plan was made from
  OpTime common_point;
  std::vector<RollbackDocument> documents;
  std::vector<std::string> drop_namespaces;  // created after the common point, not on the source
};

// The pre-rollback version of every rolled-back document that existed, per collection: what
// goes to <dbpath>/rollback/<collection uuid>/removed.<time>.bson.
struct RemovedDocuments {
  std::string ns;
  bson::Value uuid;
  std::vector<bson::Document> documents;
};

struct RollbackOutcome {
  std::vector<RemovedDocuments> removed;
  size_t oplog_entries_removed = 0;
  size_t statements_forgotten = 0;
};

struct StoreOptions {
  ServerClock* clock = nullptr;      // required
  FailPoints* failpoints = nullptr;  // required
  // Read on every TTL pass so setParameter takes effect without a restart.
  std::function<int64_t()> ttl_monitor_sleep_secs = [] { return int64_t{60}; };
  // The term written into new optimes (1 for a single-member set, 0 for a standalone).
  std::function<int64_t()> current_term = [] { return int64_t{1}; };
  // False on a secondary: the TTL monitor then skips its pass (docs/mongodb-behaviour.md, TTL
  // monitor).
  std::function<bool()> can_accept_writes = [] { return true; };
  // The member's replication-state lock (repl_state_lock.h), shared with the replication layer.
  // Null: the store uses its own, unmanaged, answering from current_term and can_accept_writes.
  ReplStateLock* repl_state_lock = nullptr;
};

class Store {
 public:
  explicit Store(StoreOptions options);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  void register_commands(CommandRegistry& registry);

  // The TTL monitor thread; stop() joins it. Only the primary runs TTL deletes.
  void start_ttl_monitor();
  void stop();

  // The optime and wall time of the newest oplog entry (null optime before the first write).
  OpTime last_applied() const;
  int64_t last_write_date_ms() const;

  // Oplog entries ({ts, t, v, op, ns, ui, o, o2, wall, lsid, txnNumber, stmtId};
  // docs/mongodb-behaviour.md, Oplog and rollback) with an optime after `after`, oldest first, at
  // most max_entries of them.
  std::vector<bson::Document> oplog_after(OpTime after, size_t max_entries) const;
  // Whether the oplog holds an entry at exactly `optime` (a fetcher's divergence check).
  bool has_oplog_entry(OpTime optime) const;
  // A sync source's answer to a fetch: the entries after `after` (as oplog_after) when the oplog
  // holds an entry at exactly `after` (or `after` is null), else nothing. One hold of the data
  // lock: a rollback or an apply between the check and the read could otherwise answer "found"
  // with entries of another history than the one `after` belongs to.
  std::optional<std::vector<bson::Document>> oplog_continuing(OpTime after,
                                                              size_t max_entries) const;

  // Replication (sim/data/oplog_apply.cpp). A secondary applies an entry fetched from its sync
  // source: the change, and the same entry (same optime) in its own oplog. Entries whose full
  // optime (term, timestamp) is at or below last_applied() are skipped, so a re-fetched batch is
  // harmless. Throws CommandError 2 (BadValue) naming the field for an entry it cannot read. The
  // caller holds the ReplStateLock shared with a non-writable published state (the fetcher), or
  // runs before anything else does (journal replay at startup).
  void apply_oplog_entry(const bson::Document& entry);
  // An {op: "n"} entry in `term` (the new primary's, a linearizable read's); returns its optime.
  // The caller holds the ReplStateLock exclusive, or shared with "writable in `term`" published.
  // Throws std::logic_error if the oplog already ends in a newer term.
  OpTime append_noop(const std::string& message, int64_t term);

  // Durability (--dbpath). Replay the journal with apply_oplog_entry() first, then attach it:
  // from then on every oplog entry is appended to it under the data lock. The journal must
  // outlive the store's use of it (detach with nullptr).
  void attach_journal(Journal* journal);
  // The newest optime on disk (last_applied() without a journal).
  OpTime last_durable() const;
  // Blocks until `optime` is on disk; true at once without a journal.
  bool wait_durable(OpTime optime) const;

  // Rollback support. Oplog entries with an optime >= from (inclusive), oldest first.
  std::vector<bson::Document> oplog_from(OpTime from, size_t max_entries) const;
  // The document with this _id in "db.coll", if any (the sync source answers refetches).
  std::optional<bson::Document> find_by_id(const std::string& ns, const bson::Value& id) const;
  bool collection_exists(const std::string& ns) const;
  // Restores each listed document to the source's version, drops the listed namespaces,
  // truncates the oplog after the common point and forgets the session records of the removed
  // entries, all under one data-lock hold. Throws std::logic_error if the oplog's newest entry
  // is no longer request.expected_last.
  RollbackOutcome roll_back(const RollbackRequest& request);
  // Then, once the rollback files are on disk: records the truncation in the journal (fsynced),
  // so a restart does not resurrect the removed entries. The fetcher is the only writer on a
  // member in ROLLBACK, so nothing is appended in between.
  void journal_truncation(OpTime common_point);

  // Runs one TTL pass now (the monitor thread calls this); returns the documents deleted.
  size_t run_ttl_pass();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace mongosim::data
