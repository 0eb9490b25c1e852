#include "run/cleanup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "db/netns.h"
#include "run/noted_processes.h"
#include "run/process.h"

namespace locklab {
namespace {

constexpr const char* kTempRoot = "/tmp";

bool alive(pid_t pid) {
  const char state = process_state(pid);
  return state != 0 && state != 'Z' && state != 'X';
}

// Runs in the janitor child: wait for EOF (the harness is gone), clean, exit.
[[noreturn]] void janitor_main(int read_fd, const std::string& prefix, HostNamespaces host) {
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  const int null_fd = open("/dev/null", O_RDWR);
  if (null_fd >= 0) {
    dup2(null_fd, 0);
    dup2(null_fd, 1);
    dup2(null_fd, 2);
  }
  char byte;
  while (read(read_fd, &byte, 1) != 0) {
    if (errno != EINTR) break;
  }
  cleanup_run(prefix, host, GoneGroups::kEnd);  // the harness has just died
  _exit(0);
}

}  // namespace

std::string run_prefix() {
  // Fixed at the first call: inside the sandbox's PID namespace getpid() is 1 for every run.
  static const std::string prefix = "ll-" + std::to_string(getpid());
  return prefix;
}

pid_t owner_of(const std::string& name) {
  if (!name.starts_with("ll-")) return 0;
  size_t i = 3;
  pid_t pid = 0;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) &&
         pid < 100'000'000) {
    pid = pid * 10 + (name[i] - '0');
    ++i;
  }
  if (i == 3 || i >= name.size()) return 0;
  return pid;
}

// Whether `path` is a directory (not a link to one) of this process's user. Another user's
// "ll-<pid>-*" is that user's run (or a name planted to be deleted): their own runs sweep it.
namespace {
bool own_directory(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid();
}
}  // namespace

// SIGKILLs every process inside a namespace. Children of the harness die with it
// (PDEATHSIG), but not their own children: a member under faketime is the wrapper's child.
void kill_namespace_processes(const std::string& ns) {
  try {
    const ToolResult pids = run_tool({"ip", "netns", "pids", ns});
    size_t start = 0;
    for (int n = 0; n < 10'000 && start < pids.output.size(); ++n) {
      const size_t end = pids.output.find('\n', start);
      const std::string line = pids.output.substr(start, end - start);
      if (!line.empty() && line.find_first_not_of("0123456789") == std::string::npos) {
        kill(static_cast<pid_t>(std::stol(line)), SIGKILL);
      }
      if (end == std::string::npos) break;
      start = end + 1;
    }
  } catch (const std::exception&) {
    // Best effort: deleting the namespace below still unbinds its name.
  }
}

void cleanup_run(const std::string& prefix, HostNamespaces host, GoneGroups gone) {
  const std::vector<std::string> namespaces =
      host == HostNamespaces::kClean ? list_namespaces(prefix + "-") : std::vector<std::string>{};
  for (const std::string& ns : namespaces) {
    kill_namespace_processes(ns);
    delete_namespace(ns);
  }
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(kTempRoot, ec)) {
    if (entry.path().filename().string().starts_with(prefix + "-") &&
        own_directory(entry.path().string())) {
      remove_run_temp_dir(entry.path().string(), gone);
    }
  }
}

void remove_run_temp_dir(const std::string& dir, GoneGroups gone) {
  end_noted_processes(dir, gone);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

std::vector<std::string> sweep_stale_runs(HostNamespaces host) {
  std::set<pid_t> owners;
  if (host == HostNamespaces::kClean) {
    for (const std::string& ns : list_namespaces("ll-")) owners.insert(owner_of(ns));
  }
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(kTempRoot, ec)) {
    owners.insert(owner_of(entry.path().filename().string()));
  }
  std::vector<std::string> cleaned;
  for (pid_t pid : owners) {
    if (pid <= 0 || alive(pid)) continue;
    const std::string prefix = "ll-" + std::to_string(pid);
    cleanup_run(prefix, host, GoneGroups::kLeave);  // long after, maybe: pids may be reused
    cleaned.push_back(prefix);
  }
  return cleaned;
}

void start_janitor(const std::string& prefix, HostNamespaces host) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("janitor pipe: ") + std::strerror(errno));
  }
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("janitor fork: ") + std::strerror(errno));
  if (pid == 0) {
    close(fds[1]);
    setpgid(0, 0);  // out of the terminal's process group: Ctrl-C is for the harness
    janitor_main(fds[0], prefix, host);
  }
  close(fds[0]);
  // fds[1] stays open, unused, for the rest of the harness's life; close-on-exec keeps it
  // out of every child, so only the harness's death closes it.
}

std::string make_run_temp_dir(const std::string& prefix) {
  std::string templ = std::string(kTempRoot) + "/" + prefix + "-XXXXXX";
  if (!mkdtemp(templ.data())) {
    throw std::runtime_error("cannot create " + templ + ": " + std::strerror(errno));
  }
  return templ;
}

}  // namespace locklab
