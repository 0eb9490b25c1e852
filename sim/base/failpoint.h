// Fail points: the test-only fault hooks mongod exposes through configureFailPoint
// (docs/mongodb-behaviour.md, Fail points). The server core owns the registry and the
// configureFailPoint command; the write path asks it whether onPrimaryTransactionalWrite fires.
//
// Thread-safe: configured by one connection while others consult it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bson/value.h"

namespace mongosim {

// What failCommand does to one command that it matched (applied in mongod's order: block,
// close connection, write-concern error or error code).
struct FailCommandAction {
  bool close_connection = false;
  int64_t block_ms = 0;                                  // blockConnection + blockTimeMS
  std::optional<int32_t> error_code;                     // errorCode
  std::optional<std::vector<std::string>> error_labels;  // errorLabels override (may be empty)
  std::optional<bson::Document> write_concern_error;     // writeConcernError
};

// onPrimaryTransactionalWrite: fires inside a retryable write after it has been applied.
struct TransactionalWriteFault {
  bool close_connection = false;
  std::optional<int32_t> fail_before_commit_code;  // failBeforeCommitExceptionCode
};

// Fail points without data, named as mongod names them:
// - hangBeforeOplogAppend: a client write (or TTL delete) pauses after its writability check,
//   just before it takes the optime of its next oplog entry, holding what the
//   write holds;
// - stopReplProducer: the oplog fetcher sends no fetch while it is enabled (a rollback it has
//   already started still runs);
// - hangBeforeWaitingForWriteConcern: a write whose entries are in the oplog pauses before it
//   waits for its write concern (holding nothing), so the member's role can change under it;
// - hangAfterCheckingReplicaSetId (mongosim's own; mongod has none of this name): a replication
//   command that carries a replicaSetId (member to member) pauses after that id was checked
//   against the installed config and before its handler runs (holding nothing), so a config
//   can be installed under it; shutdown ends the pause and fails the command (11600).
inline constexpr std::string_view kPlainFailPoints[] = {"hangBeforeOplogAppend", "stopReplProducer",
                                                        "hangBeforeWaitingForWriteConcern",
                                                        "hangAfterCheckingReplicaSetId"};

class FailPoints {
 public:
  static constexpr int64_t kPausePollMs = 10;

  FailPoints();
  ~FailPoints();

  // The configureFailPoint command: {configureFailPoint: name, mode, data}. Throws CommandError.
  bson::Document configure(const bson::Document& command);

  // failCommand: consulted by the dispatcher before a command runs; consumes one "times" use.
  std::optional<FailCommandAction> match_fail_command(std::string_view command_name,
                                                      std::string_view app_name);

  // onPrimaryTransactionalWrite: consulted by the retryable-write path; consumes one use.
  std::optional<TransactionalWriteFault> match_primary_transactional_write();

  // The plain named fail points (kPlainFailPoints): whether `name` fires now (consumes one use).
  bool fires(std::string_view name);
  // mongod's pauseWhileSet: if `name` fires, blocks while it stays enabled, polling every
  // kPausePollMs, unless `interrupted()` turns true (a paused operation stays interruptible, like
  // an operation context's). Returns whether it paused.
  bool pause_while_set(std::string_view name, const std::function<bool()>& interrupted);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace mongosim
