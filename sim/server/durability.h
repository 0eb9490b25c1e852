// What --dbpath DIR holds, and startup recovery from it:
//   DIR/mongod.lock                       held (flock) while a server uses DIR
//   DIR/journal/oplog.journal             every oplog entry, see data/journal.h
//   DIR/replset.election.bson             term, LastVote and the replica-set config (mongod's
//                                         local.replset.election + local.system.replset),
//                                         replaced atomically: temp file + fsync + rename
//   DIR/rollback/<uuid>/removed.<time>.bson  documents a rollback removed
//                                         (docs/mongodb-behaviour.md, Oplog and rollback)
//   DIR/minvalid.bson                     {ts, t}: after a rollback, the optime this member must
//                                         apply through before it may stand for election or
//                                         serve majority reads (mongod's minValid)
//
// Without --dbpath nothing is written and everything lives in memory, as before.
//
// Thread rules: open() and recover() from main before the server starts; save_replica_state()
// and write_rollback_file() from replication threads (save_replica_state serialises itself).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bson/value.h"
#include "data/journal.h"
#include "data/store.h"
#include "repl/config.h"
#include "repl/topology.h"

namespace mongosim::server {

struct PersistedReplicaState {
  repl::PersistentState election;
  std::optional<repl::ReplSetConfig> config;
  OpTime min_valid;  // DIR/minvalid.bson; null when absent
};

class DbPath {
 public:
  // Creates DIR (and its subfolders) if needed and locks it. Throws std::runtime_error naming
  // the path when it cannot, or when another process holds the lock.
  explicit DbPath(std::string dir);
  ~DbPath();
  DbPath(const DbPath&) = delete;
  DbPath& operator=(const DbPath&) = delete;

  const std::string& dir() const { return dir_; }

  // Replays the journal into `store` (catalog, documents, oplog, session table), drops a torn
  // tail with a log line, then opens the journal for appending and attaches it to the store.
  // Throws data::JournalCorrupt for corruption before the tail.
  void recover(data::Store& store);
  data::Journal* journal() { return journal_.get(); }
  // Detaches and closes the journal (after the server and replication have stopped).
  void close(data::Store& store);

  // The persisted term, vote and config; nullopt when the file does not exist yet. Throws
  // std::runtime_error naming the file if it cannot be read.
  std::optional<PersistedReplicaState> load_replica_state() const;
  // Writes it durably before returning (temp + fsync + rename + fsync of the directory).
  void save_replica_state(const PersistedReplicaState& state);

  // minValid (see above): null when never written. Saved like the replica state.
  OpTime load_min_valid() const;
  void save_min_valid(OpTime optime);

  // Writes one collection's removed documents to rollback/<uuid>/removed.<time>.bson and fsyncs it;
  // returns the file's path.
  std::string write_rollback_file(const data::RemovedDocuments& removed, int64_t now_ms);

 private:
  std::string dir_;
  int lock_fd_ = -1;
  std::unique_ptr<data::Journal> journal_;
  std::mutex save_mu_;
};

// Writes `bytes` to dir/name atomically and durably. Throws std::runtime_error naming the file.
void write_file_atomically(const std::string& dir, const std::string& name,
                           const std::string& bytes);

}  // namespace mongosim::server
