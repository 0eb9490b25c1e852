// The database under test, as an interface: one replica set (DbConfig::set_name) of N members
// ("m0".."m<N-1>"), however it is run. One implementation per way to run a set:
//   MongosimDb  (db/process_db.h)  mongosim processes the harness spawns, each in a network
//               namespace of the run (placement netns: partitions possible) or on 127.0.0.1
//               (placement loopback);
//   MongodDb    (db/process_db.h)  the same with a real mongod (--mongod); member clocks through
//               libfaketime when the scenario moves them;
//   ExternalDb  (db/external_db.h) an already-initiated set reached at a URI (--external-uri):
//               nothing is started, stopped or signalled.
//   DockerDb    (db/docker_db.h)   members (and workers) in containers (--cluster docker).
// A new way is one more subclass; the run, the nemesis and the preflight see only this interface.
//
// Life of a Db: constructed (no side effects: nothing started, nothing created; supports() and
// the naming methods answer already, which is what the preflight relies on) -> start() ->
// levers and admin commands -> stop() -> teardown() (also from the destructor).
//
// Members are numbered 0..size()-1 in every method; an index outside that range is a bug of the
// caller (std::out_of_range). Methods that fail throw std::runtime_error naming the member
// ("m1") and what failed, unless said otherwise.
//
// Admin commands (hello, replSetInitiate, configureFailPoint, the final reads) are implemented
// here once, as direct connections to host(member) opened from admin_netns(), with appname
// "locklab-harness" (which no failCommand fault targets). A backend overrides them only if its
// members cannot be reached that way.
//
// Thread rules: one thread (the harness's main thread) calls every method; admin commands run on
// a short-lived helper thread (to enter admin_netns()) that is joined before the call returns.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "db/partitions.h"
#include "db/reply_relays.h"
#include "nemesis/fault_kind.h"

namespace locklab {

// What every backend is given. Backend-specific settings (program, image, URI) go to the
// subclass's constructor.
struct DbConfig {
  int members = 3;
  std::vector<std::string> workers;    // "w1".."wN": worker hosts a backend with a network places
  int64_t election_timeout_ms = 2000;  // 0: the config leaves the timers to the server
  // 0: heartbeats at a quarter of the election timeout (100..2000 ms).
  int64_t heartbeat_interval_ms = 0;
  std::vector<double> priorities;  // the config's member priorities; empty: every member 1
  nlohmann::json settings = nlohmann::json::object();  // more config settings (catchUp...)
  int64_t ready_timeout_ms = 30'000;  // start(): up, initiated, primary, majority write, in total
  // The set's name. Members on the host's loopback get unique_set_name() (db/admin.h) instead:
  // ProcessDb's loopback placement sets it.
  std::string set_name = "rs0";
  std::string run_prefix;             // "ll-<pid>": every name the run creates starts with it
  std::string data_dir;               // the run's temporary directory (dbpaths, clock files)
  std::string log_dir;                // member logs: <log_dir>/m<i>.log
  std::string database = "locklab";   // the workload's database
  bool moves_member_clocks = false;   // the scenario has a fault that moves a member's clock
  // The scenario delays replies (reply-delay): a backend that can starts a relay per worker
  // (db/reply_relays.h) from `relay_program` before any worker runs.
  bool delays_replies = false;
  std::string relay_program;
  // Polled by every wait; when it returns true the wait throws Interrupted (Ctrl-C).
  std::function<bool()> interrupted;
};

// Thrown by a Db wait when DbConfig::interrupted says so.
class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown by start() when the member program lacks what the run needs (a mongosim without the
// clock command): the run is reported as "locklab: unsupported: ..." (skipped), not failed.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A member that ended without the harness asking (crashed, killed from outside).
struct MemberEnd {
  int member = -1;
  std::string how;  // "signal 9", "exit 1", as ExitStatus::describe() words it
};

class Db {
 public:
  explicit Db(DbConfig config);
  virtual ~Db() = default;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // --- What it is (answer right after construction) ---------------------------------------

  // The backend's name as the history's start event records it: "netns", "loopback",
  // "external", ...
  virtual std::string name() const = 0;
  // What runs the members, for versions.json ("/path/to/mongosim", "external mongodb://...").
  virtual std::string member_program() const = 0;
  // nullopt when the backend can inject `kind`, else why not, phrased to follow the kind's
  // name: "needs the netns backend (...)". Pure: starts nothing, may look at the machine (is
  // faketime installed?). The preflight asks it for every fault of the scenario.
  virtual std::optional<std::string> supports(FaultKind kind) const = 0;
  // Same for [nemesis.random] as a whole (a backend may refuse random mixes).
  virtual std::optional<std::string> supports_random_mix() const { return std::nullopt; }
  int size() const { return config_.members; }

  // --- Lifecycle ---------------------------------------------------------------------------

  // Brings the set up: members running, the set initiated, a writable primary that has
  // acknowledged a majority write (what a client needs), and the workload's database empty.
  // Throws std::runtime_error naming the member and the tail of its log when one does not come
  // up within ready_timeout_ms; Interrupted; Unsupported.
  virtual void start() = 0;
  // Stops every member it started (resuming paused ones first; SIGTERM then SIGKILL after
  // grace_ms, or the backend's equivalent). Never throws; safe to call twice and before start.
  virtual void stop(int64_t grace_ms = 3000) = 0;
  // Removes everything the backend created (namespaces, containers, volumes, temporary files
  // of its own), after stop() and after the workers are gone. Never throws; safe to call twice.
  virtual void teardown() = 0;

  // --- Where clients are (valid after start()) --------------------------------------------

  // "address:port" of a member as workers and admin commands reach it.
  virtual std::string host(int member) const = 0;
  // A connection string for a worker: every member, replicaSet=<set name>, appname=<app_name>.
  virtual std::string uri(const std::string& app_name) const = 0;
  // The network namespace a worker process is spawned in: "" (the harness's own), a name under
  // /var/run/netns, or an absolute path (a container's /proc/<pid>/ns/net). Its address must be
  // the one partitions() knows the worker by.
  virtual std::string worker_netns(const std::string& worker) const = 0;
  // The process the harness spawned for a member and reaps (its Supervisor's child), or 0 when
  // there is none to watch; a member process that ends on its own fails the run.
  virtual pid_t pid(int /*member*/) const { return 0; }
  // Members whose end this backend noticed itself since the last call, for backends whose
  // members are not the harness's children (pid() is 0): the run fails on them as on a reaped
  // member. Never reports a member the harness killed or stopped. Throws std::runtime_error when
  // the backend can no longer tell (its watch ended).
  virtual std::vector<MemberEnd> poll_ended_members() { return {}; }
  // Hosts this backend made for workers (docker: a worker's placeholder container) that ended
  // since the last call, each as a line naming the worker and how. The worker's network went
  // with its host, a fault the history does not show, so the run fails on them. Never reports
  // an end the harness caused (stop, teardown).
  virtual std::vector<std::string> poll_ended_worker_hosts() { return {}; }

  // --- Member levers (only for kinds supports() accepted) ---------------------------------

  // A crash: nothing flushed; returns once the member is gone. Throws when it is not running.
  virtual void kill_member(int member) = 0;
  // Starts a killed member again on the same data; does not wait for it (wait_answering()).
  // Does nothing when it is running.
  virtual void restart_member(int member) = 0;
  // Freezes every process of the member (SIGSTOP or equivalent); resume_member() thaws it.
  // Both throw when the member is not running.
  virtual void pause_member(int member) = 0;
  virtual void resume_member(int member) = 0;
  // Running (possibly paused) as far as the backend knows; an external member always is.
  virtual bool running(int member) const = 0;
  virtual bool paused(int member) const = 0;
  // Sets a member's wall-clock offset from the machine's clock (its monotonic clock and timers
  // are untouched) and returns the previous offset; clock_offset() is the last one set (0 at
  // start). Takes effect before it returns.
  virtual int64_t set_clock_offset(int member, int64_t offset_ms) = 0;
  virtual int64_t clock_offset(int member) const = 0;
  // The partition hooks, or nullptr when this backend cannot cut hosts apart (then supports()
  // refuses every kind whose row says needs_network). Valid after start(); every member and
  // every worker of DbConfig::workers is a role there.
  virtual Partitions* partitions() { return nullptr; }
  // The reply-delay lever, or nullptr when this backend has none or the scenario did not ask
  // for it (DbConfig::delays_replies). Valid after start().
  virtual ReplyDelays* reply_delays() { return nullptr; }
  // When `pid` is a helper process of this backend (a reply relay): the words that name it in
  // the error its unasked-for end is. nullopt for any other process.
  virtual std::optional<std::string> helper_of(pid_t /*pid*/) const { return std::nullopt; }

  // --- Admin (default: direct connections from admin_netns()) ------------------------------

  // Runs one command against `database` on `member` and returns the reply (relaxed extended
  // JSON); the command's first key names it. Throws std::runtime_error with the server's or
  // the driver's message, and for replies with ok: 0.
  virtual nlohmann::json command(int member, const std::string& database,
                                 const nlohmann::ordered_json& command) const;
  // Like command(), but never throws: the reply, or {"ok": 0, "errmsg": ...}.
  virtual nlohmann::json try_command(int member, const std::string& database,
                                     const nlohmann::ordered_json& command) const;
  // One document read at majority read concern from `member` as primary: hello, find, hello on
  // one connection, confirmed only when both hellos say writable primary with the same
  // electionId. Returns the document (null when there is none) or throws saying why not.
  virtual nlohmann::json read_confirmed(int member, const std::string& database,
                                        const std::string& collection, const std::string& id) const;
  // The member that is writable primary now, or -1. When two claim it (a partition), the one
  // with the newer electionId wins, as a driver decides. Paused members are not asked.
  int primary() const;
  // Waits (bounded, interruptible) for a writable primary other than `except`; -1 at timeout.
  int wait_for_primary(int64_t timeout_ms, int except = -1) const;
  // "primary", "secondary" or "other" (down, paused, starting, recovering, not answering).
  std::string member_state(int member) const;
  // Waits (bounded, interruptible) until the member runs and answers hello; false at timeout.
  bool wait_answering(int member, int64_t timeout_ms) const;

 protected:
  // Where admin commands go out from: "" (the harness's own namespace), a name under
  // /var/run/netns, or an absolute path to a namespace file.
  virtual std::string admin_netns() const { return ""; }
  // The tail of a member's log for error messages ("" when the backend keeps none).
  virtual std::string log_tail(int member) const;

  // Building blocks for start(): initiate rs0 from host(0..n-1) with the configured timers,
  // priorities and settings (AlreadyInitialized is fine); wait until every member answers hello;
  // wait until a writable primary acknowledges a majority write. Deadlines are steady-clock
  // milliseconds; `reap` as for wait_until.
  void initiate() const;
  void wait_all_answering(int64_t deadline_ms, const std::function<void()>& reap = nullptr) const;
  void wait_ready(int64_t deadline_ms, const std::function<void()>& reap = nullptr) const;
  // After initiate(): once every member has the config, asks member 0 to stand (replSetStepUp)
  // instead of waiting out an election timeout. Best effort, never throws for a refusal: the
  // ordinary election follows when it is refused; wait_ready() still decides "ready".
  void prompt_first_election(int64_t deadline_ms, const std::function<void()>& reap) const;
  void check_interrupted() const;
  // Polls `ready` until it returns true; throws naming the member (and its log tail) when the
  // member stops running or the deadline passes. `reap` is called before each poll.
  void wait_until(int member, const std::string& what, int64_t deadline_ms,
                  const std::function<bool()>& ready,
                  const std::function<void()>& reap = nullptr) const;

  const DbConfig& config() const { return config_; }

 private:
  DbConfig config_;
  bool majority_write(int member) const;
};

}  // namespace locklab
