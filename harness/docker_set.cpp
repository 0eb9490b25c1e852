#include "docker_set.h"

#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <thread>

namespace locklab {
namespace {

constexpr int kMemberPort = 27017;
constexpr int64_t kPollMs = 100;
constexpr int kSubnetTries = 40;
constexpr int kSubnetFirst = 100;
constexpr int kSubnetCount = 150;
constexpr size_t kLogTailBytes = 2000;
constexpr const char* kPartitionTable = "locklab-part";

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

DockerSet::Cut normalised(const DockerSet::Cut& c) {
  return c.first < c.second ? c : DockerSet::Cut{c.second, c.first};
}

// mongod's own rule: heartbeats several times per election timeout (see cluster.cpp).
int64_t heartbeat_interval_ms(int64_t election_timeout_ms) {
  return std::clamp<int64_t>(election_timeout_ms / 4, 100, 2000);
}

std::string election_id(const nlohmann::json& hello) {
  if (!hello.contains("electionId")) return "";
  const nlohmann::json& id = hello["electionId"];
  return id.is_object() ? id.value("$oid", "") : id.dump();
}

void validate(const DockerSetOptions& o) {
  if (o.members < 1 || o.members > DockerSet::kMembersMax) {
    throw std::invalid_argument("a docker set has 1.." + std::to_string(DockerSet::kMembersMax) +
                                " members, not " + std::to_string(o.members));
  }
  if (o.image.empty()) throw std::invalid_argument("a docker set needs an image");
  if (o.run_id.empty() ||
      o.run_id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789.-") != std::string::npos) {
    throw std::invalid_argument("run id '" + o.run_id + "' must be [a-z0-9.-]+");
  }
  if (o.run_dir.empty()) throw std::invalid_argument("a docker set needs a run directory");
}

}  // namespace

std::string docker_partition_script(const std::string& table,
                                    const std::vector<std::string>& peers) {
  assert(!peers.empty());
  std::string set;
  for (const std::string& address : peers) set += (set.empty() ? "" : ", ") + address;
  return "table inet " + table + " {}\ndelete table inet " + table + "\ntable inet " + table +
         " {\n  chain input { type filter hook input priority 0; policy accept; iifname \"eth0\" "
         "ip saddr { " +
         set +
         " } drop; }\n  chain output { type filter hook output priority 0; "
         "policy accept; oifname \"eth0\" ip daddr { " +
         set + " } drop; }\n}\n";
}

DockerSet::DockerSet(DockerEngine& engine, DockerSetOptions options)
    : engine_(engine), options_(std::move(options)) {
  validate(options_);
  network_ = "locklab-" + options_.run_id;
  paused_.assign(options_.members, false);
  killed_.assign(options_.members, false);
}

DockerSet::~DockerSet() {
  teardown();
}

std::vector<std::string> DockerSet::labels() const {
  return {"--label", "locklab.run=" + options_.run_id, "--label",
          "locklab.owner=" + own_identity()};
}

std::string DockerSet::container(const std::string& role) const {
  return "locklab-" + options_.run_id + "-" + role;
}

std::string DockerSet::address(const std::string& role) const {
  const auto it = addresses_.find(role);
  if (it == addresses_.end()) throw std::out_of_range("no container with role '" + role + "'");
  return it->second;
}

std::string DockerSet::host(int member) const {
  return address(member_role(member)) + ":" + std::to_string(kMemberPort);
}

std::string DockerSet::uri(const std::string& app_name) const {
  std::string hosts;
  for (int i = 0; i < size(); ++i) hosts += (i ? "," : "") + host(i);
  return "mongodb://" + hosts + "/?replicaSet=rs0&appname=" + app_name;
}

void DockerSet::create_network() {
  // A subnet no other network of this daemon holds: start from the pid, step on overlap.
  const int first = kSubnetFirst + static_cast<int>(getpid() % kSubnetCount);
  std::string last_error;
  for (int attempt = 0; attempt < kSubnetTries; ++attempt) {
    const std::string prefix =
        "10.89." + std::to_string(kSubnetFirst + (first - kSubnetFirst + attempt) % kSubnetCount);
    std::vector<std::string> args = {"network", "create", "--internal", "--subnet",
                                     prefix + ".0/24"};
    for (const std::string& l : labels()) args.push_back(l);
    args.push_back(network_);
    const ToolResult created = engine_.run(args);
    if (created.code == 0) {
      subnet_prefix_ = prefix;
      return;
    }
    last_error = created.output;
    if (last_error.find("overlap") == std::string::npos) break;
  }
  throw std::runtime_error("docker network create " + network_ + " failed: " + last_error);
}

void DockerSet::start_member(int member) {
  const std::string role = member_role(member);
  const std::string dbpath = options_.run_dir + "/" + role;
  std::filesystem::create_directories(dbpath);
  std::vector<std::string> args = {"run", "-d",        "--name", container(role), "--hostname",
                                   role,  "--network", network_, "--ip",          address(role)};
  for (const std::string& l : labels()) args.push_back(l);
  args.insert(args.end(),
              {"-v", dbpath + ":/data/db", options_.image, options_.program, "--replSet", "rs0",
               "--bind_ip", address(role), "--port", std::to_string(kMemberPort), "--dbpath",
               "/data/db", "--setParameter", "ttlMonitorSleepSecs=1"});
  engine_.checked(args, 120'000);
}

void DockerSet::start() {
  const int64_t deadline = now_ms() + options_.ready_timeout_ms;
  std::filesystem::create_directories(options_.run_dir);
  create_network();
  std::vector<MemberPlacement> placements;
  for (int i = 0; i < size(); ++i) {
    addresses_[member_role(i)] = subnet_prefix_ + "." + std::to_string(11 + i);
    placements.push_back({"", addresses_[member_role(i)], kMemberPort});
  }
  ClusterOptions admin;
  admin.program = options_.program;
  admin.members = placements;
  admin.external_uri = uri("locklab-harness");
  admin.interrupted = options_.interrupted;
  admin.real_mongod = !options_.clock_lever();
  admin_ = std::make_unique<Cluster>(admin, unused_supervisor_);
  for (int i = 0; i < size(); ++i) start_member(i);
  wait_ready(deadline);
}

void DockerSet::wait_ready(int64_t deadline_ms) {
  for (int i = 0; i < size(); ++i) {
    while (!reply_ok(admin_->try_command(i, "admin", {{"hello", 1}}))) {
      check_interrupted();
      if (now_ms() >= deadline_ms || !container_running(member_role(i))) {
        throw std::runtime_error("member " + container(member_role(i)) + " (" + host(i) +
                                 ") does not answer hello; its output ends:\n" +
                                 logs_tail(member_role(i)));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
    }
  }
  nlohmann::json members = nlohmann::json::array();
  for (int i = 0; i < size(); ++i) members.push_back({{"_id", i}, {"host", host(i)}});
  const nlohmann::json config = {
      {"_id", "rs0"},
      {"members", members},
      {"settings",
       {{"electionTimeoutMillis", options_.election_timeout_ms},
        {"heartbeatIntervalMillis", heartbeat_interval_ms(options_.election_timeout_ms)}}}};
  const nlohmann::json initiated = admin_->try_command(0, "admin", {{"replSetInitiate", config}});
  if (!reply_ok(initiated) && initiated.value("code", 0) != 23) {
    throw std::runtime_error("replSetInitiate on " + host(0) + " failed: " + initiated.dump());
  }
  // Cluster::start on an external set: a writable primary that acknowledges a majority write.
  admin_->start();
}

void DockerSet::check_interrupted() const {
  if (options_.interrupted && options_.interrupted()) {
    throw Interrupted("interrupted while waiting for the docker set");
  }
}

std::string DockerSet::logs_tail(const std::string& role) const {
  const ToolResult logs = engine_.run({"logs", "--tail", "40", container(role)});
  std::string text = logs.output;
  if (text.size() > kLogTailBytes) text = "..." + text.substr(text.size() - kLogTailBytes);
  return text;
}

void DockerSet::save_logs(const std::string& dir) const {
  try {
    std::filesystem::create_directories(dir);
    for (const auto& [role, address] : addresses_) {
      const ToolResult logs = engine_.run({"logs", container(role)});
      std::ofstream(dir + "/" + role + ".log") << logs.output;
    }
  } catch (const std::exception&) {
    // Best effort: logs are for reading, not for the verdict.
  }
}

void DockerSet::teardown() {
  if (torn_down_) return;
  torn_down_ = true;
  // The images are the caller's (built once, possibly shared): removed with the engine's run.
  remove_run_objects(engine_, options_.run_id, /*images=*/false);
}

void DockerSet::kill_member(int member) {
  kill_container(member_role(member));
  killed_.at(member) = true;
  paused_.at(member) = false;
}

void DockerSet::restart_member(int member) {
  const std::string role = member_role(member);
  if (container_running(role)) return;
  engine_.checked({"start", container(role)});
  killed_.at(member) = false;
  rewrite_partition_table(role);  // the new network namespace holds no table yet
}

void DockerSet::pause_member(int member) {
  pause_container(member_role(member));
  paused_.at(member) = true;
}

void DockerSet::resume_member(int member) {
  paused_.at(member) = false;
  resume_container(member_role(member));
}

int64_t DockerSet::set_clock_offset(int member, int64_t offset_ms) {
  if (!options_.clock_lever()) {
    throw std::runtime_error("clock faults are not possible on image " + options_.image + " (" +
                             options_.program +
                             "): it has no clock lever; they need a mongosim image "
                             "(mongosimSetClockOffset)");
  }
  const nlohmann::json reply =
      admin_->command(member, "admin", {{"mongosimSetClockOffset", offset_ms}});
  return reply.value("previousOffsetMillis", int64_t{0});
}

void DockerSet::start_worker(const std::string& role, const std::vector<std::string>& argv,
                             const std::vector<std::string>& mounts) {
  if (addresses_.count(role)) throw std::invalid_argument("role '" + role + "' exists already");
  if (next_worker_octet_ >= 101 + kWorkersMax) {
    throw std::runtime_error("at most " + std::to_string(kWorkersMax) + " worker containers");
  }
  if (argv.empty()) throw std::invalid_argument("worker '" + role + "' has an empty command");
  const std::string ip = subnet_prefix_ + "." + std::to_string(next_worker_octet_++);
  addresses_[role] = ip;
  std::vector<std::string> args = {"run", "-d",        "--name", container(role), "--hostname",
                                   role,  "--network", network_, "--ip",          ip};
  for (const std::string& l : labels()) args.push_back(l);
  for (const std::string& m : mounts) args.insert(args.end(), {"-v", m + ":" + m});
  args.push_back(options_.image);
  args.insert(args.end(), argv.begin(), argv.end());
  engine_.checked(args, 120'000);
}

void DockerSet::kill_container(const std::string& role) {
  address(role);  // throws for an unknown role
  engine_.checked({"kill", container(role)});
}

void DockerSet::pause_container(const std::string& role) {
  address(role);
  engine_.checked({"pause", container(role)});
}

void DockerSet::resume_container(const std::string& role) {
  address(role);
  engine_.checked({"unpause", container(role)});
}

bool DockerSet::container_running(const std::string& role) const {
  const ToolResult r = engine_.run({"inspect", "-f", "{{.State.Running}}", container(role)});
  return r.code == 0 && r.output.starts_with("true");
}

int DockerSet::exit_code(const std::string& role) const {
  if (container_running(role)) return -1;
  return std::stoi(engine_.checked({"inspect", "-f", "{{.State.ExitCode}}", container(role)}));
}

pid_t DockerSet::container_pid(const std::string& role) const {
  const ToolResult r = engine_.run({"inspect", "-f", "{{.State.Pid}}", container(role)});
  if (r.code != 0) return 0;
  try {
    return static_cast<pid_t>(std::stol(r.output));
  } catch (const std::exception&) {
    return 0;
  }
}

void DockerSet::cut(const std::vector<Cut>& pairs) {
  std::set<std::string> touched;
  for (const Cut& raw : pairs) {
    const Cut c = normalised(raw);
    address(c.first);  // throws for an unknown role before anything changes
    address(c.second);
    if (c.first == c.second) throw std::invalid_argument("a cut needs two roles: " + c.first);
    ++cuts_[c];
    touched.insert(c.first);
    touched.insert(c.second);
  }
  for (const std::string& role : touched) rewrite_partition_table(role);
}

void DockerSet::uncut(const std::vector<Cut>& pairs) {
  std::set<std::string> touched;
  for (const Cut& raw : pairs) {
    const auto it = cuts_.find(normalised(raw));
    if (it == cuts_.end()) continue;
    if (--it->second == 0) cuts_.erase(it);
    touched.insert(raw.first);
    touched.insert(raw.second);
  }
  for (const std::string& role : touched) rewrite_partition_table(role);
}

std::vector<std::string> DockerSet::cut_peers(const std::string& role) const {
  std::vector<std::string> out;
  for (const auto& [c, count] : cuts_) {
    if (c.first == role) out.push_back(c.second);
    if (c.second == role) out.push_back(c.first);
  }
  return out;
}

void DockerSet::rewrite_partition_table(const std::string& role) {
  const pid_t pid = container_pid(role);
  if (pid <= 0) return;  // not running: restart_member re-applies its cuts
  const std::vector<std::string> enter = {"nsenter", "-t", std::to_string(pid), "-n", "nft"};
  std::vector<std::string> addresses;
  for (const std::string& peer : cut_peers(role)) addresses.push_back(address(peer));
  std::vector<std::string> argv = enter;
  if (addresses.empty()) {
    argv.insert(argv.end(), {"delete", "table", "inet", kPartitionTable});
    run_tool(argv);  // absent is fine
    return;
  }
  argv.insert(argv.end(), {"-f", "-"});
  run_tool_checked(argv, "", docker_partition_script(kPartitionTable, addresses));
}

int DockerSet::primary() const {
  int best = -1;
  std::string best_id;
  for (int i = 0; i < size(); ++i) {
    if (paused_[i] || killed_[i]) continue;
    const nlohmann::json hello = admin_->try_command(i, "admin", {{"hello", 1}});
    if (!reply_ok(hello) || !hello.value("isWritablePrimary", false)) continue;
    const std::string id = election_id(hello);
    if (best < 0 || id.size() > best_id.size() || (id.size() == best_id.size() && id > best_id)) {
      best = i;
      best_id = id;
    }
  }
  return best;
}

int DockerSet::wait_for_primary(int64_t timeout_ms, int except) const {
  const int64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    check_interrupted();
    const int p = primary();
    if (p >= 0 && p != except) return p;
    if (now_ms() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
  }
}

std::string DockerSet::member_state(int member) const {
  if (paused_.at(member) || killed_.at(member)) return "other";
  const nlohmann::json hello = admin_->try_command(member, "admin", {{"hello", 1}});
  if (!reply_ok(hello)) return "other";
  if (hello.value("isWritablePrimary", false)) return "primary";
  if (hello.value("secondary", false)) return "secondary";
  return "other";
}

}  // namespace locklab
