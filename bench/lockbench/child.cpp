#include "child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "apm_pool.h"
#include "clock.h"
#include "contender.h"

extern char** environ;

namespace lockbench {
namespace {

constexpr int64_t kReadyTimeoutMs = 60'000;        // 64 children building pools on 2 cores
constexpr int64_t kExitGraceNs = 60 * kNsPerS;     // after stop_ns, for the last release
constexpr int64_t kStartDelayNs = 200 * kNsPerMs;  // "go" to the first acquire
constexpr int64_t kReapPollMs = 5;
constexpr size_t kLineBytesMax = 256;

struct Child {
  pid_t pid = -1;
  int to_child = -1;    // its stdin
  int from_child = -1;  // its stdout
  std::string report_path;
};

// Kills and reaps whatever children are left when a cell ends early (an exception).
class Children {
 public:
  ~Children() {
    for (Child& c : list) {
      if (c.to_child >= 0) ::close(c.to_child);
      if (c.from_child >= 0) ::close(c.from_child);
      if (c.pid > 0) {
        ::kill(c.pid, SIGKILL);
        ::waitpid(c.pid, nullptr, 0);
      }
    }
  }
  std::vector<Child> list;
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

Child spawn(const std::vector<std::string>& args, const std::string& report) {
  int in[2];
  int out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
    throw std::runtime_error("processes mode: pipe2 failed");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  Child c;
  const int rc = posix_spawn(&c.pid, args[0].c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  c.to_child = in[1];
  c.from_child = out[0];
  c.report_path = report;
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    throw std::runtime_error("processes mode: cannot start " + args[0] + ": error " +
                             std::to_string(rc));
  }
  return c;
}

// Reads one line from fd within timeout_ms; throws naming `who` on EOF, error or timeout.
std::string read_line(int fd, int64_t timeout_ms, const std::string& who) {
  std::string line;
  const int64_t deadline_ns = monotonic_now_ns() + timeout_ms * kNsPerMs;
  while (line.size() < kLineBytesMax) {
    pollfd p{fd, POLLIN, 0};
    const auto left_ms = static_cast<int>((deadline_ns - monotonic_now_ns()) / kNsPerMs);
    if (left_ms <= 0 || ::poll(&p, 1, left_ms) <= 0) {
      throw std::runtime_error(who + ": no line within " + std::to_string(timeout_ms) + " ms");
    }
    char ch = 0;
    if (::read(fd, &ch, 1) != 1) throw std::runtime_error(who + ": ended before its line");
    if (ch == '\n') return line;
    line += ch;
  }
  throw std::runtime_error(who + ": line longer than " + std::to_string(kLineBytesMax));
}

// Waits for every child to exit (killing those still there at the deadline); returns errors.
std::vector<std::string> reap_all(Children& children, int64_t deadline_ns) {
  std::vector<std::string> errors;
  for (size_t i = 0; i < children.list.size(); ++i) {
    Child& c = children.list[i];
    int status = 0;
    while (::waitpid(c.pid, &status, WNOHANG) == 0) {
      if (monotonic_now_ns() > deadline_ns) {
        ::kill(c.pid, SIGKILL);
        ::waitpid(c.pid, &status, 0);
        errors.push_back("contender " + std::to_string(i) + " did not exit in time; killed");
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(kReapPollMs));
    }
    c.pid = -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      errors.push_back("contender " + std::to_string(i) + " exited with status " +
                       std::to_string(status));
    }
  }
  return errors;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("processes mode: no report at " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

CellRaw run_processes(Target& target, const RunSettings& settings, const CellSpec& spec) {
  CellRaw raw;
  raw.spec = spec;
  Children children;
  const std::string uri = target.client_uri("lockbench-child");
  for (int i = 0; i < spec.contenders; ++i) {
    const std::string report = settings.work_dir + "/cell-" + std::to_string(spec.index) +
                               "-contender-" + std::to_string(i) + ".records";
    std::remove(report.c_str());
    children.list.push_back(spawn(child_argv(settings, spec, i, uri, report), report));
  }
  for (size_t i = 0; i < children.list.size(); ++i) {
    const std::string who = "contender process " + std::to_string(i);
    if (read_line(children.list[i].from_child, kReadyTimeoutMs, who) != "ready") {
      throw std::runtime_error(who + ": expected 'ready'");
    }
  }
  const ServerSnapshot before = target.snapshot();
  const std::optional<double> cpu_before = target.cpu_seconds();
  raw.start_ns = monotonic_now_ns() + kStartDelayNs;
  raw.stop_ns = raw.start_ns + static_cast<int64_t>(settings.seconds_per_cell * kNsPerS);
  const std::string go =
      "go " + std::to_string(raw.start_ns) + " " + std::to_string(raw.stop_ns) + "\n";
  for (Child& c : children.list) {
    if (::write(c.to_child, go.data(), go.size()) != static_cast<ssize_t>(go.size())) {
      throw std::runtime_error("processes mode: cannot signal a contender to start");
    }
  }
  raw.errors = reap_all(children, raw.stop_ns + kExitGraceNs);
  raw.server = count_between(before, target.snapshot());
  const std::optional<double> cpu_after = target.cpu_seconds();
  if (cpu_before && cpu_after) raw.server_cpu_s = *cpu_after - *cpu_before;
  for (const Child& c : children.list) {
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
