#include "run/process.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "checker/clock.h"

namespace locklab {
namespace {

constexpr int64_t kPollStepMs = 5;

std::string join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

// How a child is tied to the harness: a Supervisor's child (PDEATHSIG, its own process group),
// a tool (PDEATHSIG, the harness's group, so a Ctrl-C stops it with the harness), or detached
// (no PDEATHSIG, its own session: it outlives the harness).
enum class ChildKind { kSupervised, kTool, kDetached };

// Everything the child needs, prepared before fork so the child only makes async-signal-safe
// calls (the harness may have other threads).
struct ChildSetup {
  std::vector<char*> argv;
  int netns_fd = -1;
  int stdin_fd = -1;
  int out_fd = -1;
  int err_fd = -1;
  int error_fd = -1;  // write end of the close-on-exec error pipe
  int max_fd = 0;     // the fallback's bound when close_range cannot mark descriptors
  pid_t parent = 0;
  ChildKind kind = ChildKind::kSupervised;
};

[[noreturn]] void child_fail(int error_fd, int step) {
  int payload[2] = {step, errno};
  ssize_t ignored = write(error_fd, payload, sizeof payload);
  (void)ignored;
  _exit(127);
}

[[noreturn]] void run_child(const ChildSetup& s) {
  if (s.kind == ChildKind::kDetached) {
    setsid();
  } else {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) child_fail(s.error_fd, 1);
    if (getppid() != s.parent) _exit(126);  // the parent died before PDEATHSIG was armed
    if (s.kind == ChildKind::kSupervised) setpgid(0, 0);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD}) signal(sig, SIG_DFL);
  if (s.netns_fd >= 0 && setns(s.netns_fd, CLONE_NEWNET) != 0) child_fail(s.error_fd, 2);
  // Lifted above 2 first: a harness started with 0, 1 or 2 closed may hold a log or pipe there,
  // which a dup2 onto that number would overwrite (and dup2(fd, fd) would keep close-on-exec).
  const int in = fcntl(s.stdin_fd, F_DUPFD_CLOEXEC, 3);
  const int out = fcntl(s.out_fd, F_DUPFD_CLOEXEC, 3);
  const int err = fcntl(s.err_fd, F_DUPFD_CLOEXEC, 3);
  if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) {
    child_fail(s.error_fd, 3);
  }
  // Nothing else crosses the exec (the error pipe stays usable until it succeeds).
  if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd < s.max_fd; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  execv(s.argv[0], s.argv.data());
  child_fail(s.error_fd, 4);
}

int open_netns(const std::string& name) {
  if (name.empty()) return -1;
  const std::string path = netns_path(name);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw std::runtime_error("cannot open network namespace " + path + ": " + std::strerror(errno));
  return fd;
}

// A bare program name is looked up in PATH here, before fork, so the child can use execv.
std::string resolve_program(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/sbin:/usr/bin:/sbin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string candidate = dirs.substr(start, end - start) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return program;  // execv fails and reports ENOENT with the name
}

// Forks and execs; returns the pid or throws with the step that failed in the child.
constexpr long kMaxFdScanned = 1 << 16;

// The child's descriptors 0, 1 and 2.
struct StdFds {
  int in = -1;
  int out = -1;
  int err = -1;
};

pid_t fork_exec(std::vector<std::string> argv, const std::string& netns, StdFds fds,
                ChildKind kind) {
  assert(!argv.empty());
  argv[0] = resolve_program(argv[0]);
  ChildSetup s;
  for (const auto& a : argv) s.argv.push_back(const_cast<char*>(a.c_str()));
  s.argv.push_back(nullptr);
  const UniqueFd netns_fd(open_netns(netns));
  s.netns_fd = netns_fd.get();
  s.stdin_fd = fds.in;
  s.out_fd = fds.out;
  s.err_fd = fds.err;
  s.max_fd = static_cast<int>(std::clamp(sysconf(_SC_OPEN_MAX), 3L, kMaxFdScanned));
  s.parent = getpid();
  s.kind = kind;
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe for " + argv[0] + ": " + std::strerror(errno));
  }
  UniqueFd error_read(pipe_fds[0]);
  UniqueFd error_write(pipe_fds[1]);
  s.error_fd = error_write.get();
  const pid_t pid = fork();
  if (pid == 0) run_child(s);
  const int fork_errno = errno;
  error_write.reset();
  if (pid < 0) throw std::runtime_error("fork for " + argv[0] + ": " + std::strerror(fork_errno));
  int payload[2] = {0, 0};
  ssize_t n;
  do {
    n = read(error_read.get(), payload, sizeof payload);
  } while (n < 0 && errno == EINTR);
  if (n > 0) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    static const char* steps[] = {"", "prctl", "setns", "redirect", "exec"};
    const char* step = payload[0] >= 1 && payload[0] <= 4 ? steps[payload[0]] : "setup";
    throw std::runtime_error("cannot start " + argv[0] + (netns.empty() ? "" : " in " + netns) +
                             ": " + step + ": " + std::strerror(payload[1]));
  }
  return pid;
}

ExitStatus decode(pid_t pid, int status) {
  ExitStatus e;
  e.pid = pid;
  if (WIFEXITED(status)) e.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
  return e;
}

// Waits for a child to end, through signals (the harness's handlers do not restart calls).
pid_t wait_child(pid_t pid, int* status) {
  pid_t got;
  while ((got = waitpid(pid, status, 0)) < 0 && errno == EINTR) {
  }
  return got;
}

// After a tool's output ended: waits for the tool to end until deadline_ms, but at least
// kToolExitGraceMs (the output ends a moment before the tool can be reaped), asking
// `interrupted` between slices (stopped = true when it said so). Returns the wait status, or
// nullopt. Sleeps on a pidfd (readable once the tool has ended) where the kernel has them.
constexpr int64_t kToolExitGraceMs = 1000;
std::optional<int> wait_tool_exit(pid_t pid, int64_t deadline_ms,
                                  const std::function<bool()>& interrupted, bool& stopped) {
  const int64_t until_ms = std::max(deadline_ms, steady_now_ms() + kToolExitGraceMs);
#ifdef SYS_pidfd_open
  const UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
#else
  const UniqueFd pidfd(-1);
#endif
  for (;;) {
    int status = 0;
    const pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid) return status;
    if (got < 0 && errno != EINTR) {
      throw std::runtime_error(std::string("lost the end of a tool: ") + std::strerror(errno));
    }
    if (interrupted && interrupted()) {
      stopped = true;
      return std::nullopt;
    }
    const int64_t left = until_ms - steady_now_ms();
    if (left <= 0) return std::nullopt;
    const int64_t slice = std::min(left, kToolInterruptPollMs);
    if (pidfd.get() >= 0) {
      pollfd pfd{pidfd.get(), POLLIN, 0};
      ::poll(&pfd, 1, static_cast<int>(slice));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(slice, kPollStepMs)));
    }
  }
}

// A close-on-exec pipe into read_end and write_end; throws naming the program it is for.
void make_pipe(const std::string& program, UniqueFd& read_end, UniqueFd& write_end) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe for " + program + ": " + std::strerror(errno));
  }
  read_end = UniqueFd(p[0]);
  write_end = UniqueFd(p[1]);
}

int open_log(const std::string& path) {
  const char* target = path.empty() ? "/dev/null" : path.c_str();
  int fd = open(target, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    throw std::runtime_error(std::string("cannot open ") + target + ": " + std::strerror(errno));
  return fd;
}

}  // namespace

std::string ExitStatus::describe() const {
  if (signal != 0) return "signal " + std::to_string(signal);
  if (code < 0) return "status unknown (reaped by another waiter)";
  return "exit " + std::to_string(code);
}

Supervisor::~Supervisor() {
  for (const auto& [pid, program] : live_) kill(pid, SIGKILL);
  for (const auto& [pid, program] : live_) wait_child(pid, nullptr);
}

void Supervisor::become_subreaper() {
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    throw std::system_error(errno, std::generic_category(), "PR_SET_CHILD_SUBREAPER");
  }
}

pid_t Supervisor::spawn(const SpawnOptions& options) {
  if (options.argv.empty()) throw std::invalid_argument("Supervisor::spawn: empty argv");
  if (options.pipe_stdin || options.pipe_stdout || options.merge_stderr) {
    throw std::invalid_argument("Supervisor::spawn drops pipe ends; start " + options.argv.at(0) +
                                " with Supervisor::start");
  }
  return start(options).pid;
}

namespace {

// Supervisor::start and spawn_detached: the descriptors the options ask for, then fork_exec.
StartedChild start_child(const SpawnOptions& options, ChildKind kind) {
  if (options.argv.empty()) throw std::invalid_argument("starting a child: empty argv");
  if (options.merge_stderr && !options.pipe_stdout) {
    throw std::invalid_argument("Supervisor::start " + options.argv[0] +
                                ": merge_stderr needs pipe_stdout");
  }
  StartedChild child;
  // The child's ends: closed here once it has them (or when starting fails).
  const UniqueFd log(open_log(options.log_path));
  UniqueFd child_in;
  UniqueFd child_out;
  const std::string& program = options.argv[0];
  if (options.pipe_stdin) {
    make_pipe(program, child_in, child.to_stdin);
  } else {
    child_in = UniqueFd(open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (child_in.get() < 0) {
      throw std::runtime_error("cannot open /dev/null for " + program + ": " +
                               std::strerror(errno));
    }
  }
  if (options.pipe_stdout) make_pipe(program, child.from_stdout, child_out);
  const int out_fd = options.pipe_stdout ? child_out.get() : log.get();
  const int err_fd = options.merge_stderr ? child_out.get() : log.get();
  child.pid = fork_exec(options.argv, options.netns, {child_in.get(), out_fd, err_fd}, kind);
  return child;
}

}  // namespace

StartedChild Supervisor::start(const SpawnOptions& options) {
  StartedChild child = start_child(options, ChildKind::kSupervised);
  live_[child.pid] = options.argv[0];
  // A pid the kernel reused: the earlier child's end, already learned from wait_exit, is not
  // this one's, and poll() must not report it as this one's.
  ended_.erase(child.pid);
  std::erase_if(unreported_, [&](const ExitStatus& e) { return e.pid == child.pid; });
  return child;
}

pid_t spawn_detached(const SpawnOptions& options) {
  if (options.pipe_stdin || options.pipe_stdout || options.merge_stderr) {
    throw std::invalid_argument("spawn_detached drops pipe ends: " + options.argv.at(0));
  }
  return start_child(options, ChildKind::kDetached).pid;
}

void Supervisor::record(pid_t pid, int status) {
  if (!live_.erase(pid)) return;  // an adopted orphan: reaped, nothing to report
  remember(decode(pid, status));
}

void Supervisor::record_lost(pid_t pid) {
  if (!live_.erase(pid)) return;
  ExitStatus e;  // code -1, signal 0: ended, status unknown
  e.pid = pid;
  remember(e);
}

void Supervisor::remember(const ExitStatus& e) {
  ended_[e.pid] = e;
  ended_order_.push_back(e.pid);
  unreported_.push_back(e);
  // Bounded: the oldest ends are forgotten first (wait_exit then answers nullopt for them). A
  // pid in the order whose entry start() erased, or that a newer end replaced, is skipped.
  while (ended_order_.size() > kEndedKept) {
    const pid_t oldest = ended_order_.front();
    ended_order_.pop_front();
    if (std::count(ended_order_.begin(), ended_order_.end(), oldest) == 0) ended_.erase(oldest);
  }
}

std::vector<ExitStatus> Supervisor::poll() {
  int status = 0;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) record(pid, status);
  std::vector<ExitStatus> out;
  out.swap(unreported_);
  return out;
}

std::vector<pid_t> Supervisor::running_pids() const {
  std::vector<pid_t> out;
  for (const auto& [pid, program] : live_) out.push_back(pid);
  return out;
}

bool Supervisor::reap_if_ended(pid_t pid) {
  int status = 0;
  const pid_t got = waitpid(pid, &status, WNOHANG);
  if (got == pid) {
    record(pid, status);
  } else if (got < 0 && errno == ECHILD) {
    record_lost(pid);  // reaped elsewhere: its pid is not ours to signal any more
  }
  return !running(pid);
}

bool Supervisor::signal(pid_t pid, int sig) {
  if (!running(pid) || reap_if_ended(pid)) return false;
  return kill(pid, sig) == 0;
}

std::optional<ExitStatus> Supervisor::wait_exit(pid_t pid, int64_t timeout_ms) {
  const int64_t deadline = steady_now_ms() + timeout_ms;
  for (;;) {
    if (auto it = ended_.find(pid); it != ended_.end()) return it->second;
    if (!running(pid)) return std::nullopt;
    if (reap_if_ended(pid)) continue;
    if (steady_now_ms() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollStepMs));
  }
}

void Supervisor::stop_all(int64_t grace_ms) {
  for (pid_t pid : running_pids()) reap_if_ended(pid);  // signal only what is still ours
  for (pid_t pid : running_pids()) {
    kill(pid, SIGCONT);  // a stopped child cannot act on SIGTERM
    kill(pid, SIGTERM);
  }
  const int64_t deadline = steady_now_ms() + grace_ms;
  for (pid_t pid : running_pids()) wait_exit(pid, std::max<int64_t>(0, deadline - steady_now_ms()));
  for (pid_t pid : running_pids()) {
    kill(pid, SIGKILL);
    int status = 0;
    if (wait_child(pid, &status) == pid) {
      record(pid, status);
    } else {
      record_lost(pid);
    }
  }
}

ToolResult run_tool(const std::vector<std::string>& argv, const std::string& netns,
                    const std::string& input, int64_t timeout_ms,
                    const std::function<bool()>& interrupted) {
  UniqueFd in_read, in_write, out_read, out_write;
  make_pipe(argv.at(0), in_read, in_write);
  make_pipe(argv.at(0), out_read, out_write);
  const pid_t pid =
      fork_exec(argv, netns, {in_read.get(), out_write.get(), out_write.get()}, ChildKind::kTool);
  in_read.reset();
  out_write.reset();
  // Tool inputs are small nft scripts, far below the pipe buffer, so this write cannot block.
  if (!input.empty()) {
    ssize_t ignored = write(in_write.get(), input.data(), input.size());
    (void)ignored;
  }
  in_write.reset();
  ToolResult result;
  const int64_t deadline = steady_now_ms() + timeout_ms;
  char buffer[4096];
  for (;;) {
    pollfd pfd{out_read.get(), POLLIN, 0};
    const int64_t left = deadline - steady_now_ms();
    const bool stop = interrupted && interrupted();
    if (left <= 0 || stop) {
      kill(pid, SIGKILL);
      wait_child(pid, nullptr);
      if (stop) throw ToolInterrupted("interrupted: " + join(argv));
      throw std::runtime_error("timed out after " + std::to_string(timeout_ms) +
                               " ms: " + join(argv));
    }
    // In slices when it can be interrupted: a signal that lands before poll() starts waiting
    // does not wake it.
    const int64_t slice = interrupted ? std::min(left, kToolInterruptPollMs) : left;
    if (::poll(&pfd, 1, static_cast<int>(slice)) <= 0) continue;
    const ssize_t n = read(out_read.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of output (or a read error: the tool's end is waited for below)
    if (result.output.size() < kToolOutputMax) result.output.append(buffer, n);
  }
  out_read.reset();
  bool stopped = false;
  const std::optional<int> status = wait_tool_exit(pid, deadline, interrupted, stopped);
  if (!status) {
    kill(pid, SIGKILL);
    wait_child(pid, nullptr);
    if (stopped) throw ToolInterrupted("interrupted: " + join(argv));
    throw std::runtime_error("timed out after " + std::to_string(timeout_ms) +
                             " ms (its output had ended): " + join(argv) + "\n" + result.output);
  }
  result.code = WIFEXITED(*status) ? WEXITSTATUS(*status) : 128 + WTERMSIG(*status);
  return result;
}

std::string run_tool_checked(const std::vector<std::string>& argv, const std::string& netns,
                             const std::string& input) {
  ToolResult r = run_tool(argv, netns, input);
  if (r.code != 0) {
    throw std::runtime_error(join(argv) + (netns.empty() ? "" : " (in " + netns + ")") +
                             " failed with " + std::to_string(r.code) + ": " + r.output);
  }
  return r.output;
}

std::optional<std::string> read_line(int fd, int64_t timeout_ms, size_t max_bytes) {
  const int64_t deadline = steady_now_ms() + timeout_ms;
  std::string line;
  while (line.size() < max_bytes) {
    const int64_t left = deadline - steady_now_ms();
    pollfd pfd{fd, POLLIN, 0};
    if (left <= 0) return std::nullopt;
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left, INT32_MAX)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return std::nullopt;
    char c = 0;
    const ssize_t n = read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n != 1) return std::nullopt;
    if (c == '\n') return line;
    line += c;
  }
  return std::nullopt;
}

std::optional<ProcessStat> process_stat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  // The command name is in parentheses and may contain spaces; field 3 (state) follows the last
  // ')', then 4 (ppid) ... 22 (starttime).
  const size_t close_paren = line.rfind(')');
  if (close_paren == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close_paren + 1));
  ProcessStat stat;
  std::string field;
  for (int index = 3; index <= 22 && rest >> field; ++index) {
    if (index == 3) stat.state = field[0];
    if (index == 4) stat.parent = static_cast<pid_t>(std::strtol(field.c_str(), nullptr, 10));
    if (index == 22) {
      stat.start_ticks = std::strtoull(field.c_str(), nullptr, 10);
      return stat;
    }
  }
  return std::nullopt;
}

char process_state(pid_t pid) {
  const std::optional<ProcessStat> stat = process_stat(pid);
  return stat ? stat->state : 0;
}

std::string netns_path(const std::string& netns) {
  return netns.starts_with("/") ? netns : "/var/run/netns/" + netns;
}

}  // namespace locklab
