// The cluster under test: N member processes (mongosim, or a real mongod given by --mongod; both
// take the same flags) started as a replica set "rs0", initiated, and waited on until a primary
// accepts writes.
//
// Ready means what a client needs: a primary elected and a majority write acknowledged.
//
// Member levers for the nemesis: kill_member()/restart_member() (SIGKILL, then the same command
// line on the same dbpath), primary() (who is primary now), set_clock_offset() (a member's
// wall clock: mongosimSetClockOffset on mongosim; with real mongod, libfaketime's timestamp file
// when the members were started under faketime, otherwise refused).
//
// Where members run is decided by the caller: each Member names a network namespace (netns
// backend) or none (loopback backend), an address and a port. Admin commands (hello,
// replSetInitiate, configureFailPoint, final reads) go out from `admin_netns`: on a thread that
// has entered that namespace, so the harness reaches addresses that exist only inside the
// private network. They carry appname "locklab-harness", which no failCommand fault targets.
//
// Thread rules: one thread (the harness's main thread) calls every method; admin commands run
// on a short-lived helper thread and are joined before the call returns.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "process.h"

namespace locklab {

struct MemberPlacement {
  std::string netns;    // "" on the loopback backend
  std::string address;  // bind address: "10.77.0.1" or "127.0.0.1"
  int port = 27017;
};

struct ClusterOptions {
  std::string program;      // mongosim or mongod
  std::string data_dir;     // one subdirectory per member is created here (temporary)
  std::string log_dir;      // member logs: <log_dir>/m<i>.log
  std::string admin_netns;  // where admin commands go out from; "" = the harness's own
  std::vector<MemberPlacement> members;
  int64_t election_timeout_ms = 2000;
  int64_t ready_timeout_ms = 30'000;  // start + initiate + primary + majority write, in total
  // true: the members are real mongod (--mongod): no mongosim-only command is ever sent.
  bool real_mongod = false;
  // With real_mongod: the faketime program to wrap each member in (clock faults), or "".
  std::string faketime;
  // Non-empty: an external, already-initiated set (e.g. docker/) reached at this URI; `members`
  // name its hosts (admin commands, final reads). Nothing is started, stopped or signalled.
  std::string external_uri;
  // Polled by every wait; when it returns true the wait throws Interrupted (Ctrl-C).
  std::function<bool()> interrupted;
};

// Thrown by a Cluster wait when ClusterOptions::interrupted says so.
class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Cluster {
 public:
  Cluster(ClusterOptions options, Supervisor& supervisor);
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Starts every member, initiates the set and waits for a writable primary. Throws
  // std::runtime_error naming the member and the tail of its log when it does not come up.
  void start();
  // Stops every member (SIGTERM, then SIGKILL after grace_ms). Safe to call twice.
  void stop(int64_t grace_ms = 3000);

  // SIGKILLs a member and reaps it (a crash: nothing flushed). Throws when it is not running.
  void kill_member(int member);
  // SIGSTOP / SIGCONT to the member's process group.
  void pause_member(int member);
  // Throws when the member is not running (SIGCONT could not be delivered).
  void resume_member(int member);
  // Starts a member again with its first command line and dbpath; does not wait for it.
  void restart_member(int member);
  // The member that is writable primary now, or -1. When two claim it (a partition), the one
  // with the higher electionId (the newer term) wins, as a driver decides. Stopped (paused)
  // members (pause_member) are not asked: they would hold the caller for the admin timeout.
  int primary() const;
  // Waits (bounded by timeout_ms, interruptible) for a writable primary other than `except`.
  int wait_for_primary(int64_t timeout_ms, int except = -1) const;
  // "primary", "secondary" or "other" (down, paused, starting, recovering, not answering).
  std::string member_state(int member) const;
  // Waits (bounded, interruptible) until the member runs and answers hello; false at timeout.
  bool wait_answering(int member, int64_t timeout_ms) const;

  // One document read at majority read concern from `member` as primary: hello, find, hello
  // on one connection; confirmed only when both hellos say writable primary with the same
  // electionId, so the member was primary in one term for the whole read. Returns the
  // document (null when there is none) or throws std::runtime_error saying why not.
  nlohmann::json read_confirmed(int member, const std::string& database,
                                const std::string& collection, const std::string& id) const;
  // Sets a member's clock offset from the machine's clock; returns the previous offset.
  int64_t set_clock_offset(int member, int64_t offset_ms);
  // The offset last set through set_clock_offset (0 at start).
  int64_t clock_offset(int member) const { return clock_offsets_ms_.at(member); }

  int size() const { return static_cast<int>(options_.members.size()); }
  std::string host(int member) const;  // "address:port"
  pid_t pid(int member) const;
  bool running(int member) const;
  // A connection string for a worker: every member, replicaSet=rs0, appname=<app_name> (an
  // external cluster: its URI plus appname).
  std::string uri(const std::string& app_name) const;

  // Runs one command against `database` on `member` and returns the reply (relaxed extended
  // JSON). The command is an ordered_json because its first key names the command.
  // Throws std::runtime_error with the server's or the driver's message, and for
  // replies with ok: 0.
  nlohmann::json command(int member, const std::string& database,
                         const nlohmann::ordered_json& command) const;
  // Like command(), but never throws: the reply, or {"ok": 0, "errmsg": ...}.
  nlohmann::json try_command(int member, const std::string& database,
                             const nlohmann::ordered_json& command) const;

 private:
  ClusterOptions options_;
  Supervisor& supervisor_;
  std::vector<pid_t> pids_;
  std::vector<int64_t> clock_offsets_ms_;  // what each member's clock offset was last set to
  std::vector<bool> paused_;

  void start_member(int member);
  void wait_until(int member, const std::string& what, int64_t deadline_ms,
                  const std::function<bool()>& ready) const;
  std::string log_tail(int member) const;
  std::string clock_file(int member) const;
  void check_interrupted() const;
  bool majority_write(int member) const;
  bool signal_member(int member, int sig);
  bool external() const { return !options_.external_uri.empty(); }
  void refuse_external(const char* what) const;
};

// True for a command reply with ok: 1.
bool reply_ok(const nlohmann::json& reply);

// Initializes libmongoc once per process and silences its log output (the harness reports
// errors itself). Idempotent.
void init_driver();

// Runs `body` on a helper thread that has entered the named network namespace (or stays in the
// current one when `netns` is empty) and rethrows its exception. setns(CLONE_NEWNET) affects
// only the calling thread, which is why a helper thread is used.
void run_in_netns(const std::string& netns, const std::function<void()>& body);

// A TCP port on 127.0.0.1 that was free a moment ago (loopback backend).
int pick_free_port();

}  // namespace locklab
