// A replica set of real mongosim processes on 127.0.0.1 for tests: started (each member a
// MongosimNode, optionally on its own --dbpath under the set's TempDir), initiated by the
// harness's own Db::initiate with the test's timers, priorities and settings, and waited for
// until it is ready as the harness defines ready (db/db.h Db::start: a writable primary that
// acknowledges a majority write), and until every reachable member agrees on that primary (the
// harness's Db::primary). Unlike Db::start, the first election is not prompted: tests of
// elections see the set elect as it would.
//
//   ReplicaSet set({.members = 3});           // throws std::runtime_error with the logs
//   int p = set.primary();  set.pause(p);  set.wait_for_primary(after(30s), p);  set.kill(p);
//
// Invariants: member indexes are 0..size()-1 (std::out_of_range otherwise); the set's name is
// its own (set_name(), db/admin.h unique_set_name(): tests run in parallel on one loopback);
// member i's host is in the config as _id i.
// Thread rules: one owner thread (the nodes' rule); primary() and member(i).command() open
// connections of their own and may be called from any thread while no other thread kills,
// pauses or restarts members. The destructor kills every member and removes the dbpaths.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mongosim_node.h"
#include "poll_until.h"
#include "temp_dir.h"

namespace locklab::testkit {

class ReadinessDb;

struct SetOptions {
  int members = 3;
  std::string program = {};            // "" = mongosim_program()
  std::vector<std::string> args = {};  // given to every member after --replSet <set name>
  bool dbpaths = false;                // each member on its own --dbpath (kill + restart keep data)
  // Short timers keep elections within a second or two (db/db.h DbConfig: election timeout 0
  // leaves both timers to the server, 10 s and 2 s; heartbeat 0 with an election timeout is a
  // quarter of it).
  int32_t election_timeout_ms = 1000;
  int32_t heartbeat_interval_ms = 200;
  std::vector<double> priorities = {};  // one per member; empty: every member 1
  nlohmann::json settings =
      nlohmann::json::object();        // more replica-set settings (catchUpTimeoutMillis...)
  std::vector<int> start_paused = {};  // members paused (SIGSTOP) before replSetInitiate
  std::chrono::milliseconds ready_timeout{30'000};  // initiate until ready
  std::chrono::milliseconds start_timeout{10'000};  // per member, until it accepts connections
};

class ReplicaSet {
 public:
  static constexpr int kMaxMembers = 7;  // MongoDB's limit on voting members
  static constexpr size_t kLogTailBytes = 12'000;

  explicit ReplicaSet(SetOptions options = {});
  ~ReplicaSet();
  ReplicaSet(const ReplicaSet&) = delete;
  ReplicaSet& operator=(const ReplicaSet&) = delete;

  int size() const { return static_cast<int>(members_.size()); }
  MongosimNode& member(int i) { return *members_.at(static_cast<size_t>(i)); }
  const MongosimNode& member(int i) const { return *members_.at(static_cast<size_t>(i)); }
  // mongodb://h0,h1,.../?replicaSet=<set name> plus "&<options>" when given.
  std::string uri(const std::string& options = "") const;
  const std::string& set_name() const { return set_name_; }

  // The harness's primary (db/db.h Db::primary: the writable primary of the latest election)
  // when every running, unpaused member names it as primary; else -1.
  int primary() const;
  // Polls for a primary other than `not_this` (-1: any); returns it, or -1 at the deadline.
  int wait_for_primary(Deadline deadline, int not_this = -1) const;
  // hello of member i, or nullopt when it is not running, paused or does not answer.
  std::optional<nlohmann::json> hello(int i) const;

  void kill(int i) { member(i).kill(); }
  void pause(int i) { member(i).pause(); }
  void resume(int i) { member(i).resume(); }
  // Starts a killed member again on its port (and dbpath); waits until it accepts connections.
  void restart(int i) { member(i).restart(); }

  // Every member's log without per-connection lines (the last kLogTailBytes of each) and the
  // replSetGetStatus of each reachable member, for failure messages.
  std::string logs() const;

 private:
  // replSetInitiate on member 0 with the options' config; throws std::runtime_error with the
  // reply.
  void initiate();
  // Waits until the set is ready as the harness defines it (db/db.h) and every reachable member
  // agrees on the primary; throws std::runtime_error naming what is missing, with the logs.
  void wait_ready(Deadline deadline);
  bool reachable(int i) const;

  SetOptions options_;
  std::string set_name_;
  std::unique_ptr<TempDir> dir_;
  std::vector<std::unique_ptr<MongosimNode>> members_;
  std::unique_ptr<ReadinessDb> db_;  // the harness's Db over the members
};

}  // namespace locklab::testkit
