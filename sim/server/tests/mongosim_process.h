// A mongosim server process for tests: started on a free port, waited for until it accepts
// connections, stopped with SIGTERM (and killed if it does not exit), its stdout kept in a
// file so tests can read its log lines.
//
//   MongosimProcess server({"--replSet", "rs0"});   // throws std::runtime_error on failure
//   server.port();  server.uri();  server.log_text();  server.stop();
//
// mongod has no "--port 0", so a free port is found by binding a socket to port 0, reading
// the port the kernel chose and closing it; the tiny window before mongosim binds it is
// covered by retrying startup on another port.
//
// Thread rules: one owner thread; not copyable. The destructor never throws and always
// reaps the child.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace mongosim::testing {

// Returns once every thread of `pid` is stopped (state T in /proc), as SIGSTOP leaves it; false
// after `timeout`. kill(SIGSTOP) returns before the target's threads have stopped, so a test
// that acts right after it may still race with the member it believes paused.
inline bool wait_until_stopped(pid_t pid,
                               std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  auto all_stopped = [pid] {
    std::error_code ec;
    std::filesystem::directory_iterator tasks("/proc/" + std::to_string(pid) + "/task", ec);
    if (ec) return false;
    for (const auto& task : tasks) {
      std::ifstream in(task.path() / "stat");
      std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      size_t close = stat.rfind(')');
      if (close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'T') {
        return false;
      }
    }
    return true;
  };
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!all_stopped()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

class MongosimProcess {
 public:
  static constexpr int kStartAttempts = 3;
  static constexpr std::chrono::milliseconds kStartTimeout{10000};
  static constexpr std::chrono::milliseconds kStopTimeout{10000};
  static constexpr std::chrono::milliseconds kPollInterval{20};

  // `launcher`: a command line the server runs under (e.g. strace and its options), or empty.
  explicit MongosimProcess(std::vector<std::string> extra_args = {},
                           std::string binary = MONGOSIM_PATH,
                           std::vector<std::string> launcher = {})
      : binary_(std::move(binary)),
        extra_args_(std::move(extra_args)),
        launcher_(std::move(launcher)) {
    std::string last_error;
    for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
      port_ = free_port();
      if (try_start(last_error)) return;
    }
    throw std::runtime_error("mongosim did not start: " + last_error);
  }

  ~MongosimProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    std::remove(log_path_.c_str());
  }

  MongosimProcess(const MongosimProcess&) = delete;
  MongosimProcess& operator=(const MongosimProcess&) = delete;

  int port() const { return port_; }
  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
  // A URI for a direct connection, plus any options ("replicaSet=rs0").
  std::string uri(const std::string& options = "") const {
    return "mongodb://" + host() + "/" + (options.empty() ? "" : "?" + options);
  }
  pid_t pid() const { return pid_; }

  // Everything the server printed so far.
  std::string log_text() const {
    std::ifstream in(log_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // SIGTERM, then wait (bounded) for exit. Returns the exit status as waitpid reports it, or
  // throws if the process had to be killed.
  int stop() {
    if (pid_ <= 0) throw std::logic_error("mongosim is not running");
    ::kill(pid_, SIGTERM);
    int status = 0;
    bool exited = wait_for_exit(kStopTimeout, status);
    pid_t pid = pid_;
    pid_ = -1;
    if (!exited) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      throw std::runtime_error("mongosim ignored SIGTERM");
    }
    return status;
  }

  // True while the child has not exited.
  bool running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  }

  static int free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      if (fd >= 0) ::close(fd);
      throw std::runtime_error("cannot find a free port");
    }
    ::close(fd);
    return ntohs(addr.sin_port);
  }

  // Connects a plain TCP socket to the server; -1 on failure.
  static int connect_to(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd);
      return -1;
    }
    return fd;
  }

 private:
  bool try_start(std::string& error) {
    char path[] = "/tmp/mongosim-test-log-XXXXXX";
    int log_fd = ::mkstemp(path);
    if (log_fd < 0) throw std::runtime_error("mkstemp failed");
    log_path_ = path;
    std::vector<std::string> args = launcher_;
    for (const std::string& a : {binary_, std::string("--port"), std::to_string(port_)}) {
      args.push_back(a);
    }
    args.insert(args.end(), extra_args_.begin(), extra_args_.end());
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      // A test process that dies without running its destructors must not orphan the server.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::dup2(log_fd, STDOUT_FILENO);
      ::dup2(log_fd, STDERR_FILENO);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(log_fd);
    auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (!running()) {
        error = "exited during startup; log: " + log_text();
        std::remove(log_path_.c_str());
        return false;
      }
      int fd = connect_to(port_);
      if (fd >= 0) {
        ::close(fd);
        return true;
      }
      std::this_thread::sleep_for(kPollInterval);
    }
    error = "did not accept connections within the start timeout; log: " + log_text();
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    return false;
  }

  bool wait_for_exit(std::chrono::milliseconds timeout, int& status) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) return true;
      std::this_thread::sleep_for(kPollInterval);
    }
    return false;
  }

  std::string binary_;
  std::vector<std::string> extra_args_;
  std::vector<std::string> launcher_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::string log_path_;
};

}  // namespace mongosim::testing
