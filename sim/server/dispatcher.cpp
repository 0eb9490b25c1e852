#include "server/dispatcher.h"

#include "base/log.h"
#include "server/read_concern.h"
#include "server/reply_envelope.h"

namespace mongosim::server {

namespace {

constexpr const char* kUnknownCommandMetric = "<UNKNOWN>";
// Client metadata bigger than this is refused by mongod (ClientMetadataDocumentTooLarge).
constexpr size_t kMaxAppNameBytes = 128;

bool is_hello_name(std::string_view name) {
  return name == "hello" || name == "isMaster" || name == "ismaster";
}

bool is_statement_write(std::string_view name) {
  return name == "insert" || name == "update" || name == "delete";
}

std::string_view read_preference_mode(const bson::Document& body) {
  const bson::Value* rp = body.get("$readPreference");
  if (rp == nullptr || !rp->is_document()) return "primary";
  const bson::Value* mode = rp->as_document().get("mode");
  return mode != nullptr && mode->is_string() ? std::string_view(mode->as_string()) : "primary";
}

// The first hello on a connection may carry client metadata; later ones may not
// (docs/mongodb-behaviour.md, Hello).
void record_handshake(ConnectionState& conn, const bson::Document& body) {
  if (const bson::Value* ok = body.get("helloOk"); ok != nullptr && ok->truthy())
    conn.hello_ok = true;
  const bson::Value* client = body.get("client");
  if (client == nullptr) return;
  if (conn.metadata_received) {
    throw CommandError(code::kClientMetadataCannotBeMutated,
                       "The client metadata document may only be sent in the first hello");
  }
  conn.metadata_received = true;
  if (!client->is_document()) return;
  const bson::Value* app = client->as_document().get("application");
  if (app == nullptr || !app->is_document()) return;
  const bson::Value* name = app->as_document().get("name");
  if (name == nullptr || !name->is_string()) return;
  conn.app_name = name->as_string().substr(0, kMaxAppNameBytes);
  log_event(Severity::kInfo, "NETWORK", log_id::kClientMetadata, "conn" + std::to_string(conn.id),
            "client metadata", bson::Document{{"appName", bson::V(conn.app_name)}});
}

// Session fields (docs/mongodb-behaviour.md, Retryable writes): lsid and txnNumber, validated as
// mongod does.
void extract_session(const bson::Document& body, const CommandSpec& spec, bool replication_enabled,
                     CommandContext& ctx) {
  if (const bson::Value* lsid = body.get("lsid")) {
    if (!lsid->is_document()) {
      throw CommandError(code::kTypeMismatch, "BSON field 'lsid' is the wrong type '" +
                                                  std::string(bson::type_name(lsid->type())) +
                                                  "', expected type 'object'");
    }
    ctx.lsid = *lsid;
  }
  const bson::Value* txn = body.get("txnNumber");
  if (txn == nullptr) return;
  // A 64-bit integer only (the sessions spec: drivers send a long), as mongod's parser takes it.
  if (txn->type() != bson::Type::kInt64) {
    throw CommandError(code::kTypeMismatch, "BSON field 'txnNumber' is the wrong type '" +
                                                std::string(bson::type_name(txn->type())) +
                                                "', expected type 'long'");
  }
  if (!replication_enabled) {
    throw CommandError(code::kIllegalOperation,
                       "Transaction numbers are only allowed on a replica set member or mongos");
  }
  if (!ctx.lsid) {
    throw CommandError(code::kInvalidOptions,
                       "Transaction number requires a session ID to also be specified");
  }
  if (body.has("autocommit") || body.has("startTransaction")) {
    throw CommandError(code::kIllegalOperation,
                       "Multi-document transactions are not supported by mongosim");
  }
  if (!spec.retryable_write) {
    throw CommandError(50768,
                       "txnNumber may only be provided for multi-document transactions and "
                       "retryable write commands. autocommit:false was not provided, and " +
                           spec.name + " is not a retryable write command.");
  }
  ctx.txn_number = txn->as_int64();
}

}  // namespace

std::string command_name_of(const bson::Document& body) {
  return body.empty() ? std::string() : body.first_key();
}

struct Dispatcher::Prepared {
  const CommandSpec* spec = nullptr;
  std::string invoked_name;
  CommandContext ctx;
  bool secondary_ok = false;
  bool retryable_write = false;
  bool change_stream = false;  // decided before the command runs, as mongod's CurOp records it
  OpTime applied_before;
  std::optional<FailCommandAction> fail_action;
};

DispatchOutcome Dispatcher::run(ConnectionState& connection, DispatchRequest request) {
  Prepared p;
  p.invoked_name = command_name_of(request.body);
  p.spec = server_.registry.find(p.invoked_name);
  server_.metrics.count_command(p.spec ? std::string_view(p.spec->name) : kUnknownCommandMetric,
                                request.body);
  p.ctx.db = std::move(request.db);
  p.ctx.body = std::move(request.body);
  p.change_stream = p.spec != nullptr && p.spec->is_change_stream && !p.ctx.body.empty() &&
                    p.spec->is_change_stream(p.ctx);
  p.ctx.connection_id = connection.id;
  p.ctx.now_ms = server_.clock.now_ms();
  p.secondary_ok = request.secondary_ok || read_preference_mode(p.ctx.body) != "primary";
  p.applied_before = server_.effective_last_applied();
  DispatchOutcome out;
  try {
    out = execute(connection, p);
  } catch (const CommandError& e) {
    out.reply = error_reply(e.code(), e.what(), e.extra());
  } catch (const CloseConnection&) {
    out.close_connection = true;
    return out;
  } catch (const std::exception& e) {
    out.reply = error_reply(code::kInternalError, std::string("internal error: ") + e.what());
  }
  if (const bson::Value* ok = out.reply.get("ok"); ok != nullptr && !ok->truthy()) {
    const bson::Value* code = out.reply.get("code");
    int32_t error_code = code != nullptr
                             ? code->number_as_exact_int32().value_or(code::kUnknownError)
                             : code::kUnknownError;
    if (!out.reply.has("$clusterTime")) finish(p, out.reply, error_code, std::nullopt);
    server_.metrics.count_failure(p.spec ? std::string_view(p.spec->name) : kUnknownCommandMetric);
    log_event(Severity::kInfo, "COMMAND", log_id::kCommandFailed,
              "conn" + std::to_string(connection.id), "Command failed",
              bson::Document{{"command", bson::V(p.invoked_name)},
                             {"db", bson::V(p.ctx.db)},
                             {"code", bson::V(error_code)},
                             {"errmsg", *out.reply.get("errmsg")}});
  }
  return out;
}

DispatchOutcome Dispatcher::execute(ConnectionState& connection, Prepared& p) {
  if (p.spec == nullptr) {
    throw CommandError(code::kCommandNotFound, "no such command: '" + p.invoked_name + "'");
  }
  const CommandSpec& spec = *p.spec;
  CommandContext& ctx = p.ctx;
  ctx.name = spec.name;
  if (is_hello_name(p.invoked_name)) record_handshake(connection, ctx.body);
  ctx.app_name = connection.app_name;
  if (spec.admin_only && ctx.db != "admin") {
    throw CommandError(code::kUnauthorized,
                       spec.name + " may only be run against the admin database.");
  }
  ReplicaSnapshot replica = server_.replica.snapshot();
  extract_session(ctx.body, spec, replica.replication_enabled, ctx);
  p.retryable_write = ctx.txn_number.has_value();

  // failCommand comes before the state checks, so it can fail commands on any member
  // (docs/mongodb-behaviour.md, Fail points).
  if (spec.name != "configureFailPoint") {
    // failCommands may list the canonical name or the alias the client used (isMaster).
    p.fail_action = server_.failpoints.match_fail_command(spec.name, connection.app_name);
    if (!p.fail_action && p.invoked_name != spec.name) {
      p.fail_action = server_.failpoints.match_fail_command(p.invoked_name, connection.app_name);
    }
  }
  if (p.fail_action) {
    if (p.fail_action->block_ms > 0) server_.sleep_unless_shutdown(p.fail_action->block_ms);
    if (p.fail_action->close_connection) throw CloseConnection{};
    if (p.fail_action->error_code) {
      throw CommandError(*p.fail_action->error_code, "Failing command via 'failCommand' failpoint");
    }
  }

  // The order of docs/mongodb-behaviour.md, Non-primary answers: opt-in reads without secondaryOk,
  // writes, then "recovering". Read the state afresh: a command held by blockConnection may meet a
  // member that stepped down meanwhile. $$NOW too: mongod evaluates it when the command runs, after
  // the delay, so a command that executes late (a lease start, an expiry test) sees the late time.
  if (p.fail_action) {
    replica = server_.replica.snapshot();
    ctx.now_ms = server_.clock.now_ms();
  }
  if (!replica.is_writable_primary() && !spec.any_member_state) {
    const char* primary_word = connection.hello_ok ? "primary" : "master";
    if (!spec.is_write && !p.secondary_ok) {
      throw CommandError(code::kNotPrimaryNoSecondaryOk,
                         std::string("not ") + primary_word + " and secondaryOk=false");
    }
    if (spec.is_write || !spec.secondary_ok) {
      throw CommandError(code::kNotWritablePrimary, std::string("not ") + primary_word);
    }
    if (!replica.is_secondary())
      throw CommandError(code::kNotPrimaryOrSecondary, "node is recovering");
  }

  if (spec.is_write) ctx.write_concern = parse_write_concern(ctx.body, replica.replication_enabled);
  ctx.read_concern = parse_read_concern(ctx.body, spec.name, replica.replication_enabled);
  const bool linearizable = ctx.read_concern.level == ReadConcern::Level::kLinearizable;
  if (linearizable && !replica.is_writable_primary()) {
    throw CommandError(code::kNotWritablePrimary,
                       "cannot satisfy linearizable read concern on non-primary node");
  }
  const int64_t max_time_ms = parse_max_time_ms(ctx.body);
  wait_for_read_concern(server_, ctx.read_concern, max_time_ms);
  if (ctx.read_concern.level == ReadConcern::Level::kMajority ||
      ctx.read_concern.level == ReadConcern::Level::kSnapshot) {
    ctx.read_concern.read_at = server_.replication().majority_read_point();
  }

  DispatchOutcome out;
  out.reply = spec.handler(ctx);
  if (linearizable) server_.replication().linearizable_barrier(max_time_ms);
  if (replica.config && is_statement_write(spec.name) && !out.reply.has("opTime")) {
    // Replica-set write replies carry the primary's opTime and electionId
    // (docs/mongodb-behaviour.md, Reply envelope).
    OpTime optime = ctx.last_write_optime.value_or(server_.effective_last_applied());
    out.reply.append("opTime", bson::V(optime.to_document()));
    out.reply.append("electionId", bson::Value::object_id(election_id_for_term(replica.term)));
  }
  std::optional<int32_t> wce_code;
  if (spec.is_write && !out.reply.has("writeConcernError")) {
    std::optional<bson::Document> wce;
    if (p.fail_action && p.fail_action->write_concern_error) {
      // Replaces the real wait (docs/mongodb-behaviour.md, Fail points).
      wce = p.fail_action->write_concern_error;
    } else if (!(ctx.write_concern.mode == WriteConcern::Mode::kNumber &&
                 ctx.write_concern.w == 0)) {
      // A write that changed nothing (no match, identical document) waits for this member's newest
      // optime, as mongod waits for the client's last op set to the system's: else a deposed
      // primary could answer "no match" at majority from data that is rolled back. That optime
      // is then its operationTime, as the last op is mongod's: what the write concern covered.
      // The wait is for the newest oplog entry: before a one-member set's first write (and after
      // its restart, until its next write) the newest optime is the set's initiation optime,
      // which names no entry, so no journal ever holds it and a journaled wait for it could only
      // time out. mongod's last op is always an entry it wrote ("initiating set", "new primary").
      std::optional<OpTime> wait_optime = ctx.last_write_optime;
      if (!wait_optime && replica.config) {
        const OpTime applied = server_.last_applied();  // null when the oplog is empty
        wait_optime = applied;
        ctx.last_write_optime =
            applied < replica.initiate_optime ? replica.initiate_optime : applied;
      }
      server_.failpoints.pause_while_set("hangBeforeWaitingForWriteConcern",
                                         [this] { return server_.shutting_down(); });
      wce = server_.write_concern_waiter->wait(ctx.write_concern, wait_optime);
    }
    if (wce) out.reply.append("writeConcernError", bson::V(std::move(*wce)));
  }
  if (const bson::Value* wce = out.reply.get("writeConcernError");
      wce != nullptr && wce->is_document()) {
    // A fail point's writeConcernError may carry any number: one that is not an int32 is no code.
    if (const bson::Value* c = wce->as_document().get("code"); c != nullptr) {
      wce_code = c->number_as_exact_int32();
    }
  }
  append_ok(out.reply);
  finish(p, out.reply, std::nullopt, wce_code);
  return out;
}

// Labels and cluster time, for successes and failures alike.
void Dispatcher::finish(Prepared& p, bson::Document& reply, std::optional<int32_t> error_code,
                        std::optional<int32_t> wce_code) {
  LabelInputs in;
  in.retryable_write = p.retryable_write;
  in.change_stream = p.change_stream;
  in.code = error_code;
  in.wce_code = wce_code;
  if (p.fail_action && p.fail_action->error_labels)
    in.override_labels = p.fail_action->error_labels;
  OpTime applied_after = server_.effective_last_applied();
  in.wrote_nothing = applied_after == p.applied_before;
  if (error_code || wce_code || in.override_labels) append_labels(reply, compute_error_labels(in));

  ReplicaSnapshot replica = server_.replica.snapshot();
  if (!replica.config) return;  // standalones and uninitiated members send no cluster time
  bson::Timestamp operation =
      p.ctx.last_write_optime ? p.ctx.last_write_optime->ts : applied_after.ts;
  append_cluster_time(reply, applied_after.ts, operation);
}

}  // namespace mongosim::server
