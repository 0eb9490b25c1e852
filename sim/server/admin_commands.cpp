#include "server/admin_commands.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <thread>

#include "server/clock_offset.h"
#include "server/hello.h"
#include "server/wire.h"

namespace mongosim::server {

namespace {

constexpr size_t kMaxHostNameBytes = 256;

void add(ServerContext& server, std::string name, std::vector<std::string> aliases, bool admin_only,
         CommandHandler handler) {
  CommandSpec spec;
  spec.name = std::move(name);
  spec.aliases = std::move(aliases);
  spec.admin_only = admin_only;
  spec.handler = std::move(handler);
  spec.any_member_state = true;
  server.registry.add(std::move(spec));
}

std::string host_name() {
  char name[kMaxHostNameBytes] = {};
  return gethostname(name, sizeof name - 1) == 0 ? name : "localhost";
}

bson::Document build_info() {
  bson::Array version_array;
  for (int32_t part : kVersionArray) version_array.push_back(bson::V(part));
  return bson::Document{{"version", bson::V(kVersionString)},
                        {"gitVersion", bson::V("0000000000000000000000000000000000000000")},
                        {"modules", bson::V(bson::Array{})},
                        {"allocator", bson::V("system")},
                        {"javascriptEngine", bson::V("none")},
                        {"sysInfo", bson::V("deprecated")},
                        {"versionArray", bson::V(std::move(version_array))},
                        {"openssl", bson::V(bson::Document{{"running", bson::V("disabled")},
                                                           {"compiled", bson::V("disabled")}})},
                        {"buildEnvironment", bson::V(bson::Document{})},
                        {"bits", bson::V(int32_t{64})},
                        {"debug", bson::V(false)},
                        {"maxBsonObjectSize", bson::V(kMaxBsonObjectBytes)},
                        {"storageEngines", bson::V(bson::Array{bson::V("wiredTiger")})}};
}

bson::Document repl_section(ServerContext& server, const ReplicaSnapshot& replica) {
  bson::Document repl{{"isWritablePrimary", bson::V(replica.state == MemberState::kPrimary)},
                      {"secondary", bson::V(replica.state == MemberState::kSecondary)}};
  if (replica.config) {
    repl.prepend("setName", bson::V(replica.config->set_name));
    repl.append("me", bson::V(replica.self_host));
    repl.append("electionId", bson::Value::object_id(election_id_for_term(replica.term)));
    repl.append("lastWrite",
                bson::V(bson::Document{
                    {"opTime", bson::V(server.effective_last_applied().to_document())}}));
  }
  return repl;
}

// start_ms is read without the test-only clock offset, so uptime ignores clock-skew faults.
int64_t uptime_ms(const ServerContext& server) {
  return server.clock.now_ms() - server.clock.offset_ms() - server.start_ms;
}

bson::Document server_status(ServerContext& server) {
  int64_t now_ms = server.clock.now_ms();
  int64_t up_ms = uptime_ms(server);
  bson::Document reply{
      {"host", bson::V(host_name())},
      {"version", bson::V(kVersionString)},
      {"process", bson::V("mongod")},
      {"pid", bson::V(static_cast<int64_t>(getpid()))},
      {"uptime", bson::V(static_cast<double>(up_ms) / 1000.0)},
      {"uptimeMillis", bson::V(up_ms)},
      {"uptimeEstimate", bson::V(up_ms / 1000)},
      {"localTime", bson::Value::date(now_ms)},
      {"connections", bson::V(server.metrics.connections(kMaxConnections))},
      {"opcounters", bson::V(server.metrics.opcounters())},
      {"metrics",
       bson::V(bson::Document{{"commands", bson::V(server.metrics.command_metrics())}})}};
  ReplicaSnapshot replica = server.replica.snapshot();
  if (replica.replication_enabled) reply.append("repl", bson::V(repl_section(server, replica)));
  // Not mongod's: lets a test write while a change stream's getMore, a sync source's oplog fetch
  // or an afterClusterTime read is known to be waiting (docs/mongodb-behaviour.md, Change
  // streams, Oplog and rollback, Read concern).
  reply.append("mongosim",
               bson::V(bson::Document{
                   {"changeStreamGetMoresWaiting", bson::V(server.change_signal.waiters())},
                   {"oplogFetchesWaiting",
                    bson::V(server.change_signal.waiters(ChangeSignal::Waiter::kOplogFetch))},
                   {"readConcernWaiters", bson::V(server.read_concern_waiters.load())}}));
  return reply;
}

bson::Document host_info(ServerContext& server) {
  utsname uts{};
  uname(&uts);
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGE_SIZE);
  int64_t mem_mb =
      pages > 0 && page_size > 0 ? static_cast<int64_t>(pages) * page_size / (1024 * 1024) : 0;
  return bson::Document{
      {"system",
       bson::V(bson::Document{
           {"currentTime", bson::Value::date(server.clock.now_ms())},
           {"hostname", bson::V(host_name())},
           {"cpuAddrSize", bson::V(int32_t{64})},
           {"memSizeMB", bson::V(mem_mb)},
           {"numCores", bson::V(static_cast<int32_t>(std::thread::hardware_concurrency()))},
           {"cpuArch", bson::V(std::string(uts.machine))},
           {"numaEnabled", bson::V(false)}})},
      {"os", bson::V(bson::Document{{"type", bson::V(std::string(uts.sysname))},
                                    {"name", bson::V(std::string(uts.sysname))},
                                    {"version", bson::V(std::string(uts.release))}})},
      {"extra", bson::V(bson::Document{})}};
}

bson::Document cmd_line_opts(ServerContext& server) {
  const ServerOptions& o = server.options;
  bson::Array argv;
  for (const auto& a : o.argv) argv.push_back(bson::V(a));
  std::string bind_ip;
  for (const auto& ip : o.bind_ips) bind_ip += (bind_ip.empty() ? "" : ",") + ip;
  bson::Document parsed{
      {"net", bson::V(bson::Document{{"bindIp", bson::V(bind_ip)}, {"port", bson::V(o.port)}})}};
  if (!o.repl_set.empty()) {
    parsed.append("replication", bson::V(bson::Document{{"replSet", bson::V(o.repl_set)}}));
  }
  if (!o.dbpath.empty())
    parsed.append("storage", bson::V(bson::Document{{"dbPath", bson::V(o.dbpath)}}));
  parsed.append("setParameter", bson::V(server.parameters.all()));
  return bson::Document{{"argv", bson::V(std::move(argv))}, {"parsed", bson::V(std::move(parsed))}};
}

bson::Document optime_fields(const OpTime& applied, int64_t wall_ms) {
  return bson::Document{{"lastCommittedOpTime", bson::V(applied.to_document())},
                        {"lastCommittedWallTime", bson::Value::date(wall_ms)},
                        {"readConcernMajorityOpTime", bson::V(applied.to_document())},
                        {"appliedOpTime", bson::V(applied.to_document())},
                        {"durableOpTime", bson::V(applied.to_document())},
                        {"lastAppliedWallTime", bson::Value::date(wall_ms)},
                        {"lastDurableWallTime", bson::Value::date(wall_ms)}};
}

bson::Document member_status(ServerContext& server, const ReplicaSnapshot& replica,
                             const repl::MemberConfig& m, const OpTime& applied, int64_t wall_ms) {
  int64_t uptime_s = uptime_ms(server) / 1000;
  bson::Document out{
      {"_id", bson::V(m.id)},
      {"name", bson::V(m.host)},
      {"health", bson::V(1.0)},
      {"state", bson::V(static_cast<int32_t>(replica.state))},
      {"stateStr", bson::V(std::string(member_state_name(replica.state)))},
      {"uptime", bson::V(static_cast<int32_t>(uptime_s))},
      {"optime", bson::V(applied.to_document())},
      {"optimeDate", bson::Value::date(static_cast<int64_t>(applied.ts.seconds) * 1000)},
      {"lastAppliedWallTime", bson::Value::date(wall_ms)},
      {"lastDurableWallTime", bson::Value::date(wall_ms)},
      {"syncSourceHost", bson::V("")},
      {"syncSourceId", bson::V(int32_t{-1})},
      {"infoMessage", bson::V("")}};
  if (replica.state == MemberState::kPrimary) {
    out.append("electionTime", bson::Value::timestamp(replica.initiate_optime.ts));
    out.append("electionDate", bson::Value::date(replica.election_date_ms));
  }
  out.append("configVersion", bson::V(static_cast<int32_t>(replica.config->version)));
  out.append("configTerm", bson::V(static_cast<int32_t>(replica.term)));
  out.append("self", bson::V(true));
  out.append("lastHeartbeatMessage", bson::V(""));
  return out;
}

ReplicaSnapshot initiated_snapshot(ServerContext& server) {
  ReplicaSnapshot replica = server.replica.snapshot();
  if (!replica.replication_enabled) {
    throw CommandError(code::kNoReplicationEnabled, "not running with --replSet");
  }
  if (!replica.config)
    throw CommandError(code::kNotYetInitialized, "no replset config has been received");
  return replica;
}

bson::Document repl_set_get_status(ServerContext& server) {
  ReplicaSnapshot replica = initiated_snapshot(server);
  if (std::optional<bson::Document> status = server.replication().repl_set_status())
    return std::move(*status);
  OpTime applied = server.effective_last_applied();
  int64_t wall_ms = server.last_write_date_ms();
  if (wall_ms == 0) wall_ms = replica.election_date_ms;
  bson::Array members;
  // With one member (all replSetInitiate accepts today) that member is this node.
  for (const auto& m : replica.config->members) {
    members.push_back(bson::V(member_status(server, replica, m, applied, wall_ms)));
  }
  auto voting = static_cast<int32_t>(replica.config->members.size());
  int32_t majority = voting / 2 + 1;
  return bson::Document{{"set", bson::V(replica.config->set_name)},
                        {"date", bson::Value::date(server.clock.now_ms())},
                        {"myState", bson::V(static_cast<int32_t>(replica.state))},
                        {"term", bson::V(replica.term)},
                        {"syncSourceHost", bson::V("")},
                        {"syncSourceId", bson::V(int32_t{-1})},
                        {"heartbeatIntervalMillis", bson::V(int64_t{2000})},
                        {"majorityVoteCount", bson::V(majority)},
                        {"writeMajorityCount", bson::V(majority)},
                        {"votingMembersCount", bson::V(voting)},
                        {"writableVotingMembersCount", bson::V(voting)},
                        {"optimes", bson::V(optime_fields(applied, wall_ms))},
                        {"members", bson::V(std::move(members))}};
}

void register_session_commands(ServerContext& server) {
  auto nothing = [](CommandContext&) { return bson::Document{}; };
  // Sessions hold no server-side state here beyond the data layer's transaction table,
  // which expires on its own; ending them is an acknowledgement (docs/mongodb-behaviour.md, Routine
  // commands).
  add(server, "endSessions", {}, false, nothing);
  add(server, "killAllSessions", {}, false, nothing);
  add(server, "ping", {}, false, nothing);
  add(server, "connectionStatus", {}, false, [](CommandContext&) {
    return bson::Document{
        {"authInfo", bson::V(bson::Document{{"authenticatedUsers", bson::V(bson::Array{})},
                                            {"authenticatedUserRoles", bson::V(bson::Array{})}})}};
  });
}

void register_replication_commands(ServerContext& server) {
  add(server, "replSetInitiate", {}, true, [&server](CommandContext& ctx) {
    bson::Document reply = server.replica.initiate(ctx.body.at(0).second, server.clock.now_ms());
    if (const auto config = server.replica.snapshot().config; config && config->members.size() == 1)
      server.replication().one_member_initiated();
    return reply;
  });
  add(server, "replSetGetStatus", {}, true,
      [&server](CommandContext&) { return repl_set_get_status(server); });
  add(server, "replSetGetConfig", {}, true, [&server](CommandContext&) {
    return bson::Document{{"config", bson::V(initiated_snapshot(server).config->to_document())}};
  });
}

}  // namespace

void register_admin_commands(ServerContext& server) {
  register_hello(server);
  register_session_commands(server);
  register_replication_commands(server);
  add(server, "buildInfo", {"buildinfo"}, false, [](CommandContext&) { return build_info(); });
  add(server, "serverStatus", {}, false,
      [&server](CommandContext&) { return server_status(server); });
  add(server, "hostInfo", {}, false, [&server](CommandContext&) { return host_info(server); });
  add(server, "getCmdLineOpts", {}, true,
      [&server](CommandContext&) { return cmd_line_opts(server); });
  add(server, "getParameter", {}, true,
      [&server](CommandContext& ctx) { return server.parameters.get(ctx.body); });
  add(server, "setParameter", {}, true,
      [&server](CommandContext& ctx) { return server.parameters.set(ctx.body); });
  // Test-only, like configureFailPoint; allowed in every member state (server/clock_offset.h).
  add(server, "mongosimSetClockOffset", {}, true, [&server](CommandContext& ctx) {
    return set_clock_offset(server.clock, parse_clock_offset_value(ctx.body.at(0).second));
  });
  add(server, "configureFailPoint", {}, true,
      [&server](CommandContext& ctx) { return server.failpoints.configure(ctx.body); });
}

}  // namespace mongosim::server
