// The contract between the server core (wire, dispatch, reply envelope) and every command
// implementation (admin commands, data commands).
//
// A handler receives a CommandContext and returns the command-specific reply fields; the core
// adds ok, $clusterTime, operationTime, error labels, write-concern waiting and counters.
// Handlers report failure by throwing CommandError (becomes {ok:0, code, codeName, errmsg,
// ...extra}) or CloseConnection (the connection is dropped without a reply, as mongod does for
// failCommand closeConnection and moreToCome writes on a non-primary).
//
// Handlers run on connection threads, many at once; anything they share must be locked.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "base/command_error.h"
#include "base/error_codes.h"
#include "base/optime.h"
#include "bson/value.h"

namespace mongosim {

// What write concern the command asked for (or the default: majority), parsed by the core.
struct WriteConcern {
  enum class Mode { kNumber, kMajority, kTag };
  Mode mode = Mode::kMajority;
  int32_t w = 1;    // for kNumber; w:0 means unacknowledged
  std::string tag;  // for kTag
  bool j = false;
  int64_t wtimeout_ms = 0;  // 0: wait forever
  bool explicitly_given = false;
};

// What read concern the command asked for (docs/mongodb-behaviour.md, Read concern), parsed and
// validated by the core. The core waits for afterClusterTime and runs the linearizable barrier; a
// data-layer read handler may consult `level` to choose the state it reads.
struct ReadConcern {
  enum class Level { kLocal, kAvailable, kMajority, kLinearizable, kSnapshot };
  Level level = Level::kLocal;
  std::optional<bson::Timestamp> after_cluster_time;
  bool explicitly_given = false;
  // majority / snapshot: the commit point the read is served at (set by the core).
  std::optional<OpTime> read_at;
};

struct CommandContext {
  std::string db;       // $db
  bson::Document body;  // command document with OP_MSG kind-1 sequences merged in
  std::string name;     // canonical command name (first key, resolved through aliases)
  int64_t connection_id = 0;
  std::string app_name;               // from the connection's handshake, may be empty
  std::optional<bson::Value> lsid;    // the lsid document, if sent
  std::optional<int64_t> txn_number;  // set for retryable writes
  WriteConcern write_concern;
  ReadConcern read_concern;
  int64_t now_ms = 0;  // server clock at execution, after fail-point delays ($$NOW)
  // When the command was received: its maxTimeMS counts from here.
  std::chrono::steady_clock::time_point received_at = std::chrono::steady_clock::now();

  // Set by write handlers to the optime of the last oplog entry they produced; the core waits
  // for the write concern on it. Left empty when nothing was written.
  std::optional<OpTime> last_write_optime;
};

using CommandHandler = std::function<bson::Document(CommandContext&)>;

struct CommandSpec {
  std::string name;                  // canonical name, used for serverStatus counters
  std::vector<std::string> aliases;  // e.g. isMaster/ismaster for hello
  CommandHandler handler;
  bool is_write = false;         // needs a writable primary; write concern applies
  bool retryable_write = false;  // eligible for retryable writes (lsid + txnNumber)
  bool secondary_ok = true;      // may run on a secondary
  // Runs in every member state, secondaryOk or not (mongod's AllowedOnSecondary::kAlways): the
  // handshake, the replication protocol, admin commands, and getMore / killCursors, whose cursor
  // was opened by a read that was allowed where it ran.
  bool any_member_state = false;
  bool admin_only = false;  // must be sent to the admin database
  // Whether the command, as sent, runs a change stream (an aggregate whose first stage is
  // $changeStream, a getMore of a change-stream cursor): its retriable errors then carry the
  // "ResumableChangeStreamError" label (docs/mongodb-behaviour.md, Change streams). Null: never.
  std::function<bool(const CommandContext&)> is_change_stream;
};

// Command names are case-sensitive, like mongod's.
class CommandRegistry {
 public:
  void add(CommandSpec spec);  // asserts the name and aliases are new
  const CommandSpec* find(std::string_view name) const;
  std::vector<std::string> canonical_names() const;

 private:
  std::vector<std::unique_ptr<CommandSpec>> specs_;
  std::map<std::string, const CommandSpec*, std::less<>> by_name_;
};

}  // namespace mongosim
