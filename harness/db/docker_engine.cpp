#include "db/docker_engine.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "checker/clock.h"

namespace locklab {
namespace {

constexpr const char* kUserSocket = "/var/run/docker.sock";
constexpr const char* kDockerd = "dockerd";
constexpr int64_t kDaemonReadyMs = 30'000;
constexpr int64_t kDaemonStopMs = 30'000;
constexpr int64_t kPollMs = 100;
constexpr int kObjectsMax = 10'000;

std::string trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line) && static_cast<int>(out.size()) < kObjectsMax) {
    line = trimmed(line);
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

bool executable_on_path(const std::string& name, std::string* found = nullptr) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) {
      if (found) *found = candidate;
      return true;
    }
  }
  return false;
}

// The file's bytes; "" when it cannot be read. A /proc file of a process that exits while it is
// read fails with ESRCH, which libstdc++'s filebuf throws through istreambuf_iterator.
std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  try {
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  } catch (const std::ios_base::failure&) {
    return "";
  }
}

bool process_gone(pid_t pid) {
  const char state = process_state(pid);
  return state == 0 || state == 'Z' || state == 'X';
}

// Waits for `pid` to end, reaping it when it is our child. True when it ended in time.
bool wait_gone(pid_t pid, int64_t timeout_ms) {
  const int64_t deadline = steady_now_ms() + timeout_ms;
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && process_gone(pid))) return true;
    if (r == 0 && process_gone(pid)) {
      // A zombie of someone else's: gone for our purposes.
      if (process_state(pid) != 'Z') return true;
    }
    if (steady_now_ms() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
  }
}

void terminate(pid_t pid) {
  if (pid <= 0 || process_gone(pid)) return;
  kill(pid, SIGTERM);
  if (!wait_gone(pid, kDaemonStopMs)) {
    kill(pid, SIGKILL);
    wait_gone(pid, kDaemonStopMs);
  }
}

// Unmounts whatever is still mounted below `root` (deepest first), so it can be deleted.
void unmount_below(const std::string& root) {
  std::vector<std::string> points;
  std::istringstream in(read_file("/proc/self/mountinfo"));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, source, point;
    fields >> id >> parent >> dev >> source >> point;
    if (point.starts_with(root + "/")) points.push_back(point);
  }
  std::sort(points.begin(), points.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const std::string& p : points) umount2(p.c_str(), MNT_DETACH);
}

// The owner identity encoded in a daemon root "/tmp/locklab-dockerd-<pid>.<start>-<n>".
std::string root_owner(const std::string& root) {
  const std::string prefix = DockerEngine::kRootPrefix;
  if (!root.starts_with(prefix)) return "";
  const std::string rest = root.substr(prefix.size());
  const size_t dash = rest.rfind('-');
  return dash == std::string::npos ? "" : rest.substr(0, dash);
}

// Starts dockerd on `root` (created if needed) and waits until it answers. Returns its pid.
pid_t launch_daemon(const std::string& client, const std::string& root) {
  std::filesystem::create_directories(root);
  // Detached: it outlives a SIGKILLed harness on purpose (the next run's sweep empties it),
  // and a Ctrl-C at the terminal reaches the harness only, which stops it itself.
  const pid_t pid = spawn_detached(
      {.argv = {kDockerd, "--bridge=none", "--ip-forward=false", "--iptables=false",
                "--data-root=" + root + "/data", "--exec-root=" + root + "/exec",
                "--host=unix://" + root + "/docker.sock", "--pidfile=" + root + "/dockerd.pid"},
       .netns = "",
       .log_path = root + "/dockerd.log",
       .pipe_stdin = false,
       .pipe_stdout = false,
       .merge_stderr = false});
  const std::string host = "unix://" + root + "/docker.sock";
  const int64_t deadline = steady_now_ms() + kDaemonReadyMs;
  for (;;) {
    if (run_tool({client, "-H", host, "info", "--format", "{{.ServerVersion}}"}).code == 0) {
      return pid;
    }
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid || steady_now_ms() >= deadline) {
      terminate(pid);
      std::string log = read_file(root + "/dockerd.log");
      if (log.size() > 2000) log = "..." + log.substr(log.size() - 2000);
      throw std::runtime_error("dockerd did not answer on " + host + " within " +
                               std::to_string(kDaemonReadyMs) + " ms; its log ends:\n" + log);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
  }
}

// Every container and custom network of a daemon this project started (it holds nothing else).
void empty_daemon(const DockerEngine& engine) {
  try {
    const ToolResult ids = engine.run({"ps", "-aq"});
    std::vector<std::string> args = {"rm", "-f", "-v"};
    for (const std::string& id : lines(ids.output)) args.push_back(id);
    if (ids.code == 0 && args.size() > 3) engine.run(args, 120'000);
    const ToolResult nets = engine.run({"network", "ls", "-q", "--filter", "type=custom"});
    std::vector<std::string> rm = {"network", "rm"};
    for (const std::string& id : lines(nets.output)) rm.push_back(id);
    if (nets.code == 0 && rm.size() > 2) engine.run(rm);
  } catch (const std::exception&) {
    // Best effort: the daemon may already be gone.
  }
}

}  // namespace

std::string process_identity(pid_t pid) {
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  // Field 22 (starttime) is the 20th after the command name.
  for (int i = 0; i < 20 && fields >> field; ++i) {
  }
  return field.empty() ? "" : std::to_string(pid) + "." + field;
}

std::string own_identity() {
  static const std::string identity = process_identity(getpid());
  return identity;
}

bool identity_alive(const std::string& identity) {
  const size_t dot = identity.find('.');
  if (dot == std::string::npos || dot == 0) return false;
  const std::string pid_text = identity.substr(0, dot);
  if (pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9) {
    return false;
  }
  const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
  return !process_gone(pid) && process_identity(pid) == identity;
}

std::string find_docker_client() {
  if (access("/usr/bin/docker", X_OK) == 0) return "/usr/bin/docker";
  std::string found;
  return executable_on_path("docker", &found) ? found : "";
}

std::string docker_unavailable_reason() {
  const std::string client = find_docker_client();
  if (client.empty()) return "no docker client (install docker.io: scripts/install-deps.sh)";
  const char* env_host = std::getenv("DOCKER_HOST");
  if (env_host && *env_host) return "";
  if (access(kUserSocket, F_OK) == 0 &&
      run_tool({client, "-H", std::string("unix://") + kUserSocket, "info"}).code == 0) {
    return "";
  }
  if (!executable_on_path(kDockerd)) {
    return "no reachable Docker daemon and no dockerd to start (install docker.io)";
  }
  if (geteuid() != 0) return "no reachable Docker daemon, and starting dockerd needs root";
  return "";
}

DockerEngine DockerEngine::attach(const std::string& host) {
  const std::string client = find_docker_client();
  if (client.empty()) throw std::runtime_error("no docker client found (install docker.io)");
  return DockerEngine(client, host);
}

DockerEngine DockerEngine::acquire() {
  const std::string client = find_docker_client();
  if (client.empty()) throw std::runtime_error("no docker client found (install docker.io)");
  const char* env_host = std::getenv("DOCKER_HOST");
  if (env_host && *env_host) {
    DockerEngine engine(client, env_host);
    const ToolResult info = engine.run({"info", "--format", "{{.ServerVersion}}"});
    if (info.code != 0) {
      throw std::runtime_error(std::string("DOCKER_HOST=") + env_host +
                               " is set but no daemon answers there: " + info.output);
    }
    return engine;
  }
  const std::string user_host = std::string("unix://") + kUserSocket;
  if (access(kUserSocket, F_OK) == 0 && run_tool({client, "-H", user_host, "info"}).code == 0) {
    return DockerEngine(client, user_host);
  }
  return start_daemon(client);
}

DockerEngine DockerEngine::start_daemon(const std::string& client) {
  if (!executable_on_path(kDockerd)) {
    throw std::runtime_error("no Docker daemon is reachable and dockerd is not installed");
  }
  static int started = 0;
  const std::string root =
      std::string(kRootPrefix) + own_identity() + "-" + std::to_string(started++);
  DockerEngine engine(client, "unix://" + root + "/docker.sock");
  engine.root_ = root;
  engine.dockerd_pid_ = launch_daemon(client, root);
  return engine;
}

DockerEngine::DockerEngine(DockerEngine&& other) noexcept
    : client_(std::move(other.client_)),
      host_(std::move(other.host_)),
      dockerd_pid_(std::exchange(other.dockerd_pid_, 0)),
      root_(std::move(other.root_)),
      interrupted_(std::move(other.interrupted_)) {}

DockerEngine::~DockerEngine() {
  stop();
}

ToolResult DockerEngine::run(const std::vector<std::string>& args, int64_t timeout_ms) const {
  std::vector<std::string> argv = {client_, "-H", host_};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_tool(argv, "", "", timeout_ms, interrupted_);
}

ToolResult DockerEngine::run_to_file(const std::vector<std::string>& args, const std::string& path,
                                     int64_t timeout_ms) const {
  // The shell only redirects: the path and every argument are passed as arguments, never parsed.
  std::vector<std::string> argv = {
      "sh", "-c", "f=$1; shift; exec \"$@\" >\"$f\" 2>&1", "sh", path, client_, "-H", host_};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_tool(argv, "", "", timeout_ms, interrupted_);
}

std::string DockerEngine::checked(const std::vector<std::string>& args, int64_t timeout_ms) const {
  const ToolResult result = run(args, timeout_ms);
  if (result.code != 0) {
    std::string line = "docker";
    for (const std::string& a : args) line += " " + a;
    throw std::runtime_error(line + " failed (exit " + std::to_string(result.code) +
                             "): " + trimmed(result.output));
  }
  return trimmed(result.output);
}

void DockerEngine::stop() {
  interrupted_ = nullptr;  // the daemon is emptied and stopped whatever the harness was told
  if (dockerd_pid_ <= 0) return;
  empty_daemon(*this);
  terminate(std::exchange(dockerd_pid_, 0));
  unmount_below(root_);
  std::error_code ec;
  std::filesystem::remove_all(root_, ec);
}

void remove_orphaned_objects(const DockerEngine& engine) {
  try {
    const char* format = "{{.ID}} {{.Label \"locklab.owner\"}}";
    const struct {
      std::vector<std::string> list;
      std::vector<std::string> remove;
    } kinds[] = {
        {{"ps", "-a", "--filter", "label=locklab.owner", "--format", format}, {"rm", "-f", "-v"}},
        {{"network", "ls", "--filter", "label=locklab.owner", "--format", format},
         {"network", "rm"}},
        {{"volume", "ls", "--filter", "label=locklab.owner", "--format",
          "{{.Name}} {{.Label \"locklab.owner\"}}"},
         {"volume", "rm", "-f"}},
        {{"images", "--filter", "label=locklab.owner", "--format", "{{.ID}}"}, {"rmi", "-f"}}};
    for (const auto& kind : kinds) {
      const ToolResult listed = engine.run(kind.list);
      if (listed.code != 0) continue;
      std::vector<std::string> args = kind.remove;
      for (const std::string& line : lines(listed.output)) {
        const size_t space = line.find(' ');
        if (space == std::string::npos) {
          // Images: their owner label is read separately (the images listing has no labels).
          const std::string owner =
              trimmed(engine
                          .run({"image", "inspect", "--format",
                                "{{index .Config.Labels \"locklab.owner\"}}", line})
                          .output);
          if (!identity_alive(owner)) args.push_back(line);
        } else if (!identity_alive(line.substr(space + 1))) {
          args.push_back(line.substr(0, space));
        }
      }
      if (args.size() > kind.remove.size()) engine.run(args, 120'000);
    }
  } catch (const std::exception&) {
    // Best effort.
  }
}

void remove_run_objects(const DockerEngine& engine, const std::string& run_id, bool images) {
  try {
    const std::string label = "label=locklab.run=" + run_id;
    const struct {
      std::vector<std::string> list;
      std::vector<std::string> remove;
    } kinds[] = {{{"ps", "-aq", "--filter", label}, {"rm", "-f", "-v"}},
                 {{"network", "ls", "-q", "--filter", label}, {"network", "rm"}},
                 {{"volume", "ls", "-q", "--filter", label}, {"volume", "rm", "-f"}},
                 {{"images", "-q", "--filter", label}, {"rmi", "-f"}}};
    for (const auto& kind : kinds) {
      if (!images && kind.remove[0] == "rmi") continue;
      const ToolResult listed = engine.run(kind.list);
      std::vector<std::string> args = kind.remove;
      for (const std::string& id : lines(listed.output)) {
        if (std::find(args.begin(), args.end(), id) == args.end()) args.push_back(id);
      }
      if (listed.code == 0 && args.size() > kind.remove.size()) engine.run(args, 120'000);
    }
  } catch (const std::exception&) {
    // Best effort.
  }
}

std::vector<std::string> sweep_docker_leftovers() {
  std::vector<std::string> cleaned;
  const std::string client = find_docker_client();
  if (client.empty()) return cleaned;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/tmp", ec)) {
    const std::string root = entry.path().string();
    const std::string owner = root_owner(root);
    if (owner.empty() || identity_alive(owner)) continue;
    try {
      // A daemon still running answers on its socket; one that died is started again on the
      // same root, so it can remove its own containers and networks (and their host bridges).
      const std::string pid_text = trimmed(read_file(root + "/dockerd.pid"));
      pid_t pid = pid_text.empty() ? 0 : static_cast<pid_t>(std::atol(pid_text.c_str()));
      if (pid > 0 && (process_gone(pid) || read_file("/proc/" + pid_text + "/cmdline").find(root) ==
                                               std::string::npos)) {
        pid = 0;
      }
      if (pid == 0) pid = launch_daemon(client, root);
      DockerEngine engine = DockerEngine::attach("unix://" + root + "/docker.sock");
      empty_daemon(engine);
      terminate(pid);
    } catch (const std::exception&) {
      // Fall through: delete what can be deleted.
    }
    unmount_below(root);
    std::filesystem::remove_all(root, ec);
    cleaned.push_back(root);
  }
  const char* env_host = std::getenv("DOCKER_HOST");
  std::string user_host;
  if (env_host && *env_host) {
    user_host = env_host;
  } else if (access(kUserSocket, F_OK) == 0) {
    user_host = std::string("unix://") + kUserSocket;
  }
  if (!user_host.empty()) remove_orphaned_objects(DockerEngine::attach(user_host));
  return cleaned;
}

}  // namespace locklab
