// Target: the server lockbench measures against. Either a mongosim replica set (one or three
// members) that lockbench starts through the test kit, or any MongoDB given by --uri.
//
// Snapshots read serverStatus (opcounters and metrics.commands.<name>.total) of every member of
// a mongosim set, each over a direct connection, or of the server that the --uri's primary
// selection picks. Every snapshot sends one serverStatus per member, which the server counts
// (itself included) — CommandCount() subtracts them.
// Server CPU is the utime + stime of the mongosim processes (/proc/<pid>/stat); unknown (nullopt)
// for --uri.
// Thread rules: one owner thread (the test kit's rule for the set it starts); snapshot() and
// cpu_seconds() from that thread while no cell runs them elsewhere.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

typedef struct _mongoc_client_t mongoc_client_t;

namespace locklab::testkit {
class ReplicaSet;
}

namespace lockbench {

struct ServerSnapshot {
  std::map<std::string, int64_t> opcounters;  // summed over members
  std::map<std::string, int64_t> commands;    // metrics.commands.<name>.total, summed
  int status_calls = 0;                       // serverStatus calls this snapshot made
};

// What the server counted between two snapshots, split by who sent it.
struct ServerCount {
  int64_t opcounters_sum = 0;    // every kind of opcounters, after - before
  int64_t own_status_calls = 0;  // lockbench's serverStatus (the later snapshot's)
  int64_t monitoring = 0;        // hello / isMaster: driver handshakes and server monitoring
  int64_t members_internal = 0;  // replSet* commands the members send each other
  int64_t lock_commands = 0;     // the rest: what the lock clients sent
  std::map<std::string, int64_t> per_command;  // metrics.commands deltas
};

ServerCount count_between(const ServerSnapshot& before, const ServerSnapshot& after);

class Target {
 public:
  static std::unique_ptr<Target> start_mongosim(int members);
  static std::unique_ptr<Target> connect(const std::string& uri);
  ~Target();
  Target(const Target&) = delete;
  Target& operator=(const Target&) = delete;

  std::string describe() const;  // "mongosim, 1 member" / "--uri"
  int members() const { return members_; }
  bool is_mongosim() const { return set_ != nullptr; }
  // A URI for the lock clients, with `appname` set.
  std::string client_uri(const std::string& appname) const;

  ServerSnapshot snapshot() const;
  std::optional<double> cpu_seconds() const;

 private:
  Target() = default;
  std::unique_ptr<locklab::testkit::ReplicaSet> set_;
  std::string uri_;  // --uri
  int members_ = 1;
  std::vector<mongoc_client_t*> status_clients_;  // one per member (--uri: one)
};

}  // namespace lockbench
