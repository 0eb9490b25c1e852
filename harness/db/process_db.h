// Sets whose members are processes the harness spawns (Supervisor children): mongosim
// (MongosimDb) or a real mongod (MongodDb, --mongod), both taking mongod's flags, each member on
// its own dbpath under DbConfig::data_dir so a killed member restarts on its data.
//
// Placement: netns (the members, a control host for admin commands and every worker of
// DbConfig::workers in namespaces of the run's own network: db/netns.h; partitions possible;
// with DbConfig::delays_replies a reply relay per worker, db/reply_relays.h) or loopback
// (everything on 127.0.0.1, each member on a port the set reserves from its first start to its
// destruction, db/port_reservation.h, so a killed member's port is still its own at the restart;
// no partitions, no reply delays). The network is
// built by start() and deleted by teardown(); stop() ends the relays.
//
// Member levers are signals to the member's process group (a faketime wrapper's child too):
// SIGKILL (kill), SIGSTOP/SIGCONT (pause), the first command line again (restart).
//
// Thread rules: Db's (the harness's main thread); spawns only from that thread (run/process.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "db/db.h"
#include "db/netns.h"
#include "db/port_reservation.h"
#include "db/reply_relays.h"
#include "run/process.h"

namespace locklab {

enum class Placement { kNetns, kLoopback };

struct MemberPlacement {
  std::string netns;    // "" on loopback
  std::string address;  // bind address: "10.77.0.1" or "127.0.0.1"
  int port = 27017;
};

class ProcessDb : public Db {
 public:
  // `program`: the member binary. `netns_refusal`: with kLoopback, why the netns placement
  // cannot run here ("" when it could), for supports()'s answer.
  ProcessDb(DbConfig config, Supervisor& supervisor, std::string program, Placement placement,
            std::string netns_refusal = "");
  ~ProcessDb() override;

  std::string name() const override;
  std::string member_program() const override { return program_; }
  std::optional<std::string> supports(FaultKind kind) const override;

  void start() override;
  void stop(int64_t grace_ms = 3000) override;
  void teardown() override;

  std::string host(int member) const override;
  std::string uri(const std::string& app_name) const override;
  std::string worker_netns(const std::string& worker) const override;
  pid_t pid(int member) const override { return pids_.at(member); }

  void kill_member(int member) override;
  void restart_member(int member) override;
  void pause_member(int member) override;
  void resume_member(int member) override;
  bool running(int member) const override;
  bool paused(int member) const override { return paused_.at(member); }
  int64_t clock_offset(int member) const override { return clock_offsets_ms_.at(member); }
  Partitions* partitions() override { return network_.get(); }
  ReplyDelays* reply_delays() override { return relays_.get(); }
  std::optional<std::string> helper_of(pid_t pid) const override;

 protected:
  std::string admin_netns() const override;
  std::string log_tail(int member) const override;
  // What runs before the member program on its command line (a faketime wrapper), or nothing.
  virtual std::vector<std::string> wrapper(int /*member*/) { return {}; }
  // Called once start() has a ready set (a probe of what the run needs, say).
  virtual void after_start() {}

  std::vector<int64_t> clock_offsets_ms_;  // what each member's clock offset was last set to

 private:
  Supervisor& supervisor_;
  std::string program_;
  Placement placement_;
  std::string netns_refusal_;
  std::unique_ptr<Network> network_;
  std::unique_ptr<ReplyRelays> relays_;  // netns and DbConfig::delays_replies only
  std::vector<MemberPlacement> placements_;
  std::vector<PortReservation> reservations_;  // loopback: one per member, kept over restarts
  std::vector<pid_t> pids_;
  std::vector<bool> paused_;
  std::vector<bool> wrapped_;  // the member runs under the faketime program (its /dev/shm pair)

  void build_network();
  void start_relays();
  void start_member(int member);
  // The member's process (reaped) and group (SIGKILLed) are over: its pair goes, and the run's
  // cleanup leaves its pid alone (run/noted_processes.h).
  void note_member_ended(int member, pid_t pid);
  bool signal_member(int member, int sig);
};

// mongosim members; clocks through its mongosimSetClockOffset command. When the scenario moves
// member clocks, start() probes the command and throws Unsupported where the program refuses it.
class MongosimDb : public ProcessDb {
 public:
  using ProcessDb::ProcessDb;
  int64_t set_clock_offset(int member, int64_t offset_ms) override;

 protected:
  void after_start() override;
};

// A real mongod (--mongod): no mongosim-only command is ever sent. When the scenario moves
// member clocks, every member runs under faketime reading a timestamp file of its own, which
// set_clock_offset rewrites; without the faketime program those faults are refused.
class MongodDb : public ProcessDb {
 public:
  MongodDb(DbConfig config, Supervisor& supervisor, std::string program, Placement placement,
           std::string netns_refusal = "");
  std::optional<std::string> supports(FaultKind kind) const override;
  int64_t set_clock_offset(int member, int64_t offset_ms) override;

 protected:
  std::vector<std::string> wrapper(int member) override;

 private:
  std::string faketime_;  // the faketime program, "" when not found or not needed
  std::string clock_file(int member) const;
};

// An executable named `name` on $PATH, or "".
std::string find_on_path(const std::string& name);

}  // namespace locklab
