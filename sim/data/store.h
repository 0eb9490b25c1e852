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

#include "base/change_signal.h"
#include "base/clock.h"
#include "base/failpoint.h"
#include "base/optime.h"
#include "base/repl_state_lock.h"
#include "command/command.h"
#include "data/replication_storage.h"

namespace mongosim::data {

class Journal;

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
  // Change streams (docs/mongodb-behaviour.md, Change streams). The majority commit point they
  // read through (the server's ReplicationView; may throw CommandError 134); null: what this
  // store applied, as a single node commits.
  std::function<OpTime()> majority_read_point;
  // Whether this member runs with --replSet: change streams need a replica set (40573).
  std::function<bool()> replica_set = [] { return true; };
  // Notified on every oplog append and truncation; whoever moves the commit point notifies it
  // too, and its shutdown() ends every waiting getMore. Null: the store's own. Must outlive the
  // store.
  ChangeSignal* change_signal = nullptr;
  // The oplog's cap in entries; 0: data::Oplog::kMaxEntries. Smaller only in tests.
  size_t oplog_max_entries = 0;
  // Unset: cursor ids are random, as mongod's. Set: they follow this seed (the wire fuzzer, whose
  // fixed inputs name cursors by id; sim/fuzz/wire_target.h).
  std::optional<uint64_t> cursor_id_seed;
};

class Store final : public ReplicationStorage {
 public:
  explicit Store(StoreOptions options);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  void register_commands(CommandRegistry& registry);

  // The TTL monitor thread; stop() joins it. Only the primary runs TTL deletes.
  void start_ttl_monitor();
  void stop();

  // ReplicationStorage (data/replication_storage.h states each contract; oplog_apply.cpp and
  // store_durability.cpp implement most of them).
  OpTime last_applied() const override;
  int64_t last_write_date_ms() const override;
  std::optional<std::vector<bson::Document>> oplog_continuing(OpTime after,
                                                              size_t max_entries) const override;
  // Also the journal replay at startup, which runs before anything else does.
  void apply_oplog_entry(const bson::Document& entry) override;
  OpTime append_noop(const std::string& message, int64_t term) override;
  OpTime last_durable() const override;
  bool wait_durable(OpTime optime) const override;
  std::vector<bson::Document> oplog_from(OpTime from, size_t max_entries) const override;
  std::optional<bson::Document> find_by_id(const std::string& ns,
                                           const bson::Value& id) const override;
  bool collection_exists(const std::string& ns) const override;
  RollbackOutcome roll_back(const RollbackRequest& request) override;
  void journal_truncation(OpTime common_point) override;

  // Oplog entries ({ts, t, v, op, ns, ui, o, o2, wall, lsid, txnNumber, stmtId};
  // docs/mongodb-behaviour.md, Oplog and rollback) with an optime after `after`, oldest first, at
  // most max_entries of them.
  std::vector<bson::Document> oplog_after(OpTime after, size_t max_entries) const;
  // Whether the oplog holds an entry at exactly `optime` (a fetcher's divergence check).
  bool has_oplog_entry(OpTime optime) const;

  // Durability (--dbpath). Replay the journal with apply_oplog_entry() first, then attach it:
  // from then on every oplog entry is appended to it under the data lock. The journal must
  // outlive the store's use of it (detach with nullptr).
  void attach_journal(Journal* journal);

  // Runs one TTL pass now (the monitor thread calls this); returns the documents deleted.
  size_t run_ttl_pass();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace mongosim::data
