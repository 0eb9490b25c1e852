// What the layers above storage may ask of it: the newest oplog entry (OplogPosition, read by
// the server core for hello, replSetGetStatus and read concern) and everything the replication
// coordinator does to the data (ReplicationStorage: fetch answers, applying fetched entries, the
// new primary's no-op, durability, rollback). data::Store implements both; the coordinator and
// the server core hold a reference and never see the store itself.
//
// Thread rules (every method): callable from any thread; the implementation takes its own locks
// and never calls back into its caller. Where a method needs the member's ReplStateLock
// (repl_state_lock.h) held, its comment says how; the caller takes it, never the storage. Optimes
// compare as (term, timestamp); a null optime means "no entry". Counts are entries, never bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/optime.h"
#include "bson/value.h"

namespace mongosim::data {

// Rollback (docs/mongodb-behaviour.md, Oplog and rollback), performed by the replication layer
// with the sync source's help.
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

// The newest oplog entry. Never waits for the data lock (which a write may hold as long as it
// runs): both values are a copy the oplog publishes under a leaf lock after each change.
class OplogPosition {
 public:
  virtual ~OplogPosition() = default;
  // The optime of the newest oplog entry; null before the first write.
  virtual OpTime last_applied() const = 0;
  // Its wall time, milliseconds since the Unix epoch on the server clock; 0 before the first
  // write.
  virtual int64_t last_write_date_ms() const = 0;
};

// Everything the replication coordinator does to the data. Oplog entries are documents
// {ts, t, v, op, ns, ui, o, o2, wall, lsid, txnNumber, stmtId}, oldest first.
class ReplicationStorage : public OplogPosition {
 public:
  // --- fetching (a sync source answers, a secondary applies) ---------------------------------
  // A sync source's answer to a fetch, from one hold of the data lock: the entries after `after`
  // (at most max_entries) when the oplog holds an entry at exactly `after` (or `after` is null),
  // else nullopt (the fetcher's history diverged). Blocks only on the data lock.
  virtual std::optional<std::vector<bson::Document>> oplog_continuing(OpTime after,
                                                                      size_t max_entries) const = 0;
  // Applies one fetched entry: the change and the same entry (same optime) in the local oplog.
  // An entry at or below last_applied() is skipped. Throws CommandError 2 (BadValue) naming the
  // field for an entry it cannot read. The caller holds the ReplStateLock shared with a
  // non-writable published state. Blocks only on the data lock.
  virtual void apply_oplog_entry(const bson::Document& entry) = 0;
  // Appends an {op: "n"} entry with `message` in `term`; returns its optime. The caller holds
  // the ReplStateLock exclusive, or shared with "writable in `term`" published. Throws
  // std::logic_error if the oplog already ends in a newer term, CommandError if the journal
  // refuses the append (full). Blocks only on the data lock.
  virtual OpTime append_noop(const std::string& message, int64_t term) = 0;

  // --- durability (--dbpath) ------------------------------------------------------------------
  // The newest optime on disk; last_applied() when nothing is journalled. Never blocks.
  virtual OpTime last_durable() const = 0;
  // Forces a journal commit and blocks until `optime` is on disk (bounded by the journal's own
  // limit, a minute); true at once when nothing is journalled. False if it never got there: the
  // journal stopped, or a rollback truncated the entry away.
  virtual bool wait_durable(OpTime optime) const = 0;

  // --- rollback ---------------------------------------------------------------------------------
  // Oplog entries with an optime >= from (inclusive), at most max_entries. Blocks only on the
  // data lock.
  virtual std::vector<bson::Document> oplog_from(OpTime from, size_t max_entries) const = 0;
  // The document with this _id in "db.coll", if any (a sync source answers refetches).
  virtual std::optional<bson::Document> find_by_id(const std::string& ns,
                                                   const bson::Value& id) const = 0;
  virtual bool collection_exists(const std::string& ns) const = 0;
  // Restores each listed document to the source's version, drops the listed namespaces,
  // truncates the oplog after the common point and forgets the session records of the removed
  // entries, all under one data-lock hold. The caller holds the ReplStateLock shared. Throws
  // std::logic_error if the oplog's newest entry is no longer request.expected_last.
  virtual RollbackOutcome roll_back(const RollbackRequest& request) = 0;
  // Then, once the rollback files are on disk: records the truncation in the journal and fsyncs
  // it (blocks for that write), so a restart does not bring the removed entries back. Requires
  // the oplog to end at common_point: the caller (the fetcher, the only writer on a member in
  // ROLLBACK) appends nothing in between.
  virtual void journal_truncation(OpTime common_point) = 0;
};

}  // namespace mongosim::data
