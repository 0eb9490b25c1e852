// The run's worker processes: one locklab-worker per worker id ("w1".."wN"), each in its own
// network namespace on the netns backend, each recorded in the history when it is spawned and
// when it exits (process "harness", f "spawn" / "exit").
//
// A killed worker can be restarted under the same id (the kill-worker fault): its appname stays
// the same, so failCommand faults keep targeting it; the history tells incarnations apart by the
// spawn/exit events between them.
//
// Each incarnation writes its events to its own file (run/worker_output.h), which the pool follows
// and merges into the history. A worker that ends on its own before the run asks it to stop
// (not killed by the harness), or that ends having written nothing, is a problem, as is a bad
// line: problems() lists them, and the run fails with them after keeping every good event.
//
// "Written nothing" covers a worker the run stopped, too: an incarnation that ran from the run's
// start until the run stopped it must have written at least one line (its first operation's
// invoke is written before any request, so even a worker cut off from the cluster writes one);
// one that wrote nothing wrote its events somewhere else (stdout, another path), and a run
// judged without them would pass on nothing. A worker is legitimately idle only when a fault
// took the run from it: an incarnation the harness paused (SIGSTOP) or killed, and one started
// again by kill-worker (it may start just before the stop).
//
// Thread rules: the harness's main thread only (it spawns, and PDEATHSIG is per thread).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "checker/history.h"
#include "client/workload.h"
#include "run/process.h"
#include "run/worker_output.h"

namespace locklab {

struct WorkerLaunch {
  std::string program;                    // the client's worker executable (client/clients.h)
  std::vector<std::string> program_args;  // the client's own arguments, before the protocol's
  std::string log_dir;  // worker logs <log_dir>/<id>.log and event files <id>.<n>.jsonl
  WorkerConfig base;    // everything but id, uri, seed and history_path
  uint64_t seed = 0;    // worker i gets seed + i
  std::function<std::string(const std::string& id)> uri_for;
  std::function<std::string(const std::string& id)> netns_for;  // "" = no namespace
  GrantTokens grants;  // what the client's grants carry (its row in the client table)
  // The LD_PRELOAD list for each worker (worker clock faults: worker_faketime_preload, libfaketime
  // last), or "": each worker's wall clock then reads <log_dir>/<id>.faketime on every call (its
  // monotonic clock, which the history and the lock's lease timing use, is left alone). The
  // library is preloaded through `env`, which execs: the worker keeps its pid, so stop and kill
  // signals reach it (the faketime program forks and would take them instead).
  std::string faketime;
  // The directory where each worker process is noted (the run's temporary directory:
  // run/noted_processes.h), or "" for none.
  std::string record_dir;
};

class WorkerPool {
 public:
  WorkerPool(Supervisor& supervisor, HistoryWriter& history, WorkerLaunch launch, int workers);

  const std::vector<std::string>& ids() const { return ids_; }
  void start_all();
  // Spawns the worker (if not running) and records a spawn event. Throws on spawn failure.
  void start(const std::string& id);
  // Sends `sig` to the worker's process group (a wrapper's program too); false when the worker
  // is not running.
  bool signal(const std::string& id, int sig);
  pid_t pid(const std::string& id) const;  // 0 when not running
  // Records the exit of one of our workers; false when the pid is not a worker's.
  bool record_exit(const ExitStatus& status);
  int running() const;
  // SIGCONT + SIGTERM to every worker's process group, wait up to grace_ms (one grace for all),
  // then SIGKILL to those still running; records every exit (an overdue one's exit event says
  // so: value.stop). What is left of every incarnation's process group (a wrapper's child) has
  // the same grace, then SIGKILL.
  void stop_all(int64_t grace_ms);
  // Merges what the running workers wrote since the last call into the history; under worker
  // clock faults, checks each incarnation that has written a line for processes the faults
  // cannot reach (run/clock_reach.h), a problem naming the worker.
  void drain();
  // Bad lines and workers that ended on their own, each naming the worker ("" when none).
  const std::vector<std::string>& problems() const { return outputs_.problems(); }
  size_t problem_count() const { return outputs_.problem_count(); }
  // Sets a worker's wall-clock offset (needs WorkerLaunch::faketime); returns the previous one.
  // A restarted worker keeps its offset. Throws std::runtime_error naming the worker.
  int64_t set_clock_offset(const std::string& id, int64_t offset_ms);
  int64_t clock_offset(const std::string& id) const;

 private:
  Supervisor& supervisor_;
  HistoryWriter& history_;
  WorkerLaunch launch_;
  std::vector<std::string> ids_;
  std::map<std::string, pid_t> pids_;
  std::map<std::string, int64_t> starts_;  // per id: how many times it was spawned
  std::map<std::string, bool> killed_;     // per id: the harness sent its incarnation SIGKILL
  std::map<std::string, bool> faulted_;    // per id: a fault paused or killed it, ever
  std::map<std::string, int64_t> clock_offsets_ms_;  // per id, when faketime is on
  // Process groups (an incarnation's pid) that may have members: a running leader's, or one
  // seen with members since its leader ended (forget_empty_groups).
  std::vector<pid_t> groups_;
  std::map<std::string, bool> clock_checked_;  // per id: its incarnation's processes were checked
  bool stopping_ = false;                            // stop_all was called: exits are expected
  std::map<std::string, int64_t> overdue_;  // per id: still running this grace after SIGTERM
  WorkerOutputs outputs_;

  std::vector<std::string> argv_for(const std::string& id, int index, int64_t incarnation,
                                    const std::string& history_path) const;
  void judge_exit(const std::string& id, const ExitStatus& status);
  void check_clock_reach(const std::string& id);
  void end_groups(std::chrono::steady_clock::time_point deadline);
  void forget_empty_groups();
  static constexpr int64_t kGroupPollMs = 20;
  void judge_stopped(const std::string& id);
  std::string clock_file(const std::string& id) const;
};

}  // namespace locklab
