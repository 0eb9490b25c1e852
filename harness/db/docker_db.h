// The database as a replica set (DbConfig::set_name, "rs0") in Docker containers (`--cluster docker
// [--image IMAGE]`).
//
// Layout: one internal network per run (`--internal`: no route out), a subnet of its own
// (10.89.<n>.0/24, one the host does not use yet: db/docker_subnet.h) and fixed addresses:
// members m<i> at .11+i, worker hosts at .101+k. A fixed address also fixes a container's MAC
// (docker derives it from the address), so peers' ARP entries stay right across kill/start. The
// host holds the bridge's gateway (.1) and reaches every container directly: admin commands go out
// from the harness's own namespace.
//
// Workers: every worker has a container of its own (a placeholder that only sleeps), and the
// harness spawns the worker process inside that container's network namespace
// (worker_netns() = /proc/<pid>/ns/net). So each worker has its own address and every partition
// shape stays possible, one worker cut off from one member included (a cut is an nft table in a
// namespace, and needs each side to have its own); the worker process stays the harness's
// child (signals, faketime, exit status) and writes its history file on the host.
//
// Members: `<program> --replSet <set name> --bind_ip <address> --port 27017 --dbpath /data/db`, the
// dbpath bind-mounted from <data_dir>/m<i>, so kill + start recovers the data. The image is
// built from the local programs (db/docker_image.h: mongosim, with the clock lever
// mongosimSetClockOffset) unless one is given with its kind (--image mongo:7.0 --image-kind
// mongod: program mongod, the same command line plus enableTestCommands for fail-command; member
// clock faults through libfaketime when the image has it and it is named (faketime_library:
// LD_PRELOAD and a timestamp file bind-mounted from <data_dir>/m<i>-clock), else refused).
//
// Faults: pause = docker pause (the cgroup freezer: every process of the container), kill =
// docker kill (SIGKILL, nothing flushed), restart = docker start (a new network namespace: the
// partition hooks are rehomed there, so cuts in force survive), partitions = NftPartitions over
// the containers' namespaces, step-downs and freezes by command (Db's admin), reply delays by a
// relay per worker inside its host container's namespace (db/reply_relays.h, as on netns; needs
// the run's Supervisor: the relays are the harness's children).
//
// Members that end on their own (a crash, a `docker kill` from outside) are noticed through the
// daemon's "die" events (db/docker_events.h): poll_ended_members() reports them, running() says
// false from then on. The ends the harness causes (kill_member, stop) are counted beforehand
// and not reported. A worker's host container that ends takes the worker's network with it:
// poll_ended_worker_hosts() reports it, and the run fails.
//
// Cleanup: every container, the network and the images built here carry locklab.run=<run id>
// and locklab.owner=<harness identity>; teardown() removes them and stops a daemon started here;
// sweep_docker_leftovers() (db/docker_engine.h) removes what a SIGKILLed run left.
//
// Thread rules: one thread (the harness's main thread) calls every method.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/db.h"
#include "db/docker_engine.h"
#include "db/docker_events.h"
#include "db/partitions.h"
#include "db/reply_relays.h"

namespace locklab {

enum class ImageKind { kMongosim, kMongod };
// "mongosim" or "mongod"; std::invalid_argument naming the text and the kinds otherwise.
ImageKind parse_image_kind(const std::string& text);

struct DockerDbOptions {
  // "" = build locklab/mongosim:<run id> from `programs` with `dockerfile`.
  std::string image;
  std::vector<std::string> programs;  // mongosim first; others ride along (locklab-worker)
  std::string dockerfile;             // docker/Dockerfile
  // The image's member program: mongosim (the clock lever) or mongod. Required with `image`;
  // unset without one: mongosim. The image built here with kind mongod runs mongosim under the
  // name mongod, with the host's libfaketime inside (`faketime_library`): the harness's own test
  // of the mongod image path, clocks included, as `--mongod` with mongosim is for processes.
  std::optional<ImageKind> kind;
  // Kind mongod: libfaketime's library as a member sees it (inside the image), which makes
  // member clock faults possible (LD_PRELOAD, a timestamp file bind-mounted from the run's
  // directory); "" = the image has none and member clock faults are refused.
  std::string faketime_library;
  // The run's supervisor, which spawns the reply relays (reply-delay) and the "die" events
  // watcher; nullptr: reply-delay is refused and the watcher is started by a Supervisor of the
  // DockerDb's own (a DockerDb used without a run: nothing else reaps children there). Not
  // owned; outlives the DockerDb.
  Supervisor* supervisor = nullptr;
};

class DockerDb : public Db {
 public:
  static constexpr int kMembersMax = 7;
  static constexpr int kWorkersMax = 90;

  // Validates only (no side effects): throws std::invalid_argument for a member or worker count
  // out of range, no image and no programs to build one from, or an image without its kind.
  DockerDb(DbConfig config, DockerDbOptions options);
  ~DockerDb() override;

  std::string name() const override { return "docker"; }
  std::string member_program() const override;
  std::optional<std::string> supports(FaultKind kind) const override;

  void start() override;
  void stop(int64_t grace_ms = 3000) override;
  void teardown() override;

  std::string host(int member) const override;
  std::string uri(const std::string& app_name) const override;
  std::string worker_netns(const std::string& worker) const override;

  void kill_member(int member) override;
  void restart_member(int member) override;
  void pause_member(int member) override;
  void resume_member(int member) override;
  bool running(int member) const override;
  std::vector<MemberEnd> poll_ended_members() override;
  std::vector<std::string> poll_ended_worker_hosts() override;
  bool paused(int member) const override { return paused_.at(member); }
  int64_t set_clock_offset(int member, int64_t offset_ms) override;
  int64_t clock_offset(int member) const override { return clock_offsets_ms_.at(member); }
  Partitions* partitions() override { return nft_.get(); }
  ReplyDelays* reply_delays() override { return relays_.get(); }
  std::optional<std::string> helper_of(pid_t pid) const override;

  // For tests and the run's outputs.
  std::string container(const std::string& role) const;
  std::string network() const { return network_; }
  const std::string& image() const { return image_; }
  const std::string& run_id() const { return run_id_; }
  const DockerEngine* engine() const { return engine_ ? &*engine_ : nullptr; }
  // The network namespace of a running member's container. Throws when it is not running.
  std::string netns_of_member(int member) const { return netns_of("m" + std::to_string(member)); }
  // Writes every container's output to <dir>/<role>.log. Never throws.
  void save_logs(const std::string& dir) const;

 protected:
  std::string log_tail(int member) const override;

 private:
  DockerDbOptions options_;
  bool mongosim_;
  std::string run_id_;
  std::string network_;
  std::string image_;
  bool image_built_here_ = false;
  std::optional<DockerEngine> engine_;
  std::unique_ptr<NftPartitions> nft_;
  std::unique_ptr<ReplyRelays> relays_;  // with reply-delay: one relay per worker
  // The watcher's supervisor when options_.supervisor is nullptr; declared before events_ so
  // that it outlives the watcher it reaps.
  std::unique_ptr<Supervisor> own_supervisor_;
  std::string subnet_prefix_;  // "10.89.<n>"
  std::vector<bool> paused_;
  std::vector<bool> killed_;
  std::vector<int64_t> clock_offsets_ms_;
  bool torn_down_ = false;
  bool stopping_ = false;  // stop() ran: member ends are the harness's own from then on
  // The die events, read on every running() and poll_ended_members() (hence mutable: reading
  // them changes what the backend knows, not what it is).
  mutable std::unique_ptr<DockerEvents> events_;
  mutable std::vector<int> own_ends_;  // per member: ends the harness caused, not yet seen
  mutable std::vector<std::optional<std::string>> ended_;  // per member: how it ended itself
  mutable std::vector<MemberEnd> unreported_;
  mutable std::vector<std::string> unreported_hosts_;  // worker hosts that ended, as lines

  std::string address(const std::string& role) const;
  std::vector<std::string> labels() const;
  void create_network();
  // <log_dir>/docker-network.txt: the network's name, id, host bridge (br-<id>) and subnet, so
  // a person (or a test) can tell this run's bridge from others'. Best effort.
  void record_network() const;
  // Builds the image when none was given, creates the network and every container; `step` says
  // which of these it is at, for the message of an interruption.
  void create_containers(std::string& step);
  void start_member(int member);
  void start_relays();
  bool faketime() const;  // a mongod member under libfaketime
  // Throws std::runtime_error, quoting the loader, when a member runs without the library.
  void check_faketime_loaded() const;
  std::string clock_dir(int member) const;  // on the host; holds its timestamp file
  void start_worker_host(const std::string& worker, int index);
  std::string netns_of(const std::string& role) const;  // /proc/<pid>/ns/net
  pid_t container_pid(const std::string& role) const;
  void read_events() const;
};

}  // namespace locklab
