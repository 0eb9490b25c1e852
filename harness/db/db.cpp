#include "db/db.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "checker/clock.h"
#include "db/admin.h"

namespace locklab {
namespace {

constexpr int64_t kReadyPollMs = 50;
constexpr int64_t kAdminTimeoutMs = 2000;
constexpr int kMembersMax = 50;

// A primary that has heard from no majority within the election timeout steps down, so
// heartbeats must come several times per timeout: mongod's 2 s default would make a set with a
// 1 s timeout step down for nothing.
int64_t heartbeat_interval_ms(int64_t election_timeout_ms) {
  return std::clamp<int64_t>(election_timeout_ms / 4, 100, 2000);
}

}  // namespace

Db::Db(DbConfig config) : config_(std::move(config)) {
  if (config_.members < 1 || config_.members > kMembersMax) {
    throw std::invalid_argument("a set needs 1.." + std::to_string(kMembersMax) + " members, not " +
                                std::to_string(config_.members));
  }
  init_driver();
}

std::string Db::log_tail(int /*member*/) const {
  return "";
}

void Db::check_interrupted() const {
  if (config_.interrupted && config_.interrupted()) {
    throw Interrupted("interrupted while waiting for the cluster");
  }
}

void Db::wait_until(int member, const std::string& what, int64_t deadline_ms,
                    const std::function<bool()>& ready, const std::function<void()>& reap) const {
  for (;;) {
    check_interrupted();
    if (reap) reap();
    const std::string tail = [&] {
      const std::string t = log_tail(member);
      return t.empty() ? std::string() : "; its log ends:\n" + t;
    }();
    if (!running(member)) {
      throw std::runtime_error("member m" + std::to_string(member) + " (" + host(member) +
                               ") exited while waiting for " + what + tail);
    }
    if (ready()) return;
    if (steady_now_ms() >= deadline_ms) {
      throw std::runtime_error("member m" + std::to_string(member) + " (" + host(member) +
                               "): no " + what + " within " +
                               std::to_string(config_.ready_timeout_ms) + " ms" + tail);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kReadyPollMs));
  }
}

void Db::wait_all_answering(int64_t deadline_ms, const std::function<void()>& reap) const {
  for (int i = 0; i < size(); ++i) {
    wait_until(
        i, "reply to hello", deadline_ms,
        [&] {
          return reply_ok(try_command(i, "admin", {{"hello", 1}}));
        },
        reap);
  }
}

void Db::initiate() const {
  if (!config_.priorities.empty() && config_.priorities.size() != static_cast<size_t>(size())) {
    throw std::invalid_argument("DbConfig::priorities must name every member");
  }
  nlohmann::json members = nlohmann::json::array();
  for (int i = 0; i < size(); ++i) {
    nlohmann::json m = {{"_id", i}, {"host", host(i)}};
    if (!config_.priorities.empty()) m["priority"] = config_.priorities[static_cast<size_t>(i)];
    members.push_back(std::move(m));
  }
  nlohmann::json settings = nlohmann::json::object();
  if (config_.election_timeout_ms > 0) {
    settings["electionTimeoutMillis"] = config_.election_timeout_ms;
    settings["heartbeatIntervalMillis"] = config_.heartbeat_interval_ms > 0
                                              ? config_.heartbeat_interval_ms
                                              : heartbeat_interval_ms(config_.election_timeout_ms);
  } else if (config_.heartbeat_interval_ms > 0) {
    settings["heartbeatIntervalMillis"] = config_.heartbeat_interval_ms;
  }
  if (config_.settings.is_object()) settings.update(config_.settings);
  nlohmann::json config = {{"_id", config_.set_name}, {"members", members}};
  if (!settings.empty()) config["settings"] = settings;
  const nlohmann::json initiated = try_command(0, "admin", {{"replSetInitiate", config}});
  // 23 AlreadyInitialized: a restarted harness may find the set initiated; that is fine.
  if (!reply_ok(initiated) && initiated.value("code", 0) != 23) {
    throw std::runtime_error("replSetInitiate on " + host(0) + " failed: " + initiated.dump());
  }
}

// A new set elects its first primary when some member's election timeout runs out (up to
// twice electionTimeoutMillis with the randomisation), most of a run's start. A member given
// the config by heartbeat answers hello with setName; then member 0 can win at once.
void Db::prompt_first_election(int64_t deadline_ms, const std::function<void()>& reap) const {
  if (size() < 2) return;
  const auto has_config = [this](int member) {
    const nlohmann::json hello = try_command(member, "admin", {{"hello", 1}});
    return reply_ok(hello) && hello.contains("setName");
  };
  // Bounded by a few election timeouts, not the whole start's deadline: a member that never
  // gets the config is for wait_ready to report, and the ordinary election may still come.
  const int64_t until_ms = std::min(deadline_ms, steady_now_ms() + 4 * config_.election_timeout_ms);
  while (steady_now_ms() < until_ms) {
    check_interrupted();
    if (reap) reap();
    bool all = true;
    for (int i = 0; i < size() && all; ++i) all = has_config(i);
    if (all) {
      try_command(0, "admin", {{"replSetStepUp", 1}});  // a refusal leaves the ordinary election
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kReadyPollMs));
  }
}

void Db::wait_ready(int64_t deadline_ms, const std::function<void()>& reap) const {
  // Ready = what a client needs: a primary, and a write a majority acknowledged (a primary that
  // is still catching up, or whose secondaries have not started syncing, fails this).
  wait_until(
      0, "writable primary and a majority write", deadline_ms,
      [&] {
        const int p = primary();
        return p >= 0 && majority_write(p);
      },
      reap);
}

bool Db::majority_write(int member) const {
  const nlohmann::ordered_json insert = {
      {"insert", "ready"},
      {"documents", nlohmann::json::array({{{"at_ms", steady_now_ms()}}})},
      {"writeConcern", {{"w", "majority"}, {"wtimeout", kAdminTimeoutMs}}}};
  const nlohmann::json reply = try_command(member, "locklab_harness", insert);
  return reply_ok(reply) && !reply.contains("writeConcernError") && !reply.contains("writeErrors");
}

int Db::primary() const {
  int best = -1;
  std::string best_id;
  for (int i = 0; i < size(); ++i) {
    if (!running(i) || paused(i)) continue;
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

int Db::wait_for_primary(int64_t timeout_ms, int except) const {
  const int64_t deadline = steady_now_ms() + timeout_ms;
  for (;;) {
    check_interrupted();
    const int p = primary();
    if (p >= 0 && p != except) return p;
    if (steady_now_ms() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(kReadyPollMs));
  }
}

std::string Db::member_state(int member) const {
  if (!running(member) || paused(member)) return "other";
  const nlohmann::json hello = try_command(member, "admin", {{"hello", 1}});
  if (!reply_ok(hello)) return "other";
  if (hello.value("isWritablePrimary", false)) return "primary";
  if (hello.value("secondary", false)) return "secondary";
  return "other";
}

bool Db::wait_answering(int member, int64_t timeout_ms) const {
  const int64_t deadline = steady_now_ms() + timeout_ms;
  for (;;) {
    check_interrupted();
    if (running(member) && reply_ok(try_command(member, "admin", {{"hello", 1}}))) return true;
    if (steady_now_ms() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(kReadyPollMs));
  }
}

nlohmann::json Db::read_confirmed(int member, const std::string& database,
                                  const std::string& collection, const std::string& id) const {
  nlohmann::json out;
  run_in_netns(admin_netns(),
               [&] { out = confirmed_find(host(member), database, collection, id); });
  return out;
}

nlohmann::json Db::try_command(int member, const std::string& database,
                               const nlohmann::ordered_json& command) const {
  nlohmann::json reply;
  try {
    run_in_netns(admin_netns(), [&] { reply = direct_command(host(member), database, command); });
  } catch (const std::exception& e) {
    reply = {{"ok", 0}, {"errmsg", e.what()}};
  }
  return reply;
}

nlohmann::json Db::command(int member, const std::string& database,
                           const nlohmann::ordered_json& command) const {
  nlohmann::json reply = try_command(member, database, command);
  if (!reply_ok(reply)) {
    throw std::runtime_error(command.begin().key() + " on " + host(member) +
                             " failed: " + reply.dump());
  }
  return reply;
}

}  // namespace locklab
