// One mongosim server process for tests: started on a loopback port (and a --dbpath when given)
// under the harness's process supervisor (run/process.h: PR_SET_PDEATHSIG, its own process
// group, exec failures reported), waited for until it accepts connections, and then killed,
// paused, resumed, stopped or restarted on the same port and dbpath. Its output goes to a log
// file that every run of the node appends to. Unless NodeOptions::port names one, the port is a
// PortReservation (db/port_reservation.h) the node holds for its whole life, so nothing else can
// take it before the start or between a kill and the restart.
//
//   MongosimNode node({.args = {"--replSet", "rs0"}});   // throws std::runtime_error on failure
//   node.port();  node.uri();  node.command("admin", R"({"hello": 1})");  node.kill();
//
// Invariants: pid() > 0 exactly while the process the node started has not been reaped;
// paused() implies every thread of that process is stopped (state T). Every wait has a deadline.
// Thread rules: one owner thread, the one that lives for the whole test (PDEATHSIG fires when
// the thread that forked ends); command(), try_command() and command_total() open a connection
// of their own per call and may run on any thread. Not copyable; the destructor kills (SIGKILL)
// and reaps the process and never throws.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "db/port_reservation.h"
#include "run/process.h"

namespace locklab::testkit {

// The mongosim this build made ("" when the build has none: tests that need one skip).
const std::string& mongosim_program();

struct NodeOptions {
  std::string program = {};                // "" = mongosim_program()
  std::vector<std::string> args = {};      // after --port <port> [--dbpath <dbpath>]
  std::string dbpath = {};                 // "" = none (mongosim keeps its data in memory)
  std::string log_path = {};               // "" = a file of the node's own, removed with it
  std::vector<std::string> launcher = {};  // a command line the server runs under (strace ...)
  int port = 0;                            // 0 = a port the node reserves
  std::chrono::milliseconds start_timeout{10'000};  // until it accepts connections
};

class MongosimNode {
 public:
  static constexpr std::chrono::milliseconds kStopTimeout{10'000};
  static constexpr std::chrono::milliseconds kPauseTimeout{5'000};

  explicit MongosimNode(NodeOptions options = {});
  ~MongosimNode();
  MongosimNode(const MongosimNode&) = delete;
  MongosimNode& operator=(const MongosimNode&) = delete;

  int port() const { return port_; }
  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
  // A URI for this node alone: mongodb://127.0.0.1:<port>/ plus "?<options>" when given.
  std::string uri(const std::string& options = "") const;
  pid_t pid() const { return pid_; }
  const std::string& dbpath() const { return options_.dbpath; }
  // Everything the server printed so far, over all its runs.
  std::string log_text() const;

  // Whether the process is still running (paused counts); reaps it when it has ended.
  bool running();
  bool paused() const { return paused_; }

  // SIGTERM, then up to kStopTimeout for it to exit. Returns how it ended; throws
  // std::runtime_error when it had to be killed. Throws std::logic_error when not running.
  ExitStatus stop();
  // SIGKILL (a crash: nothing flushed) and reap. Does nothing when not running.
  void kill();
  // SIGSTOP, returning once every thread of the process is stopped; throws when that takes
  // longer than kPauseTimeout or the node is not running. resume() sends SIGCONT.
  void pause();
  void resume();
  // Starts the server again on the same port, dbpath and arguments; waits until it accepts
  // connections. Throws std::logic_error when it is running.
  void restart();

  // One command on a fresh direct connection (the harness's admin connection, db/admin.h).
  // command() parses `json` (relaxed extended JSON) and throws std::runtime_error naming the
  // command when it is not JSON, or the reply is not ok; try_command() never throws for a
  // failed command: the reply, with ok 0 and errmsg.
  nlohmann::json command(const std::string& db, const std::string& json) const;
  nlohmann::json try_command(const std::string& db, const nlohmann::ordered_json& cmd) const;
  // serverStatus metrics.commands.<name>.total (0 when the command has not been seen).
  int64_t command_total(const std::string& name) const;

 private:
  bool start_once(std::string& error);
  std::vector<std::string> command_line() const;

  NodeOptions options_;
  bool own_log_ = false;
  std::optional<PortReservation> reservation_;  // when options_.port was 0
  int port_ = 0;
  pid_t pid_ = -1;
  bool paused_ = false;
  std::unique_ptr<Supervisor> supervisor_;
};

}  // namespace locklab::testkit
