#include "server.h"

#include <mongoc/mongoc.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "bson_owner.h"
#include "testkit.h"

namespace lockbench {
namespace {

constexpr int kMembersMax = 7;
// /proc/<pid>/stat after the command name: state (field 3) .. cmajflt (13), then utime, stime.
constexpr int kFieldsBeforeUtime = 11;
// A single-threaded client pings a connection idle for socketCheckIntervalMS (5 s by default)
// before using it; the server counts that ping and no command monitoring sees it. The status
// clients idle from one snapshot to the next (a cell and its ending: over 5 s for a notify
// cell of 4 s), so without this their ping would count as a lock command, one per member.
constexpr int32_t kStatusSocketCheckMs = 86'400'000;

mongoc_client_t* new_client(const std::string& uri_text) {
  bson_error_t error;
  mongoc_uri_t* uri = mongoc_uri_new_with_error(uri_text.c_str(), &error);
  if (uri == nullptr) {
    throw std::invalid_argument("--uri: bad MongoDB URI '" + uri_text + "': " + error.message);
  }
  mongoc_uri_set_option_as_int32(uri, MONGOC_URI_SOCKETCHECKINTERVALMS, kStatusSocketCheckMs);
  mongoc_client_t* client = mongoc_client_new_from_uri(uri);
  mongoc_uri_destroy(uri);
  if (client == nullptr) throw std::invalid_argument("--uri: no client for '" + uri_text + "'");
  mongoc_client_set_error_api(client, MONGOC_ERROR_API_VERSION_2);
  return client;
}

int64_t as_count(const nlohmann::json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number()) return static_cast<int64_t>(v.get<double>());
  if (v.is_object() && v.contains("$numberLong")) {
    return std::stoll(v["$numberLong"].get<std::string>());
  }
  return 0;
}

nlohmann::json server_status(mongoc_client_t* client) {
  mongolock::bson::Bson command(BCON_NEW("serverStatus", BCON_INT32(1)));
  mongolock::bson::BsonReply reply;
  bson_error_t error;
  if (!mongoc_client_command_simple(client, "admin", command.get(), nullptr, reply.out(), &error)) {
    throw std::runtime_error(std::string("serverStatus failed: ") + error.message);
  }
  char* text = bson_as_relaxed_extended_json(reply.get(), nullptr);
  nlohmann::json doc = nlohmann::json::parse(text);
  bson_free(text);
  return doc;
}

void add_status(ServerSnapshot& snap, const nlohmann::json& status) {
  if (status.contains("opcounters")) {
    for (const auto& [kind, value] : status["opcounters"].items()) {
      snap.opcounters[kind] += as_count(value);
    }
  }
  if (status.contains("metrics") && status["metrics"].contains("commands")) {
    for (const auto& [name, value] : status["metrics"]["commands"].items()) {
      if (value.is_object() && value.contains("total")) {
        snap.commands[name] += as_count(value["total"]);
      }
    }
  }
  ++snap.status_calls;
}

double process_cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) {
    throw std::runtime_error("cannot read /proc/" + std::to_string(pid) + "/stat");
  }
  std::istringstream fields(stat.substr(close + 1));
  std::string skip;
  for (int i = 0; i < kFieldsBeforeUtime; ++i) fields >> skip;
  int64_t utime = 0;
  int64_t stime = 0;
  if (!(fields >> utime >> stime)) {
    throw std::runtime_error("cannot parse /proc/" + std::to_string(pid) + "/stat");
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

bool internal_to_the_set(const std::string& name) {
  return name.rfind("replSet", 0) == 0;
}
bool monitoring(const std::string& name) {
  return name == "hello" || name == "isMaster" || name == "ismaster";
}

}  // namespace

ServerCount count_between(const ServerSnapshot& before, const ServerSnapshot& after) {
  ServerCount c;
  for (const auto& [kind, value] : after.opcounters) {
    auto it = before.opcounters.find(kind);
    c.opcounters_sum += value - (it == before.opcounters.end() ? 0 : it->second);
  }
  for (const auto& [name, value] : after.commands) {
    auto it = before.commands.find(name);
    const int64_t d = value - (it == before.commands.end() ? 0 : it->second);
    if (d == 0) continue;
    c.per_command[name] = d;
    if (monitoring(name)) c.monitoring += d;
    if (internal_to_the_set(name)) c.members_internal += d;
  }
  // serverStatus counts itself before it runs: the earlier snapshot's calls are in `before`,
  // the later one's in `after`.
  c.own_status_calls = after.status_calls;
  c.lock_commands = c.opcounters_sum - c.own_status_calls - c.monitoring - c.members_internal;
  return c;
}

std::unique_ptr<Target> Target::start_mongosim(int members) {
  if (members < 1 || members > kMembersMax) {
    throw std::invalid_argument("--members: " + std::to_string(members) + " is not in [1, " +
                                std::to_string(kMembersMax) + "]");
  }
  if (locklab::testkit::mongosim_program().empty()) {
    throw std::runtime_error("this build has no mongosim; give --uri");
  }
  std::unique_ptr<Target> t(new Target());
  t->members_ = members;
  // The server's own protocol timers (as a deployment has them), not the tests' short ones.
  t->set_ = std::make_unique<locklab::testkit::ReplicaSet>(locklab::testkit::SetOptions{
      .members = members,
      .args = {"--bind_ip", "127.0.0.1", "--setParameter", "ttlMonitorSleepSecs=1"},
      .election_timeout_ms = 0,
      .heartbeat_interval_ms = 0});
  mongoc_init();
  for (int i = 0; i < members; ++i) {
    t->status_clients_.push_back(
        new_client(t->set_->member(i).uri("directConnection=true&appname=lockbench-status")));
  }
  return t;
}

std::unique_ptr<Target> Target::connect(const std::string& uri) {
  std::unique_ptr<Target> t(new Target());
  mongoc_init();
  t->uri_ = uri;
  t->status_clients_.push_back(new_client(uri));
  return t;
}

Target::~Target() {
  for (mongoc_client_t* c : status_clients_) mongoc_client_destroy(c);
}

std::string Target::describe() const {
  if (!set_) return "--uri";
  return "mongosim, " + std::to_string(members_) + (members_ == 1 ? " member" : " members");
}

std::string Target::client_uri(const std::string& appname) const {
  if (!set_) {
    if (uri_.find('?') != std::string::npos) return uri_ + "&appname=" + appname;
    const size_t hosts = uri_.find("://");
    const bool has_path =
        hosts != std::string::npos && uri_.find('/', hosts + 3) != std::string::npos;
    return uri_ + (has_path ? "?" : "/?") + "appname=" + appname;
  }
  return set_->uri("appname=" + appname);
}

ServerSnapshot Target::snapshot() const {
  ServerSnapshot snap;
  for (mongoc_client_t* client : status_clients_) add_status(snap, server_status(client));
  return snap;
}

std::optional<double> Target::cpu_seconds() const {
  if (!set_) return std::nullopt;
  double sum = 0;
  for (int i = 0; i < members_; ++i) sum += process_cpu_seconds(set_->member(i).pid());
  return sum;
}

}  // namespace lockbench
