#include "cluster.h"

#include <fcntl.h>
#include <mongoc/mongoc.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace locklab {
namespace {

constexpr int64_t kReadyPollMs = 50;
constexpr int64_t kAdminTimeoutMs = 2000;
constexpr size_t kLogTailBytes = 2000;
constexpr const char* kHarnessAppName = "locklab-harness";

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Owns a bson_t.
struct BsonDoc {
  bson_t doc = BSON_INITIALIZER;
  ~BsonDoc() { bson_destroy(&doc); }
};

nlohmann::json to_json(const bson_t* doc) {
  size_t length = 0;
  char* text = bson_as_relaxed_extended_json(doc, &length);
  if (!text) return {{"ok", 0}, {"errmsg", "reply is not valid UTF-8"}};
  nlohmann::json out = nlohmann::json::parse(text, text + length, nullptr, false);
  bson_free(text);
  return out;
}

// One command on a fresh single-threaded client in the calling thread (so its sockets are
// created in whatever namespace the thread is in).
nlohmann::json direct_command(const std::string& host, const std::string& database,
                              const nlohmann::ordered_json& command) {
  const std::string uri = "mongodb://" + host +
                          "/?directConnection=true&appname=" + kHarnessAppName +
                          "&serverSelectionTimeoutMS=" + std::to_string(kAdminTimeoutMs) +
                          "&connectTimeoutMS=" + std::to_string(kAdminTimeoutMs) +
                          "&socketTimeoutMS=" + std::to_string(kAdminTimeoutMs * 5);
  bson_error_t error;
  const std::string text = command.dump();
  bson_t* cmd = bson_new_from_json(reinterpret_cast<const uint8_t*>(text.data()),
                                   static_cast<ssize_t>(text.size()), &error);
  if (!cmd) throw std::runtime_error("bad admin command " + text + ": " + error.message);
  mongoc_client_t* client = mongoc_client_new(uri.c_str());
  if (!client) {
    bson_destroy(cmd);
    throw std::runtime_error("bad admin URI " + uri);
  }
  mongoc_client_set_error_api(client, MONGOC_ERROR_API_VERSION_2);
  BsonDoc reply;
  const bool ok =
      mongoc_client_command_simple(client, database.c_str(), cmd, nullptr, &reply.doc, &error);
  bson_destroy(cmd);
  mongoc_client_destroy(client);
  nlohmann::json out = to_json(&reply.doc);
  if (!ok) {
    if (!out.is_object() || out.empty()) out = nlohmann::json::object();
    out["ok"] = 0;
    if (!out.contains("errmsg")) out["errmsg"] = error.message;
    if (!out.contains("code")) out["code"] = error.code;
  }
  return out;
}

// Runs one command on an open client; the reply, with ok 0 and errmsg on failure.
nlohmann::json client_command(mongoc_client_t* client, const std::string& database,
                              const nlohmann::ordered_json& command) {
  bson_error_t error;
  const std::string text = command.dump();
  bson_t* cmd = bson_new_from_json(reinterpret_cast<const uint8_t*>(text.data()),
                                   static_cast<ssize_t>(text.size()), &error);
  if (!cmd) throw std::runtime_error("bad command " + text + ": " + error.message);
  BsonDoc reply;
  const bool ok =
      mongoc_client_command_simple(client, database.c_str(), cmd, nullptr, &reply.doc, &error);
  bson_destroy(cmd);
  nlohmann::json out = to_json(&reply.doc);
  if (!ok) {
    if (!out.is_object()) out = nlohmann::json::object();
    out["ok"] = 0;
    if (!out.contains("errmsg")) out["errmsg"] = error.message;
  }
  return out;
}

std::string election_id(const nlohmann::json& hello);

// hello, find at majority, hello, all on one single-threaded client with a direct connection
// (one socket): the member answered the read as writable primary in one term.
nlohmann::json confirmed_find(const std::string& host, const std::string& database,
                              const std::string& collection, const std::string& id) {
  const std::string uri = "mongodb://" + host +
                          "/?directConnection=true&appname=" + kHarnessAppName +
                          "&serverSelectionTimeoutMS=" + std::to_string(kAdminTimeoutMs) +
                          "&connectTimeoutMS=" + std::to_string(kAdminTimeoutMs) +
                          "&socketTimeoutMS=" + std::to_string(kAdminTimeoutMs * 5);
  mongoc_client_t* client = mongoc_client_new(uri.c_str());
  if (!client) throw std::runtime_error("bad admin URI " + uri);
  mongoc_client_set_error_api(client, MONGOC_ERROR_API_VERSION_2);
  std::unique_ptr<mongoc_client_t, void (*)(mongoc_client_t*)> owned(client, mongoc_client_destroy);
  auto primary_term = [&](const char* when) {
    const nlohmann::json hello = client_command(client, "admin", {{"hello", 1}});
    if (!reply_ok(hello) || !hello.value("isWritablePrimary", false)) {
      throw std::runtime_error(host + " is not writable primary " + when + " the read");
    }
    return election_id(hello);
  };
  const std::string before = primary_term("before");
  const nlohmann::json found = client_command(client, database,
                                              {{"find", collection},
                                               {"filter", {{"_id", id}}},
                                               {"limit", 1},
                                               {"readConcern", {{"level", "majority"}}}});
  if (!reply_ok(found)) {
    throw std::runtime_error("find on " + host + " failed: " + found.value("errmsg", found.dump()));
  }
  const std::string after = primary_term("after");
  if (after != before) {
    throw std::runtime_error(host + " changed term during the read (" + before + " -> " + after +
                             ")");
  }
  const nlohmann::json& batch = found["cursor"]["firstBatch"];
  return batch.empty() ? nlohmann::json(nullptr) : batch[0];
}

// A primary that has heard from no majority within the election timeout steps down (reference
// §6.3), so heartbeats must come several times per timeout: mongod's 2 s default would make a
// set with a 1 s timeout step down for nothing.
int64_t heartbeat_interval_ms(int64_t election_timeout_ms) {
  return std::clamp<int64_t>(election_timeout_ms / 4, 100, 2000);
}

// libfaketime's "+N.NNNs" offset spec.
void write_clock_file(const std::string& path, int64_t offset_ms) {
  char text[64];
  std::snprintf(text, sizeof text, "%s%lld.%03llds\n", offset_ms < 0 ? "-" : "+",
                static_cast<long long>(std::llabs(offset_ms) / 1000),
                static_cast<long long>(std::llabs(offset_ms) % 1000));
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write the faketime file " + path);
}

// The electionId of a primary's hello as comparable text ("" when absent). ObjectId hex of one
// length orders as the term it encodes.
std::string election_id(const nlohmann::json& hello) {
  if (!hello.contains("electionId")) return "";
  const nlohmann::json& id = hello["electionId"];
  return id.is_object() ? id.value("$oid", "") : id.dump();
}

}  // namespace

bool reply_ok(const nlohmann::json& reply) {
  return reply.is_object() && reply.contains("ok") && reply["ok"].is_number() &&
         reply["ok"].get<double>() == 1.0;
}

void init_driver() {
  static std::once_flag once;
  std::call_once(once, [] {
    mongoc_init();
    mongoc_log_set_handler(nullptr, nullptr);
  });
}

void run_in_netns(const std::string& netns, const std::function<void()>& body) {
  std::exception_ptr failure;
  std::thread helper([&] {
    try {
      if (!netns.empty()) {
        const std::string path = "/var/run/netns/" + netns;
        const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
        const int rc = setns(fd, CLONE_NEWNET);
        const int saved = errno;
        close(fd);
        if (rc != 0) throw std::runtime_error("setns " + path + ": " + std::strerror(saved));
      }
      body();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  helper.join();
  if (failure) std::rethrow_exception(failure);
}

int pick_free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t length = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) != 0) {
    const int saved = errno;
    close(fd);
    throw std::runtime_error(std::string("cannot find a free port: ") + std::strerror(saved));
  }
  close(fd);
  return ntohs(addr.sin_port);
}

Cluster::Cluster(ClusterOptions options, Supervisor& supervisor)
    : options_(std::move(options)), supervisor_(supervisor) {
  if (options_.members.empty()) throw std::invalid_argument("a cluster needs at least 1 member");
  pids_.assign(options_.members.size(), 0);
  clock_offsets_ms_.assign(options_.members.size(), 0);
  paused_.assign(options_.members.size(), false);
  init_driver();
}

std::string Cluster::host(int member) const {
  const MemberPlacement& m = options_.members.at(member);
  return m.address + ":" + std::to_string(m.port);
}

pid_t Cluster::pid(int member) const {
  return pids_.at(member);
}

bool Cluster::running(int member) const {
  if (external()) return true;  // not ours to know; commands to it will tell
  return pids_.at(member) > 0 && supervisor_.running(pids_.at(member));
}

std::string Cluster::uri(const std::string& app_name) const {
  if (external()) {
    const std::string& u = options_.external_uri;
    const size_t scheme_end = u.find("://");
    const bool has_path =
        u.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3) != std::string::npos;
    const std::string sep = u.find('?') != std::string::npos ? "&" : has_path ? "?" : "/?";
    return u + sep + "appname=" + app_name;
  }
  std::string hosts;
  for (int i = 0; i < size(); ++i) hosts += (i ? "," : "") + host(i);
  return "mongodb://" + hosts + "/?replicaSet=rs0&appname=" + app_name;
}

void Cluster::start_member(int member) {
  const MemberPlacement& m = options_.members.at(member);
  const std::string dbpath = options_.data_dir + "/m" + std::to_string(member);
  std::filesystem::create_directories(dbpath);
  SpawnOptions spawn;
  if (!options_.faketime.empty()) {
    // faketime preloads libfaketime and sets FAKETIME; `env -u FAKETIME` drops that spec so the
    // library reads the member's timestamp file instead, re-read on every call (NO_CACHE), which
    // is what lets set_clock_offset() move a running member's clock. Only the wall clock moves
    // (--exclude-monotonic): a member's timers, like mongod's, run on the monotonic clock.
    write_clock_file(clock_file(member), clock_offsets_ms_.at(member));
    spawn.argv = {options_.faketime,
                  "-m",
                  "--exclude-monotonic",
                  "-f",
                  "+0s",
                  "env",
                  "-u",
                  "FAKETIME",
                  "FAKETIME_TIMESTAMP_FILE=" + clock_file(member),
                  "FAKETIME_NO_CACHE=1"};
  }
  spawn.argv.insert(spawn.argv.end(), {options_.program, "--replSet", "rs0", "--bind_ip", m.address,
                                       "--port", std::to_string(m.port), "--dbpath", dbpath,
                                       "--setParameter", "ttlMonitorSleepSecs=1"});
  spawn.netns = m.netns;
  spawn.log_path = options_.log_dir + "/m" + std::to_string(member) + ".log";
  pids_.at(member) = supervisor_.spawn(spawn);
}

std::string Cluster::log_tail(int member) const {
  std::ifstream in(options_.log_dir + "/m" + std::to_string(member) + ".log", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > kLogTailBytes) text = "..." + text.substr(text.size() - kLogTailBytes);
  return text;
}

std::string Cluster::clock_file(int member) const {
  return options_.data_dir + "/m" + std::to_string(member) + ".faketime";
}

void Cluster::check_interrupted() const {
  if (options_.interrupted && options_.interrupted()) {
    throw Interrupted("interrupted while waiting for the cluster");
  }
}

void Cluster::wait_until(int member, const std::string& what, int64_t deadline_ms,
                         const std::function<bool()>& ready) const {
  for (;;) {
    check_interrupted();
    // Reap, so a member that exited is seen as gone now rather than at the deadline. Only the
    // start waits do this: no worker exists yet whose exit the run would need to hear about.
    supervisor_.poll();
    if (!running(member)) {
      throw std::runtime_error("member m" + std::to_string(member) + " (" + host(member) +
                               ") exited while waiting for " + what + "; its log ends:\n" +
                               log_tail(member));
    }
    if (ready()) return;
    if (now_ms() >= deadline_ms) {
      throw std::runtime_error(
          "member m" + std::to_string(member) + " (" + host(member) + "): no " + what + " within " +
          std::to_string(options_.ready_timeout_ms) + " ms; log ends:\n" + log_tail(member));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kReadyPollMs));
  }
}

void Cluster::start() {
  const int64_t deadline = now_ms() + options_.ready_timeout_ms;
  if (external()) {
    // Someone else's set, already initiated: ready is the same test as for ours.
    wait_until(0, "writable primary and a majority write", deadline, [&] {
      const int p = primary();
      return p >= 0 && majority_write(p);
    });
    return;
  }
  for (int i = 0; i < size(); ++i) start_member(i);
  for (int i = 0; i < size(); ++i) {
    wait_until(i, "reply to hello", deadline, [&] {
      return reply_ok(try_command(i, "admin", {{"hello", 1}}));
    });
  }
  nlohmann::json members = nlohmann::json::array();
  for (int i = 0; i < size(); ++i) members.push_back({{"_id", i}, {"host", host(i)}});
  const nlohmann::json config = {
      {"_id", "rs0"},
      {"members", members},
      {"settings",
       {{"electionTimeoutMillis", options_.election_timeout_ms},
        {"heartbeatIntervalMillis", heartbeat_interval_ms(options_.election_timeout_ms)}}}};
  const nlohmann::json initiated = try_command(0, "admin", {{"replSetInitiate", config}});
  // 23 AlreadyInitialized: a restarted harness may find the set initiated; that is fine.
  if (!reply_ok(initiated) && initiated.value("code", 0) != 23) {
    throw std::runtime_error("replSetInitiate on " + host(0) + " failed: " + initiated.dump());
  }
  // Ready = what a client needs: a primary, and a write a majority acknowledged (a primary
  // that is still catching up, or whose secondaries have not started syncing, fails this).
  wait_until(0, "writable primary and a majority write", deadline, [&] {
    const int p = primary();
    return p >= 0 && majority_write(p);
  });
}

bool Cluster::majority_write(int member) const {
  const nlohmann::ordered_json insert = {
      {"insert", "ready"},
      {"documents", nlohmann::json::array({{{"at_ms", now_ms()}}})},
      {"writeConcern", {{"w", "majority"}, {"wtimeout", kAdminTimeoutMs}}}};
  const nlohmann::json reply = try_command(member, "locklab_harness", insert);
  return reply_ok(reply) && !reply.contains("writeConcernError") && !reply.contains("writeErrors");
}

int Cluster::primary() const {
  int best = -1;
  std::string best_id;
  for (int i = 0; i < size(); ++i) {
    if (!running(i) || paused_[i]) continue;
    const nlohmann::json hello = try_command(i, "admin", {{"hello", 1}});
    if (!reply_ok(hello) || !hello.value("isWritablePrimary", false)) continue;
    const std::string id = election_id(hello);
    if (best < 0 || id.size() > best_id.size() || (id.size() == best_id.size() && id > best_id)) {
      best = i;
      best_id = id;
    }
  }
  return best;
}

int Cluster::wait_for_primary(int64_t timeout_ms, int except) const {
  const int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    check_interrupted();
    const int p = primary();
    if (p >= 0 && p != except) return p;
    if (now_ms() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(kReadyPollMs));
  }
}

void Cluster::refuse_external(const char* what) const {
  if (external()) {
    throw std::runtime_error(std::string(what) + " is not possible on an external cluster");
  }
}

void Cluster::kill_member(int member) {
  refuse_external("kill-member");
  const pid_t pid = pids_.at(member);
  if (!running(member))
    throw std::runtime_error("member m" + std::to_string(member) + " is not running");
  signal_member(member, SIGKILL);
  supervisor_.wait_exit(pid, kAdminTimeoutMs * 5);
  pids_.at(member) = 0;
  paused_.at(member) = false;
}

void Cluster::restart_member(int member) {
  refuse_external("restarting a member");
  if (running(member)) return;
  start_member(member);
}

int64_t Cluster::set_clock_offset(int member, int64_t offset_ms) {
  refuse_external("moving a member's clock");
  if (options_.real_mongod) {
    if (options_.faketime.empty()) {
      throw std::runtime_error("clock faults on real mongod need faketime, which was not found");
    }
    const int64_t previous = clock_offsets_ms_.at(member);
    write_clock_file(clock_file(member), offset_ms);
    clock_offsets_ms_.at(member) = offset_ms;
    return previous;
  }
  const nlohmann::json reply = command(member, "admin", {{"mongosimSetClockOffset", offset_ms}});
  clock_offsets_ms_.at(member) = offset_ms;
  return reply.value("previousOffsetMillis", int64_t{0});
}

void Cluster::stop(int64_t grace_ms) {
  for (int m = 0; m < size(); ++m) {
    signal_member(m, SIGCONT);  // a paused member cannot act on SIGTERM
    signal_member(m, SIGTERM);
  }
  for (int m = 0; m < size(); ++m) {
    const pid_t pid = pids_[m];
    if (pid > 0 && supervisor_.running(pid) && !supervisor_.wait_exit(pid, grace_ms)) {
      signal_member(m, SIGKILL);
      supervisor_.wait_exit(pid, grace_ms);
    }
    signal_member(m, SIGKILL);  // whatever is left of its group (a wrapper's child)
  }
}

bool Cluster::signal_member(int member, int sig) {
  const pid_t pid = pids_.at(member);
  if (pid <= 0) return false;
  // The member's process group: with faketime the member proper is the wrapper's child, and a
  // signal must reach it too (every spawned child leads its own group, process.h).
  const bool group = ::kill(-pid, sig) == 0;
  const bool leader = supervisor_.running(pid) && supervisor_.signal(pid, sig);
  return group || leader;
}

void Cluster::pause_member(int member) {
  refuse_external("pause-member");
  if (!running(member) || !signal_member(member, SIGSTOP)) {
    throw std::runtime_error("member m" + std::to_string(member) + " is not running");
  }
  paused_.at(member) = true;
}

void Cluster::resume_member(int member) {
  paused_.at(member) = false;
  if (!signal_member(member, SIGCONT)) {
    throw std::runtime_error("member m" + std::to_string(member) +
                             " is not running: SIGCONT not delivered");
  }
}

std::string Cluster::member_state(int member) const {
  if (!running(member) || paused_.at(member)) return "other";
  const nlohmann::json hello = try_command(member, "admin", {{"hello", 1}});
  if (!reply_ok(hello)) return "other";
  if (hello.value("isWritablePrimary", false)) return "primary";
  if (hello.value("secondary", false)) return "secondary";
  return "other";
}

bool Cluster::wait_answering(int member, int64_t timeout_ms) const {
  const int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    check_interrupted();
    if (running(member) && reply_ok(try_command(member, "admin", {{"hello", 1}}))) return true;
    if (now_ms() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(kReadyPollMs));
  }
}

nlohmann::json Cluster::read_confirmed(int member, const std::string& database,
                                       const std::string& collection, const std::string& id) const {
  nlohmann::json out;
  run_in_netns(options_.admin_netns,
               [&] { out = confirmed_find(host(member), database, collection, id); });
  return out;
}

nlohmann::json Cluster::try_command(int member, const std::string& database,
                                    const nlohmann::ordered_json& command) const {
  nlohmann::json reply;
  try {
    run_in_netns(options_.admin_netns,
                 [&] { reply = direct_command(host(member), database, command); });
  } catch (const std::exception& e) {
    reply = {{"ok", 0}, {"errmsg", e.what()}};
  }
  return reply;
}

nlohmann::json Cluster::command(int member, const std::string& database,
                                const nlohmann::ordered_json& command) const {
  nlohmann::json reply = try_command(member, database, command);
  if (!reply_ok(reply)) {
    throw std::runtime_error(command.begin().key() + " on " + host(member) +
                             " failed: " + reply.dump());
  }
  return reply;
}

}  // namespace locklab
