// A replica set "rs0" in Docker containers, and the run's worker containers beside it.
//
// Layout: one internal network (`--internal`: no route out) per run, with a subnet of its own
// (10.89.<n>.0/24, the first free <n> from the run's pid) and fixed addresses: members m<i> at
// .11+i, workers at .101+k. Fixed addresses also fix each container's MAC (docker derives it
// from the address), so peers' ARP entries stay right across kill/start. The host holds the
// bridge's gateway address (.1) and reaches every container directly: admin commands go out from
// the harness's own namespace.
//
// Each member's dbpath is <run_dir>/m<i> bind-mounted at /data/db, so kill + start recovers its
// data. Workers run in containers of their own so that every partition shape stays possible,
// including one worker cut off from one member: a partition is an nft table inside a container's
// network namespace, entered from the host (nsenter -t <pid> -n), and that needs each worker to
// have its own namespace and address.
//
// Images: mongosim images (clock lever mongosimSetClockOffset) or mongod images such as
// mongo:7.0: the same command line (`<program> --replSet rs0 --bind_ip <address> --port 27017
// --dbpath /data/db`), only the program name differs; clock faults are refused on images
// without the lever.
//
// Faults: pause = docker pause (the cgroup freezer: every process of the container), kill =
// docker kill (SIGKILL, nothing flushed) then docker start, partitions = counted cuts between
// roles (as on the netns backend), rewritten into each concerned container's table, and
// re-applied after a restart (a started container gets a new network namespace).
//
// Every container and the network carry locklab.run=<run id> and locklab.owner=<harness
// identity>; teardown() removes them, the sweep (docker_engine.h) removes what a killed run left.
//
// Thread rules: one thread (the harness's main thread) calls every method.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cluster.h"
#include "db/docker_engine.h"
#include "process.h"

namespace locklab {

struct DockerSetOptions {
  std::string image;                 // "locklab/mongosim:<run id>" or "mongo:7.0"
  std::string program = "mongosim";  // the member program inside the image: mongosim or mongod
  int members = 3;
  std::string run_id;   // labels and names; [a-z0-9.-] only
  std::string run_dir;  // host directory: m<i>/ are the members' dbpaths
  int64_t election_timeout_ms = 2000;
  int64_t ready_timeout_ms = 60'000;  // network + containers + initiate + majority write
  // Polled by every wait; when it returns true the wait throws Interrupted (Ctrl-C).
  std::function<bool()> interrupted;

  bool clock_lever() const { return program == "mongosim"; }
};

class DockerSet {
 public:
  static constexpr int kMembersMax = 7;
  static constexpr int kWorkersMax = 90;

  DockerSet(DockerEngine& engine, DockerSetOptions options);
  ~DockerSet();  // teardown()
  DockerSet(const DockerSet&) = delete;
  DockerSet& operator=(const DockerSet&) = delete;

  // Creates the network, starts every member, initiates the set and waits for a writable
  // primary that acknowledges a majority write. Throws std::runtime_error with the member's
  // output when it does not come up; Interrupted on Ctrl-C.
  void start();
  // Removes every container and the network of this run. Never throws; safe to call twice.
  void teardown();
  // Writes each container's output to <dir>/<role>.log (for the run's outputs). Never throws.
  void save_logs(const std::string& dir) const;

  // Member levers. Throw std::runtime_error with docker's message.
  void kill_member(int member);     // docker kill: SIGKILL to every process of the container
  void restart_member(int member);  // docker start; re-applies its cuts; does not wait
  void pause_member(int member);    // docker pause
  void resume_member(int member);   // docker unpause
  // Sets a member's wall-clock offset; refused with the reason on images without the lever.
  int64_t set_clock_offset(int member, int64_t offset_ms);

  // Workers: a container "w<k>"-style role at the next worker address, running argv in the
  // image, with `mounts` (host path = container path) bind-mounted read-write.
  void start_worker(const std::string& role, const std::vector<std::string>& argv,
                    const std::vector<std::string>& mounts);
  void kill_container(const std::string& role);
  void pause_container(const std::string& role);
  void resume_container(const std::string& role);
  bool container_running(const std::string& role) const;
  // The exit code of a stopped container, or -1 while it runs.
  int exit_code(const std::string& role) const;

  // Partitions between roles ("m0", a worker role): counted cuts (see netns.h's Network).
  using Cut = std::pair<std::string, std::string>;
  void cut(const std::vector<Cut>& pairs);
  void uncut(const std::vector<Cut>& pairs);
  std::vector<std::string> cut_peers(const std::string& role) const;

  // The member that is writable primary now, or -1 (paused or killed members are not asked).
  int primary() const;
  int wait_for_primary(int64_t timeout_ms, int except = -1) const;
  std::string member_state(int member) const;  // "primary", "secondary" or "other"

  int size() const { return options_.members; }
  std::string host(int member) const;  // "address:27017"
  std::string address(const std::string& role) const;
  std::string container(const std::string& role) const;  // its docker name
  pid_t container_pid(const std::string& role) const;    // on the host; 0 when not running
  std::string uri(const std::string& app_name) const;
  std::string network() const { return network_; }
  // Admin commands, final reads (see cluster.h): the set seen as an external cluster.
  Cluster& admin() { return *admin_; }
  const Cluster& admin() const { return *admin_; }

  static std::string member_role(int member) { return "m" + std::to_string(member); }

 private:
  DockerEngine& engine_;
  DockerSetOptions options_;
  Supervisor unused_supervisor_;  // the admin Cluster starts nothing
  std::unique_ptr<Cluster> admin_;
  std::string network_;
  std::string subnet_prefix_;                     // "10.89.<n>"
  std::map<std::string, std::string> addresses_;  // role -> address
  std::map<Cut, int> cuts_;
  std::vector<bool> paused_;
  std::vector<bool> killed_;
  int next_worker_octet_ = 101;
  bool torn_down_ = false;

  void create_network();
  void start_member(int member);
  std::vector<std::string> labels() const;
  void rewrite_partition_table(const std::string& role);
  void wait_ready(int64_t deadline_ms);
  void check_interrupted() const;
  std::string logs_tail(const std::string& role) const;
};

// The nft script that replaces table `table` with one dropping every packet to and from `peers`
// on eth0 (both directions, silently).
std::string docker_partition_script(const std::string& table,
                                    const std::vector<std::string>& peers);

}  // namespace locklab
