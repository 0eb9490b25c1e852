#include "run/workers.h"

#include <signal.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "db/faketime_clock.h"
#include "run/clock_reach.h"
#include "run/noted_processes.h"

namespace locklab {

WorkerPool::WorkerPool(Supervisor& supervisor, HistoryWriter& history, WorkerLaunch launch,
                       int workers)
    : supervisor_(supervisor),
      history_(history),
      launch_(std::move(launch)),
      outputs_(history, launch_.log_dir, launch_.grants) {
  assert(workers >= 1);
  for (int i = 1; i <= workers; ++i) ids_.push_back("w" + std::to_string(i));
}

void WorkerPool::start_all() {
  if (!launch_.faketime.empty()) {
    if (const std::string why = check_worker_program(launch_.program); !why.empty()) {
      throw std::runtime_error("worker clock faults cannot move the workers' clocks: " + why);
    }
  }
  for (const std::string& id : ids_) start(id);
}

std::vector<std::string> WorkerPool::argv_for(const std::string& id, int index, int64_t incarnation,
                                              const std::string& history_path) const {
  const WorkerConfig& b = launch_.base;
  std::vector<std::string> argv = {launch_.program,
                                   "--id",
                                   id,
                                   "--uri",
                                   launch_.uri_for(id),
                                   "--history",
                                   history_path,
                                   "--database",
                                   b.database,
                                   "--kind",
                                   std::string(to_string(b.kind)),
                                   "--locks",
                                   std::to_string(b.locks),
                                   "--critical-section-ms",
                                   std::to_string(b.critical_section_ms),
                                   "--honour-lost",
                                   b.honour_lost ? "true" : "false",
                                   "--operations",
                                   std::to_string(b.operations),
                                   "--expiry-ms",
                                   std::to_string(b.lock.expiry_ms),
                                   "--extension-cadence-ms",
                                   std::to_string(b.lock.extension_cadence_ms),
                                   "--backoff",
                                   std::string(to_string(b.lock.backoff)),
                                   "--busy-wait-min-ms",
                                   std::to_string(b.lock.busy_wait_min_ms),
                                   "--busy-wait-max-ms",
                                   std::to_string(b.lock.busy_wait_max_ms),
                                   "--write-concern",
                                   write_concern_flag(b.lock.write_concern_w),
                                   "--seed",
                                   std::to_string(launch_.seed + static_cast<uint64_t>(index)),
                                   "--incarnation",
                                   std::to_string(incarnation)};
  if (!b.lock.fencing) argv.push_back("--no-fencing");
  argv.insert(argv.begin() + 1, launch_.program_args.begin(), launch_.program_args.end());
  if (b.lock.reap_after_s >= 0) {
    argv.insert(argv.end(), {"--reap-after-s", std::to_string(b.lock.reap_after_s)});
  }
  if (b.lock.socket_timeout_ms > 0) {
    argv.insert(argv.end(), {"--socket-timeout-ms", std::to_string(b.lock.socket_timeout_ms)});
  }
  if (b.kind == WorkloadKind::kRw) {  // only then, so other workloads keep their argv
    argv.insert(argv.end(), {"--read-percent", std::to_string(b.read_percent), "--max-shared",
                             std::to_string(b.lock.max_shared)});
  }
  return argv;
}

void WorkerPool::start(const std::string& id) {
  if (pid(id) != 0) return;
  const auto at = std::find(ids_.begin(), ids_.end(), id);
  if (at == ids_.end()) throw std::invalid_argument("no worker " + id);
  // An incarnation whose exit was never recorded: merge the rest of its file first.
  outputs_.close(id, killed_[id]);
  killed_[id] = false;
  clock_checked_[id] = false;
  const int64_t incarnation = starts_[id]++;
  const std::string history_path = outputs_.open(id, incarnation);
  SpawnOptions options;
  options.argv = argv_for(id, static_cast<int>(at - ids_.begin()), incarnation, history_path);
  if (!launch_.faketime.empty()) {
    set_clock_offset(id, clock_offset(id));
    std::vector<std::string> wrap = {"/usr/bin/env", "-u", "FAKETIME"};
    for (std::string& entry : faketime_environment(launch_.faketime, clock_file(id)))
      wrap.push_back(std::move(entry));
    options.argv.insert(options.argv.begin(), wrap.begin(), wrap.end());
  }
  options.netns = launch_.netns_for(id);
  options.log_path = launch_.log_dir + "/" + id + ".log";
  const pid_t pid = supervisor_.spawn(options);
  pids_[id] = pid;
  if (!launch_.record_dir.empty())
    note_run_process(launch_.record_dir, pid, !launch_.faketime.empty());
  groups_.push_back(pid);
  history_.append(
      {0, "harness", EventType::kInfo, "spawn", "", std::nullopt, {{"worker", id}, {"pid", pid}}});
}

void WorkerPool::drain() {
  outputs_.drain();
  forget_empty_groups();
  if (launch_.faketime.empty()) return;
  for (const std::string& id : ids_) {
    if (!clock_checked_[id] && pid(id) != 0 && outputs_.lines(id) > 0) check_clock_reach(id);
  }
}

// Once the incarnation has written a line its own program runs (env has exec'd it).
void WorkerPool::check_clock_reach(const std::string& id) {
  clock_checked_[id] = true;
  const pid_t group = pid(id);
  if (group <= 0) return;  // group 0 would be the kernel's threads
  std::vector<std::string> preloads;
  std::istringstream list(launch_.faketime);
  for (std::string path; std::getline(list, path, ':');) preloads.push_back(path);
  const std::string why = clock_fault_unreachable(group, preloads.back(), preloads);
  if (!why.empty()) outputs_.problem(id, "worker clock faults cannot move its clock: " + why);
}

std::string WorkerPool::clock_file(const std::string& id) const {
  return launch_.log_dir + "/" + id + ".faketime";
}

int64_t WorkerPool::clock_offset(const std::string& id) const {
  auto it = clock_offsets_ms_.find(id);
  return it == clock_offsets_ms_.end() ? 0 : it->second;
}

int64_t WorkerPool::set_clock_offset(const std::string& id, int64_t offset_ms) {
  if (launch_.faketime.empty())
    throw std::runtime_error("cannot move " + id + "'s clock: workers run without faketime");
  write_clock_file(clock_file(id), offset_ms);
  const int64_t previous = clock_offset(id);
  clock_offsets_ms_[id] = offset_ms;
  return previous;
}

// The faults' way to a worker (stop_all signals directly): a pause or a kill excuses an idle
// worker (judge_stopped).
bool WorkerPool::signal(const std::string& id, int sig) {
  const pid_t p = pid(id);
  if (p != 0 && sig == SIGKILL) killed_[id] = true;
  if (p != 0 && (sig == SIGKILL || sig == SIGSTOP)) faulted_[id] = true;
  // To the worker's process group (the leader is running, so the group's id is ours): a
  // wrapper's program is paused or killed with it.
  return p != 0 && supervisor_.running(p) && ::kill(-p, sig) == 0;
}

pid_t WorkerPool::pid(const std::string& id) const {
  auto it = pids_.find(id);
  return it != pids_.end() && supervisor_.running(it->second) ? it->second : 0;
}

bool WorkerPool::record_exit(const ExitStatus& status) {
  for (auto it = pids_.begin(); it != pids_.end(); ++it) {
    if (it->second != status.pid) continue;
    outputs_.close(it->first, killed_[it->first]);
    judge_exit(it->first, status);
    if (!launch_.faketime.empty()) remove_faketime_files(status.pid);  // just reaped: still ours
    nlohmann::json value = {
        {"worker", it->first}, {"pid", status.pid}, {"status", status.describe()}};
    if (auto late = overdue_.find(it->first); late != overdue_.end()) {
      // WORKERS.md, "How a worker is stopped": it should have exited on SIGTERM.
      value["stop"] = "still running " + std::to_string(late->second) + " ms after SIGTERM: killed";
    }
    history_.append({0, "harness", EventType::kInfo, "exit", "", std::nullopt, std::move(value)});
    pids_.erase(it);
    return true;
  }
  return false;
}

int WorkerPool::running() const {
  int n = 0;
  for (const auto& [id, p] : pids_) n += supervisor_.running(p) ? 1 : 0;
  return n;
}

namespace {

constexpr size_t kLogTailBytes = 4096;  // how much of a worker's log its last line is looked for in

// ", ending: <the log's last non-empty line>" (what a crash usually says last), or "".
std::string last_line_of(const std::string& log_path) {
  std::ifstream in(log_path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  const std::streamoff from =
      std::max<std::streamoff>(0, size - static_cast<std::streamoff>(kLogTailBytes));
  in.seekg(from);
  std::string tail(static_cast<size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r' || tail.back() == ' ')) {
    tail.pop_back();
  }
  if (tail.empty()) return "";
  const size_t start = tail.rfind('\n');
  return ", ending: " + tail.substr(start == std::string::npos ? 0 : start + 1);
}

}  // namespace

// A worker runs until the harness stops or kills it, or until it has done its operations.
void WorkerPool::judge_exit(const std::string& id, const ExitStatus& status) {
  if (stopping_) {
    judge_stopped(id);
    return;
  }
  if (killed_[id]) return;
  const std::string log = launch_.log_dir + "/" + id + ".log";
  if (status.code != 0) {
    outputs_.problem(id, "ended on its own before the run asked it to stop (" + status.describe() +
                             "); its output: " + log + last_line_of(log));
  } else if (launch_.base.operations == 0) {
    outputs_.problem(id,
                     "exited (exit 0) before the run asked it to stop, in a run timed by "
                     "duration (it must run until SIGTERM); its output: " +
                         log);
  } else if (outputs_.events(id) == 0) {
    outputs_.problem(id, "exited (exit 0) having written no event; its output: " + log);
  }
}

// An incarnation the run stopped: it must have written something unless a fault took the run
// from it (workers.h). Lines, not events: a worker whose every line was bad wrote to the right
// place, and each of its lines is a problem already.
void WorkerPool::judge_stopped(const std::string& id) {
  if (starts_[id] != 1 || faulted_[id] || outputs_.lines(id) > 0) return;
  outputs_.problem(id, "ran until the run stopped it and wrote nothing to " + outputs_.file(id) +
                           ", its --history file, where a worker appends its events, one JSON line "
                           "each, starting with its first operation's invoke (were they written to "
                           "stdout, or to another path?); its output: " +
                           launch_.log_dir + "/" + id + ".log");
}

// What is left of every incarnation's process group once the leaders are done (a wrapper's
// child finishing its release, a child a worker left running, a killed incarnation's
// children): up to `deadline` to end, then SIGKILL. Only groups seen with members are
// signalled: a group with members keeps its id from reuse, while an empty one's id may be
// another process's by now. Not at all when /proc is not this PID namespace's.
void WorkerPool::end_groups(std::chrono::steady_clock::time_point deadline) {
  forget_empty_groups();
  while (!groups_.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(kGroupPollMs));
    forget_empty_groups();
  }
  for (const pid_t group : groups_) ::kill(-group, SIGKILL);
}

// A group whose leader has ended is dropped as soon as it is seen empty (every drain, every
// 20 ms or so): its id is free from then on and may become another process's. One whose
// leader runs is kept (the id is the leader's). When /proc is not this PID namespace's, no
// group can be seen: all but the running leaders' are dropped, never signalled.
void WorkerPool::forget_empty_groups() {
  const bool visible = proc_is_ours();
  std::erase_if(groups_, [&](pid_t group) {
    if (supervisor_.running(group)) return false;
    if (!visible) return true;
    if (!process_group(group).empty()) return false;
    // Reaped (its pair removed: record_exit) and its group empty: the id may be anyone's now.
    if (!launch_.record_dir.empty()) note_run_process_ended(launch_.record_dir, group);
    return true;
  });
}

void WorkerPool::stop_all(int64_t grace_ms) {
  stopping_ = true;
  // To every worker's process group, and to what is left of earlier incarnations' (a killed
  // wrapper's program): a worker that is a wrapper must not leave its program behind, nor stop
  // it without its grace.
  forget_empty_groups();
  for (const pid_t group : groups_) {
    ::kill(-group, SIGCONT);
    ::kill(-group, SIGTERM);
  }
  // One grace for all: the workers stop together, so a worker that ignores SIGTERM costs the
  // run one grace, not one per worker.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
  const std::map<std::string, pid_t> pending = pids_;
  std::vector<std::pair<std::string, pid_t>> overdue;
  for (const auto& [id, p] : pending) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (std::optional<ExitStatus> status =
            supervisor_.wait_exit(p, std::max<int64_t>(0, left.count()))) {
      record_exit(*status);
    } else {
      overdue.emplace_back(id, p);
    }
  }
  end_groups(deadline);
  for (const auto& [id, p] : overdue) {
    killed_[id] = true;
    overdue_[id] = grace_ms;
    supervisor_.signal(p, SIGKILL);
  }
  for (const auto& [id, p] : overdue) {
    if (std::optional<ExitStatus> status = supervisor_.wait_exit(p, grace_ms)) record_exit(*status);
  }
  end_groups(std::chrono::steady_clock::now());
}

}  // namespace locklab
