// MongosimProcess: a mongosim server started as a child process on a free port, initiated as a
// one-member replica set rs0, for mongolock's integration tests.
//
// start() returns nullptr when the build has no mongosim (MONGOSIM_PATH empty); callers skip.
// Every wait is bounded (kStartDeadline). The destructor sends SIGTERM, waits up to 5 s, then
// SIGKILL, and always reaps the child.
// Thread rules: one owner; command helpers may be called from any thread (own client each).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace mongolock::test {

class MongosimProcess {
 public:
  static constexpr auto kStartDeadline = std::chrono::seconds(20);

  // Throws std::runtime_error with the reason if the server does not come up. With
  // initiate_alone false the member only listens, for a larger set initiated by the caller.
  static std::unique_ptr<MongosimProcess> start(bool initiate_alone = true);
  ~MongosimProcess();
  MongosimProcess(const MongosimProcess&) = delete;
  MongosimProcess& operator=(const MongosimProcess&) = delete;

  int port() const { return port_; }
  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
  // mongodb://127.0.0.1:P/?replicaSet=rs0 plus `extra` options ("&a=b").
  std::string uri(const std::string& extra = "") const;
  void pause();   // SIGSTOP: the server stops answering; connections stay open
  void resume();  // SIGCONT

  // Runs `command_json` (relaxed extended JSON) against database `db`; returns the reply as
  // canonical JSON; throws std::runtime_error on failure.
  std::string command(const std::string& db, const std::string& command_json) const;
  // serverStatus metrics.commands.<name>.total (0 when the command has not been seen).
  int64_t command_total(const std::string& name) const;

 private:
  MongosimProcess(pid_t pid, int port) : pid_(pid), port_(port) {}
  void initiate() const;

  pid_t pid_;
  int port_;
};

}  // namespace mongolock::test
