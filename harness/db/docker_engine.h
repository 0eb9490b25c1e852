// The Docker engine a `--cluster docker` run talks to: the client program, the daemon's address,
// and, when no daemon was reachable, a daemon this run started itself.
//
// A daemon the user already runs (DOCKER_HOST, or /var/run/docker.sock answering) is used as it
// is and never reconfigured or stopped. Otherwise Debian's dockerd is started with the
// minimal-footprint flags (no docker0, no iptables rules, ip_forward untouched), its data root,
// exec root and socket in /tmp/locklab-dockerd-<owner>, where <owner> is "<pid>.<start time>" of
// the harness (so a reused pid is not mistaken for the owner). stop() removes what the daemon
// holds and stops it.
//
// Leftovers: every object a run creates carries the labels locklab.run=<run id> and
// locklab.owner=<owner>. sweep_docker_leftovers() finds objects (and started daemons) whose
// owner process is gone — a harness killed by SIGKILL — removes them and stops such daemons.
// The daemon is started by spawn_detached (run/process.h: its own session, no PDEATHSIG, only
// descriptors 0-2): it outlives a SIGKILLed harness
// on purpose, so the sweep can ask it to remove its containers and networks (a daemon that
// stops by itself leaves its networks' host bridges behind).
//
// Thread rules: one thread (the harness's main thread) owns an Engine.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "run/process.h"

namespace locklab {

// "<pid>.<start time in clock ticks>" of a process, or "" when it is gone.
std::string process_identity(pid_t pid);
// process_identity(getpid()), fixed at the first call.
std::string own_identity();
// True when `identity` ("<pid>.<start>") names a process that is still running.
bool identity_alive(const std::string& identity);

class DockerEngine {
 public:
  // Finds a reachable daemon or starts one. Throws std::runtime_error saying what is missing
  // (no client, no dockerd, a DOCKER_HOST that does not answer, a daemon that did not start).
  static DockerEngine acquire();
  // A client for an explicit host ("unix:///path"); starts nothing.
  static DockerEngine attach(const std::string& host);

  DockerEngine(DockerEngine&& other) noexcept;
  DockerEngine& operator=(DockerEngine&&) = delete;
  DockerEngine(const DockerEngine&) = delete;
  ~DockerEngine();  // stop()

  // Runs `docker -H <host> args...`; never throws for a non-zero exit. Throws ToolInterrupted
  // (run/process.h) when the predicate set by set_interrupted() says so while it runs.
  ToolResult run(const std::vector<std::string>& args, int64_t timeout_ms = 60'000) const;
  // Like run(), throwing std::runtime_error with the command line and its output on failure.
  // Returns the output with trailing whitespace removed.
  std::string checked(const std::vector<std::string>& args, int64_t timeout_ms = 60'000) const;
  // Like run(), with stdout and stderr written to the file at `path` whole (run() keeps only the
  // first bytes of the output); the result's output is empty.
  ToolResult run_to_file(const std::vector<std::string>& args, const std::string& path,
                         int64_t timeout_ms = 60'000) const;

  // Makes every command interruptible (nullptr: none is). Set while a set comes up, so that a
  // Ctrl-C does not wait for an image build or a container's creation; cleared for teardown,
  // whose commands must run to the end.
  void set_interrupted(std::function<bool()> interrupted) { interrupted_ = std::move(interrupted); }
  const std::function<bool()>& interrupted() const { return interrupted_; }

  const std::string& host() const { return host_; }
  const std::string& client() const { return client_; }
  bool started_here() const { return dockerd_pid_ > 0; }
  pid_t dockerd_pid() const { return dockerd_pid_; }
  const std::string& root() const { return root_; }

  // A daemon started here: removes every container and network it holds, stops it (SIGTERM,
  // bounded wait, SIGKILL) and deletes its root. A user's daemon: nothing. Never throws; safe
  // to call twice.
  void stop();

  static constexpr const char* kRootPrefix = "/tmp/locklab-dockerd-";

 private:
  DockerEngine(std::string client, std::string host) : client_(std::move(client)), host_(host) {}
  std::string client_;
  std::string host_;
  pid_t dockerd_pid_ = 0;
  std::string root_;
  std::function<bool()> interrupted_;

  static DockerEngine start_daemon(const std::string& client);
};

// The docker client to use: Debian's /usr/bin/docker when present, else `docker` on PATH; ""
// when there is none.
std::string find_docker_client();
// Why Docker cannot run here ("" when it can): no client, no dockerd and no reachable daemon,
// or not root (a started daemon needs root).
std::string docker_unavailable_reason();

// Removes every container, network, volume and image labelled with a locklab.owner that is
// gone, on the daemon `engine` talks to. Never throws.
void remove_orphaned_objects(const DockerEngine& engine);
// Removes the objects labelled locklab.run=<run_id>: containers, networks, volumes and (when
// `images`) images. Never throws.
void remove_run_objects(const DockerEngine& engine, const std::string& run_id, bool images = true);
// Every daemon root /tmp/locklab-dockerd-<owner> whose owner is gone: its objects removed, the
// daemon stopped, the root deleted; on a reachable user daemon, remove_orphaned_objects. Returns
// the roots it cleaned. Never throws.
std::vector<std::string> sweep_docker_leftovers();

}  // namespace locklab
