#include "mongosim_node.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "db/admin.h"
#include "loopback.h"
#include "own_process.h"
#include "poll_until.h"

namespace locklab::testkit {
namespace {

// Whether every thread of `pid` is stopped (state T in /proc/<pid>/task/*/stat). kill(SIGSTOP)
// returns before the target's threads have stopped, so a test acting right after it could still
// race with the member it believes paused.
bool all_threads_stopped(pid_t pid) {
  std::error_code ec;
  std::filesystem::directory_iterator tasks("/proc/" + std::to_string(pid) + "/task", ec);
  if (ec) return false;
  for (const auto& task : tasks) {
    const std::string stat = read_proc_file(task.path() / "stat");  // "" once the thread ended
    // The command name is in parentheses and may hold spaces; the state follows the last ')'.
    const size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'T') {
      return false;
    }
  }
  return true;
}

std::string new_log_path() {
  std::string pattern = std::filesystem::temp_directory_path() / "locklab-mongosim-XXXXXX";
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) throw std::runtime_error("cannot create a log file from " + pattern);
  ::close(fd);
  return pattern;
}

}  // namespace

const std::string& mongosim_program() {
  static const std::string program = LOCKLAB_TESTKIT_MONGOSIM;
  return program;
}

MongosimNode::MongosimNode(NodeOptions options) : options_(std::move(options)) {
  if (options_.program.empty()) options_.program = mongosim_program();
  if (options_.program.empty()) throw std::runtime_error("this build has no mongosim");
  init_driver();
  if (options_.log_path.empty()) {
    options_.log_path = new_log_path();
    own_log_ = true;
  }
  if (options_.port == 0) reservation_.emplace();
  port_ = reservation_ ? reservation_->port() : options_.port;
  std::string error;
  if (start_once(error)) return;
  if (own_log_) std::remove(options_.log_path.c_str());
  throw std::runtime_error("mongosim did not start: " + error);
}

MongosimNode::~MongosimNode() {
  supervisor_.reset();  // SIGKILL and reap whatever still runs (a stopped process too)
  if (own_log_) std::remove(options_.log_path.c_str());
}

std::string MongosimNode::uri(const std::string& options) const {
  return "mongodb://" + host() + "/" + (options.empty() ? "" : "?" + options);
}

std::string MongosimNode::log_text() const {
  std::ifstream in(options_.log_path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> MongosimNode::command_line() const {
  std::vector<std::string> argv = options_.launcher;
  for (const std::string& a : {options_.program, std::string("--port"), std::to_string(port_)}) {
    argv.push_back(a);
  }
  if (!options_.dbpath.empty()) {
    argv.push_back("--dbpath");
    argv.push_back(options_.dbpath);
  }
  argv.insert(argv.end(), options_.args.begin(), options_.args.end());
  return argv;
}

// One start on port_: false (with the reason) when the process ended or did not accept
// connections within the start timeout; the process is then reaped.
bool MongosimNode::start_once(std::string& error) {
  supervisor_ = std::make_unique<Supervisor>();
  pid_ = supervisor_->spawn({.argv = command_line(), .netns = "", .log_path = options_.log_path});
  paused_ = false;
  bool ended = false;
  const bool up = poll_until(after(options_.start_timeout), [&] {
    if (!running()) {
      ended = true;
      return true;
    }
    const int fd = connect_loopback(port_);
    if (fd >= 0) ::close(fd);
    return fd >= 0;
  });
  if (up && !ended) return true;
  error = std::string(ended ? "exited during start-up" : "did not accept connections in time") +
          " on port " + std::to_string(port_) + "; log:\n" + log_text();
  kill();
  return false;
}

bool MongosimNode::running() {
  if (pid_ <= 0) return false;
  if (supervisor_->wait_exit(pid_, 0)) {
    pid_ = -1;
    paused_ = false;
    return false;
  }
  return true;
}

ExitStatus MongosimNode::stop() {
  if (!running())
    throw std::logic_error("mongosim on port " + std::to_string(port_) + " is not running");
  if (paused_) resume();
  supervisor_->signal(pid_, SIGTERM);
  const std::optional<ExitStatus> ended = supervisor_->wait_exit(pid_, kStopTimeout.count());
  if (!ended) {
    kill();
    throw std::runtime_error("mongosim on port " + std::to_string(port_) + " ignored SIGTERM");
  }
  pid_ = -1;
  return *ended;
}

void MongosimNode::kill() {
  if (pid_ <= 0) return;
  supervisor_->signal(pid_, SIGKILL);
  // SIGKILL ends a stopped process too.
  const bool reaped = supervisor_->wait_exit(pid_, kStopTimeout.count()).has_value();
  pid_ = -1;
  paused_ = false;
  if (!reaped)
    throw std::runtime_error("mongosim on port " + std::to_string(port_) + " outlived SIGKILL");
}

void MongosimNode::pause() {
  if (!running()) throw std::logic_error("cannot pause: mongosim is not running");
  supervisor_->signal(pid_, SIGSTOP);
  if (!poll_until(
          after(kPauseTimeout), [&] { return all_threads_stopped(pid_); },
          std::chrono::milliseconds(1))) {
    throw std::runtime_error("mongosim on port " + std::to_string(port_) +
                             " did not stop on SIGSTOP");
  }
  paused_ = true;
}

void MongosimNode::resume() {
  if (pid_ > 0) supervisor_->signal(pid_, SIGCONT);
  paused_ = false;
}

void MongosimNode::restart() {
  if (running()) throw std::logic_error("cannot restart: mongosim is running");
  std::string error;
  if (!start_once(error)) throw std::runtime_error("mongosim did not restart: " + error);
}

nlohmann::json MongosimNode::try_command(const std::string& db,
                                         const nlohmann::ordered_json& cmd) const {
  return direct_command(host(), db, cmd);
}

nlohmann::json MongosimNode::command(const std::string& db, const std::string& json) const {
  const nlohmann::ordered_json cmd = nlohmann::ordered_json::parse(json, nullptr, false);
  if (cmd.is_discarded() || !cmd.is_object() || cmd.empty()) {
    throw std::runtime_error("not a command document: " + json);
  }
  nlohmann::json reply = try_command(db, cmd);
  if (!reply_ok(reply)) {
    throw std::runtime_error(json + " on " + host() + " failed: " + reply.dump());
  }
  return reply;
}

int64_t MongosimNode::command_total(const std::string& name) const {
  const nlohmann::json status = command("admin", R"({"serverStatus": 1})");
  const nlohmann::json::json_pointer path("/metrics/commands/" + name + "/total");
  if (!status.contains(path)) return 0;
  const nlohmann::json& total = status.at(path);
  // Relaxed extended JSON writes an int64 as a plain number, a larger one as {"$numberLong"}.
  if (total.is_object()) return std::stoll(total.value("$numberLong", "0"));
  return total.get<int64_t>();
}

}  // namespace locklab::testkit
