// A replica set of N real mongosim processes on 127.0.0.1 for integration tests: started,
// initiated with short protocol timers, and observed through raw commands.
//
//   ReplicaSetCluster set(5);                 // throws std::runtime_error if no primary
//   int p = set.primary_index();  set.command(p, {...});  set.pause(i);  set.kill(i);
//
// Every wait is a deadline on a polled condition, never an assertion on elapsed time.
// Thread rules: one owner thread, except command()/hello(), which open their own connection
// per call and may run on any thread. The destructor kills and reaps every member.
#pragma once

#include <signal.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bson/codec.h"
#include "server/tests/mongosim_process.h"
#include "server/tests/raw_client.h"

namespace mongosim::testing {

struct ClusterOptions {
  int32_t election_timeout_ms = 1000;  // short timers keep elections within a second or two
  int32_t heartbeat_interval_ms = 200;
  std::vector<std::string> extra_args;  // given to every member
  std::vector<double> priorities;       // per member; empty: all 1
  std::vector<int> start_paused;        // members paused (SIGSTOP) before replSetInitiate
};

class ReplicaSetCluster {
 public:
  static constexpr int kMaxMembers = 7;  // MongoDB's limit on voting members
  static constexpr std::chrono::milliseconds kConvergeTimeout{30000};
  static constexpr std::chrono::milliseconds kPollInterval{50};

  explicit ReplicaSetCluster(int member_count, ClusterOptions options = {}) {
    if (member_count < 2 || member_count > kMaxMembers) {
      throw std::invalid_argument("member_count must be in [2, 7]");
    }
    for (int i = 0; i < member_count; ++i) {
      std::vector<std::string> args{"--replSet", "rs0"};
      args.insert(args.end(), options.extra_args.begin(), options.extra_args.end());
      members_.push_back(std::make_unique<MongosimProcess>(args));
    }
    dead_.assign(static_cast<size_t>(member_count), false);
    paused_.assign(static_cast<size_t>(member_count), false);
    if (!options.priorities.empty() && options.priorities.size() != members_.size()) {
      throw std::invalid_argument("priorities must name every member");
    }
    for (int i : options.start_paused) pause(i);
    auto reply = command(0, bson::Document{{"replSetInitiate", bson::V(config(options))}});
    if (!reply || !is_ok(*reply)) {
      throw std::runtime_error("replSetInitiate failed: " +
                               (reply ? bson::to_json(*reply) : std::string("no reply")));
    }
    if (!wait_until([&] { return primary_index() >= 0; })) {
      throw std::runtime_error("no primary elected\n" + logs());
    }
  }

  ~ReplicaSetCluster() {
    for (size_t i = 0; i < members_.size(); ++i) {
      if (paused_[i]) ::kill(members_[i]->pid(), SIGCONT);  // so SIGKILL reaps it promptly
    }
  }

  ReplicaSetCluster(const ReplicaSetCluster&) = delete;
  ReplicaSetCluster& operator=(const ReplicaSetCluster&) = delete;

  int size() const { return static_cast<int>(members_.size()); }
  const MongosimProcess& member(int i) const { return *members_.at(static_cast<size_t>(i)); }

  // mongodb://h1,h2,.../?replicaSet=rs0 plus `options` ("retryWrites=true&...").
  std::string uri(const std::string& options = "") const {
    std::string out = "mongodb://";
    for (int i = 0; i < size(); ++i) out += (i ? "," : "") + member(i).host();
    return out + "/?replicaSet=rs0" + (options.empty() ? "" : "&" + options);
  }

  // One command on a fresh connection; nullopt if the member does not answer.
  std::optional<bson::Document> command(int i, const bson::Document& cmd,
                                        const std::string& db = "admin") const {
    if (dead_[static_cast<size_t>(i)]) return std::nullopt;
    try {
      RawClient raw(member(i).port());
      return raw.command(cmd, db);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

  std::optional<bson::Document> hello(int i) const {
    return command(i, bson::Document{{"hello", bson::V(int32_t{1})}});
  }

  // The member every live, unpaused member agrees is the writable primary, or -1.
  int primary_index() const {
    int writable = -1;
    int writable_count = 0;
    std::vector<std::optional<bson::Document>> hellos;
    for (int i = 0; i < size(); ++i) {
      hellos.push_back(reachable(i) ? hello(i) : std::nullopt);
      if (reachable(i) && !hellos.back()) return -1;
      if (hellos.back() && hellos.back()->get("isWritablePrimary")->truthy()) {
        writable = i;
        ++writable_count;
      }
    }
    if (writable_count != 1) return -1;
    for (int i = 0; i < size(); ++i) {
      if (!hellos[static_cast<size_t>(i)]) continue;
      const bson::Value* primary = hellos[static_cast<size_t>(i)]->get("primary");
      if (primary == nullptr || primary->as_string() != member(writable).host()) return -1;
    }
    return writable;
  }

  // Waits for a primary other than `not_this` (-1: any); returns it or -1 at the deadline.
  int wait_for_primary(int not_this = -1) const {
    int found = -1;
    wait_until([&] {
      found = primary_index();
      return found >= 0 && found != not_this;
    });
    return found != not_this ? found : -1;
  }

  // True once member i's own data holds a document with this _id in db.coll (a find with
  // readPreference nearest, so secondaries answer too).
  bool has_document(int i, const std::string& db, const std::string& coll,
                    const bson::Value& id) const {
    auto found = command(
        i,
        bson::Document{{"find", bson::V(coll)},
                       {"filter", bson::V(bson::Document{{"_id", id}})},
                       {"$readPreference", bson::V(bson::Document{{"mode", bson::V("nearest")}})}},
        db);
    return found && is_ok(*found) &&
           found->get("cursor")->as_document().get("firstBatch")->as_array().size() == 1;
  }

  // The member's term from replSetGetStatus, or -1.
  int64_t term(int i) const {
    auto status = command(i, bson::Document{{"replSetGetStatus", bson::V(int32_t{1})}});
    return status && is_ok(*status) ? status->get("term")->as_int64() : -1;
  }

  void kill(int i) {
    ::kill(members_.at(static_cast<size_t>(i))->pid(), SIGKILL);
    dead_[static_cast<size_t>(i)] = true;
  }
  // SIGSTOP: the member keeps its sockets but answers nothing, like a paused process.
  void pause(int i) {
    pid_t pid = members_.at(static_cast<size_t>(i))->pid();
    ::kill(pid, SIGSTOP);
    if (!wait_until_stopped(pid)) throw std::runtime_error("member did not stop on SIGSTOP");
    paused_[static_cast<size_t>(i)] = true;
  }
  void resume(int i) {
    ::kill(members_.at(static_cast<size_t>(i))->pid(), SIGCONT);
    paused_[static_cast<size_t>(i)] = false;
  }

  // Every member's log, for failure messages.
  std::string logs() const {
    std::string out;
    for (int i = 0; i < size(); ++i) {
      out += "--- member " + std::to_string(i) + " log:\n" + member(i).log_text();
    }
    return out;
  }

  static bool is_ok(const bson::Document& reply) {
    return reply.get("ok") != nullptr && reply.get("ok")->truthy();
  }

  // Polls `done` until it is true or the deadline passes; returns its last value.
  static bool wait_until(const std::function<bool()>& done,
                         std::chrono::milliseconds timeout = kConvergeTimeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(kPollInterval);
    }
    return done();
  }

 private:
  bool reachable(int i) const {
    return !dead_[static_cast<size_t>(i)] && !paused_[static_cast<size_t>(i)];
  }

  bson::Document config(const ClusterOptions& options) const {
    bson::Array hosts;
    for (int i = 0; i < size(); ++i) {
      bson::Document m{{"_id", bson::V(int32_t{i})}, {"host", bson::V(member(i).host())}};
      if (!options.priorities.empty()) {
        m.append("priority", bson::V(options.priorities[static_cast<size_t>(i)]));
      }
      hosts.push_back(bson::V(std::move(m)));
    }
    return bson::Document{
        {"_id", bson::V("rs0")},
        {"members", bson::V(std::move(hosts))},
        {"settings", bson::V(bson::Document{
                         {"electionTimeoutMillis", bson::V(options.election_timeout_ms)},
                         {"heartbeatIntervalMillis", bson::V(options.heartbeat_interval_ms)}})}};
  }

  std::vector<std::unique_ptr<MongosimProcess>> members_;
  std::vector<bool> dead_;
  std::vector<bool> paused_;
};

}  // namespace mongosim::testing
