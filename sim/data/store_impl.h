// Store::Impl: the catalog, oplog, session table and cursors behind the data commands, and
// the one write path every change goes through.
//
// Invariants:
// - every change to a collection happens in apply_insert/apply_update/apply_delete/
//   log_command, which append the oplog entry (and, for retryable writes, the
//   session record) under the same hold of `mu` as the change;
// - a collection exists in `dbs` iff it was created and not dropped; empty databases are
//   removed;
// - a client write appends only inside a WriteScope: the ReplStateLock held shared (taken
//   before `mu`) with a writable published state; each entry is stamped with
//   that state's term, and each change first passes before_write_change(),
//   where a pending step-down interrupts it (11602) before anything of that
//   change is done.
//
// Thread rules: `mu` guards dbs, oplog and sessions. Session check-out is taken before the
// ReplStateLock, which is taken before `mu`. The cursor manager has its own lock and is never
// called while holding `mu` for long.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/repl_state_lock.h"
#include "data/collection.h"
#include "data/cursors.h"
#include "data/journal.h"
#include "data/oplog.h"
#include "data/session_table.h"
#include "data/store.h"
#include "query/query.h"

namespace mongosim::data {

inline constexpr size_t kMaxDocumentBytes = 16 * 1024 * 1024;
inline constexpr size_t kMaxWriteBatchStatements = 100'000;
inline constexpr int32_t kInvalidLength = 16;
inline constexpr int32_t kUpdateResultTooLarge = 17419;

// The retryable-write identity of the statement being executed; null for ordinary writes.
struct RetryableStatement {
  std::string session_key;
  StatementId id;
};

// The retryable-write state of one command: the session check-out and whether it applies.
struct RetryScope {
  std::optional<std::string> session_key;  // set iff the command is a retryable write
  bson::Value lsid;
  int64_t txn_number = 0;
  SessionCheckout::Lease lease;

  bool active() const { return session_key.has_value(); }
  std::optional<RetryableStatement> statement(int32_t stmt_id) const;
};

using Database = std::map<std::string, std::unique_ptr<Collection>>;

struct Store::Impl {
  explicit Impl(StoreOptions opts);

  StoreOptions options;
  ReplStateLock own_repl_lock;  // used when options.repl_state_lock is null
  ReplStateLock* repl_lock = nullptr;
  // The shared hold of the write that holds `mu` through a WriteScope (null otherwise).
  const ReplStateLock::Shared* write_hold = nullptr;
  ChangeSignal own_signal;  // used when options.change_signal is null
  ChangeSignal* signal = nullptr;
  mutable std::mutex mu;
  std::map<std::string, Database> dbs;
  Oplog oplog;
  SessionTable sessions;
  SessionCheckout checkout;
  CursorManager cursors;
  Journal* journal = nullptr;                          // --dbpath only
  std::atomic<Journal*> journal_for_readers{nullptr};  // the same, for readers without mu

  // TTL monitor.
  std::mutex ttl_mu;
  std::condition_variable ttl_wake;
  bool ttl_stopping = false;
  std::thread ttl_thread;

  // --- catalog (callers hold mu) ---
  Collection* find_collection(const std::string& db, const std::string& coll);
  // Creates the collection (with its oplog "c" entry) if needed; sets *created.
  Collection& collection_for_write(const std::string& db, const std::string& coll, int64_t now_ms,
                                   bool* created = nullptr);

  // --- the oplog as a sync source reads it (callers hold mu) ---
  // The entries after `after` (all when null), oldest first, at most max_entries.
  std::vector<bson::Document> entries_after(OpTime after, size_t max_entries) const;
  // Whether the oplog holds an entry at exactly `optime`.
  bool holds_entry(OpTime optime) const;

  // --- the write path (callers hold mu) ---
  OpTime apply_insert(Collection& c, bson::Document doc, const RetryableStatement* stmt,
                      ExecutedStatement record, int64_t now_ms);
  OpTime apply_update(Collection& c, RecordId rid, bson::Document doc, UpdateKind kind,
                      const RetryableStatement* stmt, ExecutedStatement record, int64_t now_ms);
  OpTime apply_delete(Collection& c, RecordId rid, const RetryableStatement* stmt,
                      ExecutedStatement record, int64_t now_ms);
  OpTime log_command(const std::string& db, const bson::Value& ui, bson::Document o,
                     int64_t now_ms);
  // Throws OutOfDiskSpace when the journal is full; call before changing anything.
  void check_journal_capacity() const;
  // Appends to the journal (when attached), then to the oplog, and wakes change streams.
  void oplog_append(OplogEntry entry);

  // A client write calls this before each change (callers hold a WriteScope): journal capacity, the
  // hangBeforeOplogAppend fail point, and the step-down interruption (11602), so an interrupted
  // write has done nothing of the change it was about to make.
  void before_write_change();

  // Begins the retryable-write bookkeeping for a command (check-out, txnNumber check).
  RetryScope begin_retryable(const CommandContext& ctx, bool eligible);

  query::EvalContext eval_context(const CommandContext& ctx) const;

  // TTL: one pass over every TTL index, deleting expired documents through the write path.
  size_t ttl_pass(int64_t now_ms);
  void ttl_loop();

 private:
  OpTime append(OplogEntry entry, const RetryableStatement* stmt, ExecutedStatement record,
                int64_t now_ms);
  std::optional<TransactionalWriteFault> before_commit(const RetryableStatement* stmt);
};

// A client write's hold (see the invariants above): the ReplStateLock shared, then `mu`. A write
// command that got past the dispatcher's not-primary check but finds this member no longer the
// published writable primary was "in flight" at the step-down: require_writable() throws
// InterruptedDueToReplStateChange (11602) as mongod does.
class WriteScope {
 public:
  explicit WriteScope(Store::Impl& impl);
  ~WriteScope();
  WriteScope(const WriteScope&) = delete;
  WriteScope& operator=(const WriteScope&) = delete;
  bool writable() const { return rstl_.state().writable; }
  void require_writable() const;

 private:
  Store::Impl& impl_;
  ReplStateLock::Shared rstl_;
  std::unique_lock<std::mutex> lock_;
};

// Document helpers shared by the command files.
// Puts _id first, generating an ObjectId if missing; throws InvalidIdField (53) for an array,
// regex or undefined _id.
bson::Document with_id_first(bson::Document doc);
// Throws `code` if the encoded document exceeds 16 MiB, 15 Overflow if it nests deeper than a
// stored document may (bson::kMaxStoredNestingDepth: the journal and the replies that carry it
// must be able to read it back); `inserting` picks mongod's text for the latter.
void check_document_size(const bson::Document& doc, int32_t code, const char* what,
                         bool inserting = false);
// Record ids of the documents that match, in natural order (an _id equality uses the index).
std::vector<RecordId> matching_records(const Collection& c, const query::Matcher& m,
                                       const query::EvalContext& ectx, bool first_only);
// The _id of an upsert's new document: the query's _id wins (docs/mongodb-behaviour.md, Upsert
// documents).
bson::Document build_upsert_document(const query::Matcher& m, const query::Update& u,
                                     const query::EvalContext& ectx);
bson::Document write_error(size_t index, const CommandError& e);

// createIndexes' index document (also read back from "c" oplog entries). Throws CommandError.
IndexSpec parse_index_spec(const bson::Value& raw);

void register_write_commands(Store::Impl& impl, CommandRegistry& registry);
void register_find_and_modify(Store::Impl& impl, CommandRegistry& registry);
void register_read_commands(Store::Impl& impl, CommandRegistry& registry);
void register_catalog_commands(Store::Impl& impl, CommandRegistry& registry);

// Change streams (change_stream_commands.cpp; docs/mongodb-behaviour.md, Change streams).
class ChangeStreamCursor;
// aggregate whose pipeline starts with $changeStream: parses it, reads the first batch and opens
// the cursor.
bson::Document open_change_stream(Store::Impl& impl, CommandContext& ctx,
                                  const bson::Array& pipeline, int64_t batch_size);
// getMore on a change-stream cursor the caller checked out (it is checked back in here): waits
// for events up to maxTimeMS (default one second).
bson::Document change_stream_get_more(Store::Impl& impl, CommandContext& ctx, int64_t id,
                                      const std::string& ns,
                                      const std::shared_ptr<ChangeStreamCursor>& cursor,
                                      int64_t batch_size);
// The UpdateKind of a parsed update.
UpdateKind update_kind_of(const query::Update& update);

}  // namespace mongosim::data
