#include "child.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "apm_pool.h"
#include "clock.h"
#include "contender.h"
#include "run/process.h"

namespace lockbench {
namespace {

constexpr int64_t kReadyTimeoutMs = 60'000;        // 64 children building pools on 2 cores
constexpr int64_t kExitGraceNs = 60 * kNsPerS;     // after stop_ns, for the last release
constexpr int64_t kStartDelayNs = 200 * kNsPerMs;  // "go" to the first acquire
constexpr size_t kLineBytesMax = 256;
constexpr int64_t kEndedWaitMs = 1'000;    // for a child whose stdout ended to be reaped
constexpr size_t kLogTailBytesMax = 2000;  // of a failed child's stderr, in the cell's errors

// One contender process: its pipes (stdin for "go", stdout for "ready") and its files.
struct Child {
  locklab::StartedChild process;
  std::string report_path;
  std::string log_path;  // its stderr
};

std::vector<std::string> child_argv(const RunSettings& s, const CellSpec& spec, int contender,
                                    const std::string& uri, const std::string& report) {
  return {s.self_exe,    "--child",
          "--uri",       uri,
          "--database",  s.database,
          "--strategy",  std::string(spec.strategy->name),
          "--hold-ms",   std::to_string(spec.hold_ms),
          "--gap-ms",    std::to_string(s.gap_ms),
          "--locks",     std::to_string(spec.locks),
          "--cell",      std::to_string(spec.index),
          "--contender", std::to_string(contender),
          "--run-id",    s.run_id,
          "--min-ms",    std::to_string(s.busy_wait_min_ms),
          "--max-ms",    std::to_string(s.busy_wait_max_ms),
          "--expiry-ms", std::to_string(s.expiry_ms),
          "--parent",    std::to_string(::getpid()),
          "--report",    report};
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("processes mode: no report at " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The end of a child's stderr, for an error message ("" when it wrote nothing).
std::string log_tail(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  std::string all = text.str();
  while (!all.empty() && all.back() == '\n') all.pop_back();
  return all.size() > kLogTailBytesMax ? all.substr(all.size() - kLogTailBytesMax) : all;
}

// Reads a child's "ready" line; throws saying how the child failed to give it.
void wait_ready(locklab::Supervisor& supervisor, const Child& c, size_t index) {
  const std::string who = "contender process " + std::to_string(index);
  const std::optional<std::string> line =
      locklab::read_line(c.process.from_stdout.get(), kReadyTimeoutMs, kLineBytesMax);
  if (line == "ready") return;
  std::string what;
  if (line) {
    what = "wrote '" + *line + "' instead of 'ready'";
  } else if (const auto ended = supervisor.wait_exit(c.process.pid, kEndedWaitMs)) {
    what = "ended with " + ended->describe() + " before its 'ready' line";
  } else {
    what = "gave no 'ready' line within " + std::to_string(kReadyTimeoutMs) + " ms";
  }
  throw std::runtime_error(who + " " + what + "; its stderr: " + log_tail(c.log_path));
}

// Waits for every child to exit (killing those still there at the deadline); returns errors.
std::vector<std::string> reap_all(locklab::Supervisor& supervisor,
                                  const std::vector<Child>& children, int64_t deadline_ns) {
  std::vector<std::string> errors;
  for (size_t i = 0; i < children.size(); ++i) {
    const Child& c = children[i];
    const int64_t left_ms = std::max<int64_t>(0, (deadline_ns - monotonic_now_ns()) / kNsPerMs);
    std::optional<locklab::ExitStatus> status = supervisor.wait_exit(c.process.pid, left_ms);
    if (!status) {
      supervisor.signal(c.process.pid, SIGKILL);
      status = supervisor.wait_exit(c.process.pid, kReadyTimeoutMs);
      errors.push_back("contender " + std::to_string(i) + " did not exit in time; killed");
    }
    if (!status || status->describe() != "exit 0") {
      errors.push_back("contender " + std::to_string(i) + " ended with " +
                       (status ? status->describe() : "no status") +
                       "; its stderr: " + log_tail(c.log_path));
    } else {
      std::remove(c.log_path.c_str());
    }
  }
  return errors;
}

}  // namespace

CellRaw run_processes(Target& target, const RunSettings& settings, const CellSpec& spec) {
  CellRaw raw;
  raw.spec = spec;
  locklab::Supervisor supervisor;  // kills and reaps the children left when a cell throws
  std::vector<Child> children;
  const std::string uri = target.client_uri("lockbench-child");
  for (int i = 0; i < spec.contenders; ++i) {
    const std::string stem = settings.work_dir + "/cell-" + std::to_string(spec.index) +
                             "-contender-" + std::to_string(i);
    Child c{{}, stem + ".records", stem + ".stderr"};
    std::remove(c.report_path.c_str());
    std::remove(c.log_path.c_str());
    c.process = supervisor.start({.argv = child_argv(settings, spec, i, uri, c.report_path),
                                  .netns = "",
                                  .log_path = c.log_path,
                                  .pipe_stdin = true,
                                  .pipe_stdout = true});
    children.push_back(std::move(c));
  }
  for (size_t i = 0; i < children.size(); ++i) wait_ready(supervisor, children[i], i);
  const ServerSnapshot before = target.snapshot();
  const std::optional<double> cpu_before = target.cpu_seconds();
  raw.start_ns = monotonic_now_ns() + kStartDelayNs;
  raw.stop_ns = raw.start_ns + static_cast<int64_t>(settings.seconds_per_cell * kNsPerS);
  const std::string go =
      "go " + std::to_string(raw.start_ns) + " " + std::to_string(raw.stop_ns) + "\n";
  for (Child& c : children) {
    const int fd = c.process.to_stdin.get();
    if (::write(fd, go.data(), go.size()) != static_cast<ssize_t>(go.size())) {
      throw std::runtime_error("processes mode: cannot signal a contender to start");
    }
  }
  raw.errors = reap_all(supervisor, children, raw.stop_ns + kExitGraceNs);
  raw.server = count_between(before, target.snapshot());
  const std::optional<double> cpu_after = target.cpu_seconds();
  if (cpu_before && cpu_after) raw.server_cpu_s = *cpu_after - *cpu_before;
  for (const Child& c : children) {
    ContenderReport report = from_text(read_file(c.report_path), c.report_path);
    for (const auto& [name, count] : report.commands_sent) raw.client_commands[name] += count;
    raw.contenders.push_back(std::move(report));
    std::remove(c.report_path.c_str());
  }
  return raw;
}

namespace {

std::map<std::string, std::string> child_flags(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  for (int i = 2; i + 1 < argc; i += 2) flags[argv[i]] = argv[i + 1];
  for (const char* need :
       {"--uri", "--database", "--strategy", "--hold-ms", "--gap-ms", "--locks", "--cell",
        "--contender", "--run-id", "--min-ms", "--max-ms", "--expiry-ms", "--parent", "--report"}) {
    if (!flags.count(need)) throw std::invalid_argument(std::string("--child: missing ") + need);
  }
  return flags;
}

void write_report(const std::string& path, const ContenderReport& report) {
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial);
    out << to_text(report);
    if (!out) throw std::runtime_error("cannot write " + partial);
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    throw std::runtime_error("cannot rename " + partial + " to " + path);
  }
}

ContenderReport run_child(const std::map<std::string, std::string>& f) {
  RunSettings s;
  s.database = f.at("--database");
  s.run_id = f.at("--run-id");
  s.gap_ms = std::stoll(f.at("--gap-ms"));
  s.busy_wait_min_ms = std::stoll(f.at("--min-ms"));
  s.busy_wait_max_ms = std::stoll(f.at("--max-ms"));
  s.expiry_ms = std::stoll(f.at("--expiry-ms"));
  const int cell = std::stoi(f.at("--cell"));
  const int index = std::stoi(f.at("--contender"));
  ApmPool apm(f.at("--uri"));
  ContenderReport report;
  std::map<std::string, int64_t> at_ready;
  {
    mongolock::Provider provider(apm.pool(), s.database,
                                 cell_options(s, strategy_named(f.at("--strategy"))));
    warm_up(provider, lock_name(s, cell, -1) + "-" + std::to_string(index));
    std::vector<mongolock::Lock> locks;
    for (int k = 0; k < std::stoi(f.at("--locks")); ++k) {
      locks.push_back(provider.create_lock(lock_name(s, cell, k)));
    }
    if (!apm.wait_quiet(std::chrono::milliseconds(kReadyTimeoutMs))) {
      throw std::runtime_error("commands still in flight after the warm-up");
    }
    at_ready = apm.started();
    std::cout << "ready" << std::endl;
    std::string go;
    ContenderPlan plan{index, std::stoll(f.at("--hold-ms")), s.gap_ms, 0, 0};
    if (!(std::cin >> go >> plan.start_ns >> plan.stop_ns) || go != "go") {
      throw std::runtime_error("no 'go <start_ns> <stop_ns>' on stdin");
    }
    report = run_contender(std::move(locks), plan);
  }
  apm.close();
  report.commands_sent = difference(apm.started(), at_ready);
  return report;
}

}  // namespace

int child_main(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  try {
    flags = child_flags(argc, argv);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (std::to_string(::getppid()) != flags.at("--parent")) return 3;  // lockbench is gone
    ContenderReport report = run_child(flags);
    write_report(flags.at("--report"), report);
    return report.error.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lockbench --child: %s\n", e.what());
    if (flags.count("--report")) {
      ContenderReport failed;
      failed.error = e.what();
      try {
        write_report(flags.at("--report"), failed);
      } catch (const std::exception&) {
      }
    }
    return 1;
  }
}

}  // namespace lockbench
