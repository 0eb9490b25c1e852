#include "run/sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>

#include "run/process.h"

// LeakSanitizer is part of the ASan build (GCC says so with __SANITIZE_ADDRESS__, clang with
// __has_feature); see leak_check_before_pid_namespace() below.
#if defined(__SANITIZE_ADDRESS__)
#define LOCKLAB_LEAK_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LOCKLAB_LEAK_SANITIZER 1
#endif
#endif
#ifdef LOCKLAB_LEAK_SANITIZER
#include <sanitizer/lsan_interface.h>
#endif

namespace locklab {
namespace {

constexpr size_t kMessageMax = 2048;  // a refusal message passed back from the probe child

// A refusal with the errno of the call that failed, so the caller can word it.
struct NamespaceError {
  int error = 0;
  std::string step;
};

// Writes `text` to a /proc file; 0 or the errno.
int write_proc(const char* path, const std::string& text) {
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const ssize_t n = write(fd, text.data(), text.size());
  const int saved = n == static_cast<ssize_t>(text.size()) ? 0 : (n < 0 ? errno : EIO);
  close(fd);
  return saved;
}

// Real root's maps: every id of the current user namespace mapped to itself, so root inside keeps
// its power over files of every owner (a 0->0 map would leave other owners unmapped, and root
// without CAP_DAC_OVERRIDE over them). The kernel accepts such a map only from a writer outside
// the new namespace, so a helper forked before the unshare writes it. Returns 0 or an errno.
int map_all_ids_from_outside(pid_t target, int go_fd) {
  char byte = 0;
  if (read(go_fd, &byte, 1) != 1) return ECANCELED;  // the unshare failed: nothing to map
  for (const char* kind : {"uid_map", "gid_map"}) {
    std::ifstream current(std::string("/proc/self/") + kind);
    std::string identity;
    unsigned long first = 0, outside = 0, count = 0;
    for (int lines = 0; lines < 340 && current >> first >> outside >> count; ++lines) {
      identity +=
          std::to_string(first) + " " + std::to_string(first) + " " + std::to_string(count) + "\n";
    }
    const std::string path = "/proc/" + std::to_string(target) + "/" + kind;
    if (const int e = write_proc(path.c_str(), identity)) return e;
  }
  return 0;
}

// unshare(CLONE_NEWUSER) for real root, with the identity maps written by a helper (above). When
// the helper cannot write them, falls back to the single 0->0 map. nullopt or the refusal.
std::optional<NamespaceError> enter_user_namespace_as_root() {
  int go[2];
  if (pipe2(go, O_CLOEXEC) != 0) return NamespaceError{errno, "pipe"};
  const pid_t outer = getpid();
  const pid_t helper = fork();
  if (helper < 0) return NamespaceError{errno, "fork"};
  if (helper == 0) {
    close(go[1]);
    _exit(map_all_ids_from_outside(outer, go[0]) == 0 ? 0 : 1);
  }
  close(go[0]);
  const int refused = unshare(CLONE_NEWUSER) != 0 ? errno : 0;
  if (!refused) {
    const char byte = 1;
    const ssize_t ignored = write(go[1], &byte, 1);  // on failure the helper sees EOF: fallback
    (void)ignored;
  }
  close(go[1]);
  int status = 0;
  while (waitpid(helper, &status, 0) < 0 && errno == EINTR) {
  }
  if (refused) return NamespaceError{refused, "unshare(CLONE_NEWUSER)"};
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return std::nullopt;
  // Written from inside, as an ordinary caller does: setgroups denied before the gid_map.
  if (const int e = write_proc("/proc/self/setgroups", "deny"); e != 0 && e != ENOENT) {
    return NamespaceError{e, "writing /proc/self/setgroups"};
  }
  if (const int e = write_proc("/proc/self/uid_map", "0 0 1\n")) {
    return NamespaceError{e, "writing /proc/self/uid_map"};
  }
  if (const int e = write_proc("/proc/self/gid_map", "0 0 1\n")) {
    return NamespaceError{e, "writing /proc/self/gid_map"};
  }
  return std::nullopt;
}

// A new user namespace in which this process is root. For an ordinary caller uid/gid 0 are its
// euid/egid on the host (the only mapping it may write for itself); for real root every id maps
// to itself.
std::optional<NamespaceError> enter_user_namespace() {
  const uid_t uid = geteuid();
  const gid_t gid = getegid();
  if (uid == 0) return enter_user_namespace_as_root();
  if (unshare(CLONE_NEWUSER) != 0) return NamespaceError{errno, "unshare(CLONE_NEWUSER)"};
  // setgroups must be denied before an unprivileged process may write its gid_map.
  if (const int e = write_proc("/proc/self/setgroups", "deny"); e != 0 && e != ENOENT) {
    return NamespaceError{e, "writing /proc/self/setgroups"};
  }
  if (const int e = write_proc("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1\n")) {
    return NamespaceError{e, "writing /proc/self/uid_map"};
  }
  if (const int e = write_proc("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1\n")) {
    return NamespaceError{e, "writing /proc/self/gid_map"};
  }
  return std::nullopt;
}

// User namespace (root may go without one), then network + mount (+ PID for children).
// Throws std::runtime_error with the cause worded for the user.
void unshare_all(int extra_flags) {
  const bool root = geteuid() == 0;
  if (const auto refused = enter_user_namespace(); refused && !root) {
    throw std::runtime_error(userns_refusal_message(refused->error) + " [" + refused->step + "]");
  }
  if (unshare(CLONE_NEWNET | CLONE_NEWNS | extra_flags) != 0) {
    const int e = errno;
    throw std::runtime_error(std::string("cannot create the run's network and mount namespaces: "
                                         "unshare: ") +
                             std::strerror(e) + (root ? "" : "; " + userns_refusal_message(e)));
  }
}

// Inside the new mount namespace: nothing propagates back to the host, and /run (where
// `ip netns add` binds named namespaces) and /dev/shm are private, empty tmpfs. /dev/shm: the
// faketime wrapper names its semaphore and shared memory by pid, pids restart at 1 in every
// sandbox, and a SIGKILLed wrapper leaves them behind; private, they cannot collide and go with
// the run.
void private_run_dir() {
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    throw std::runtime_error(std::string("cannot make / private in the run's mount namespace: ") +
                             std::strerror(errno));
  }
  std::error_code ec;
  // ip uses /var/run/netns; /var/run is normally a link to /run.
  const std::filesystem::path run = std::filesystem::canonical("/var/run", ec);
  const std::string target = ec ? "/run" : run.string();
  if (mount("locklab-run", target.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) {
    throw std::runtime_error("cannot mount a private tmpfs on " + target + ": " +
                             std::strerror(errno));
  }
  if (std::filesystem::is_directory("/dev/shm", ec) &&
      mount("locklab-shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0) {
    throw std::runtime_error(std::string("cannot mount a private tmpfs on /dev/shm: ") +
                             std::strerror(errno));
  }
}

// PID 1's setup. Exits at once when the outer process is already gone.
void become_sandbox_init(int parent_alive_fd) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) _exit(2);
  pollfd pfd{parent_alive_fd, POLLIN, 0};
  // The outer process holds the write end: a hang-up means it died before PDEATHSIG was armed.
  if (::poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLHUP | POLLERR))) _exit(2);
  close(parent_alive_fd);
  // A mount namespace of its own, so the private /run and /dev/shm below are not the outer
  // process's: the outer keeps the host's (it writes nothing there: db/admin.h
  // keep_driver_out_of_shm).
  if (unshare(CLONE_NEWNS) != 0) {
    throw std::runtime_error(std::string("cannot create the run's mount namespace: ") +
                             std::strerror(errno));
  }
  private_run_dir();
  // A /proc of this PID namespace, so /proc/<pid> means the pids this process sees. A container
  // may forbid the mount (masked /proc paths); the harness then only loses /proc lookups of its
  // children, which the run does not need, so this is not fatal.
  mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
}

volatile sig_atomic_t g_sandbox_init = 0;

void forward_signal(int sig) {
  if (g_sandbox_init > 0) kill(g_sandbox_init, sig);
}

// The outer process's part: forward stop signals to PID 1 and return its exit code. The stop
// signals are blocked on entry (see run_sandboxed); those that came meanwhile are forwarded on
// unblocking.
int wait_for_init(pid_t init, const sigset_t& previous_mask) {
  g_sandbox_init = init;
  struct sigaction sa {};
  sa.sa_handler = forward_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  sigprocmask(SIG_SETMASK, &previous_mask, nullptr);
  int status = 0;
  while (waitpid(init, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  std::cerr << "\nlocklab: the run's sandbox ended by signal " << WTERMSIG(status) << "\n";
  return 2;
}

std::optional<long> read_sysctl(const std::string& proc_sys, const char* relative) {
  std::ifstream in(proc_sys + "/" + relative);
  long value = 0;
  if (!(in >> value)) return std::nullopt;
  return value;
}

int own_threads() {
  std::error_code ec;
  int count = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++count;
  }
  return count;
}

bool tools_present() {
  try {
    return run_tool({"ip", "-V"}).code == 0 && run_tool({"nft", "--version"}).code == 0;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

void stop_signal_set(sigset_t* set) {
  sigemptyset(set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(set, sig);
}

std::string userns_refusal_message(int error, const std::string& proc_sys) {
  const std::string head = std::string(
                               "the netns backend needs a user namespace, and the kernel "
                               "refuses one (") +
                           std::strerror(error) + ")";
  const std::string fix = "; set it (as root, e.g. in /etc/sysctl.d/) or run locklab as root";
  if (error == EINVAL) {
    // unshare(CLONE_NEWUSER) takes single-threaded processes only; a sanitizer's runtime (e.g.
    // ThreadSanitizer's background thread) can be a thread locklab did not start.
    return head +
           ": a user namespace is refused to a process that runs more than one thread, "
           "and this one runs " +
           std::to_string(own_threads()) +
           " (a sanitizer's runtime thread counts); run locklab as root or use --cluster "
           "loopback";
  }
  if (read_sysctl(proc_sys, "kernel/unprivileged_userns_clone") == 0L) {
    return head +
           ": unprivileged user namespaces are forbidden by the sysctl "
           "kernel.unprivileged_userns_clone=0; kernel.unprivileged_userns_clone=1 allows them" +
           fix;
  }
  if (read_sysctl(proc_sys, "user/max_user_namespaces") == 0L) {
    return head +
           ": user namespaces are forbidden by the sysctl user.max_user_namespaces=0; any "
           "positive value (e.g. user.max_user_namespaces=10000) allows them" +
           fix;
  }
  if (read_sysctl(proc_sys, "kernel/apparmor_restrict_unprivileged_userns") == 1L) {
    return head +
           ": unprivileged user namespaces are forbidden by AppArmor's sysctl "
           "kernel.apparmor_restrict_unprivileged_userns=1; "
           "kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor profile granting "
           "locklab `userns`) allows them" +
           fix;
  }
  return head +
         ": none of the sysctls kernel.unprivileged_userns_clone, user.max_user_namespaces, "
         "kernel.apparmor_restrict_unprivileged_userns forbids it here, so a container or "
         "seccomp policy probably does; run locklab as root or use --cluster loopback";
}

std::string netns_backend_refusal() {
  if (!tools_present()) return "the netns backend needs the ip and nft programs on PATH";
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return std::string("fork: ") + std::strerror(errno);
  }
  if (pid == 0) {
    close(fds[0]);
    std::string message;
    try {
      unshare_all(0);
    } catch (const std::exception& e) {
      message = e.what();
    }
    ssize_t ignored = write(fds[1], message.data(), std::min(message.size(), kMessageMax));
    (void)ignored;
    _exit(message.empty() ? 0 : 1);
  }
  close(fds[1]);
  std::string message;
  char buffer[512];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof buffer)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || message.size() > kMessageMax) break;
    message.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (message.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    return "the namespace probe failed (" + std::to_string(status) + ")";
  }
  return message;
}

// Once the outer process has unshared its PID namespace, every process it creates lands in that
// namespace, and once PID 1 has exited the kernel refuses them all (ENOMEM). LeakSanitizer's
// end-of-process check creates one (its tracer), so in the ASan build the outer process's exit
// failed ("LeakSanitizer has encountered a fatal error", exit code 1) after every netns run.
// The check runs here instead, while processes can still be created; LeakSanitizer then skips
// it at exit. What it leaves out: leaks of the outer process after this point (it only waits for
// PID 1) and of PID 1, which ends with _exit (no check) as before.
namespace {
void leak_check_before_pid_namespace() {
#ifdef LOCKLAB_LEAK_SANITIZER
  __lsan_do_leak_check();
#endif
}
}  // namespace

int run_sandboxed(const std::function<int()>& body) {
  leak_check_before_pid_namespace();
  unshare_all(CLONE_NEWPID);
  int alive[2];
  if (pipe2(alive, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  std::cout.flush();
  std::cerr.flush();
  // PID 1 of a PID namespace never receives a signal it has no handler for: one forwarded before
  // the body installs its handlers would be lost. Blocked from before the fork, it stays pending
  // until the body unblocks it (the outer, until its forwarder is installed).
  sigset_t stop_signals, previous_mask;
  stop_signal_set(&stop_signals);
  sigprocmask(SIG_BLOCK, &stop_signals, &previous_mask);
  const pid_t init = fork();
  if (init < 0) {
    const int e = errno;
    sigprocmask(SIG_SETMASK, &previous_mask, nullptr);
    throw std::runtime_error(std::string("fork: ") + std::strerror(e));
  }
  if (init == 0) {
    close(alive[1]);
    int code = 2;
    try {
      become_sandbox_init(alive[0]);
      code = body();
    } catch (const std::exception& e) {
      std::cerr << "\nlocklab: run failed: " << e.what() << "\n";
    }
    std::cout.flush();
    std::cerr.flush();
    _exit(code);
  }
  close(alive[0]);
  const int code = wait_for_init(init, previous_mask);
  close(alive[1]);
  return code;
}

void enter_private_namespaces() {
  unshare_all(0);
  private_run_dir();
}

}  // namespace locklab
