// The partition hooks: what the nemesis asks of a backend to cut hosts of a run off from each
// other, and the one implementation every backend so far uses (nft tables written inside each
// host's network namespace, entered from the harness).
//
// Hosts are named by role: members "m0".."m<N-1>", workers "w1".."w<N>". A cut is an unordered
// pair of roles that cannot reach each other (both directions, silently dropped). Cuts are
// counted, so overlapping fault windows compose and an uncut removes only its own. Isolating a
// role cuts it from every address of the run's subnet (mode drop: silent, as a real partition;
// reject: TCP resets, so connections fail at once).
//
// A backend that runs its hosts in containers provides, per role, the network namespace entered
// from the host (an absolute path such as /proc/<container pid>/ns/net) and the address peers
// use; when a container is restarted its namespace is a new one: rehome() moves the role there
// and writes its tables again, so a partition in force survives a member's restart. A host whose
// process is down (a killed container: its namespace path names a dead process) is marked down():
// faults still count its cuts and isolation, but nothing is written for it until rehome().
//
// Every change tries every host it concerns and then reports every failure at once: a host that
// refuses does not leave the hosts after it with stale tables.
//
// Thread rules: one thread (the harness's main thread). Writing nft tables needs CAP_NET_ADMIN
// over the namespaces concerned (root, or root of the run's sandbox).
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace locklab {

enum class IsolationMode { kDrop, kReject };

// The levers partition faults pull. Every method throws std::out_of_range for an unknown role
// (before changing anything) and std::runtime_error naming the failing command when the
// namespace refuses a change.
class Partitions {
 public:
  using Cut = std::pair<std::string, std::string>;  // two roles
  virtual ~Partitions() = default;

  // Cuts `role` off from every other host of the run (idempotent); heal() restores it.
  virtual void isolate(const std::string& role, IsolationMode mode) = 0;
  virtual void heal(const std::string& role) = 0;
  virtual bool isolated(const std::string& role) const = 0;
  // Adds (or removes) one count of every pair; a pair is cut while its count is above 0.
  // uncut() of a pair that is not cut does nothing.
  virtual void cut(const std::vector<Cut>& pairs) = 0;
  virtual void uncut(const std::vector<Cut>& pairs) = 0;
  // The roles `role` is cut from now.
  virtual std::vector<std::string> cut_peers(const std::string& role) const = 0;
};

// One host as the nft hooks see it.
struct NetHost {
  std::string role;     // "m0", "w1", "ctl"
  std::string netns;    // a name under /var/run/netns, or an absolute path to a namespace file
  std::string address;  // the IPv4 address peers reach it at
};

// Partitions as nft tables inside each host's namespace: table "<prefix>-isolate" for
// isolation, "<prefix>-part" for cuts, filtering only `device` (the run's link; loopback stays
// open, so the resets reject generates reach our own sockets). `subnet` ("10.77.0.0/24") is
// what isolation cuts a host from.
class NftPartitions : public Partitions {
 public:
  NftPartitions(std::string prefix, std::string subnet, std::string device = "eth0");

  // Registers a host (before any fault names it). Throws on a duplicate role.
  void register_host(const NetHost& host);
  const NetHost& host(const std::string& role) const;  // throws std::out_of_range
  // The host's namespace changed (its container restarted): records the new one and writes the
  // role's isolation and partition tables there again.
  void rehome(const std::string& role, const std::string& netns);
  // The host's process is gone (killed): its tables are no longer written (its namespace died
  // with it) until rehome(). Throws std::out_of_range for an unknown role.
  void mark_down(const std::string& role);
  bool down(const std::string& role) const { return down_.count(role) > 0; }
  // Forgets every host, cut and isolation (the namespaces, and their tables, are the backend's
  // to delete). Never throws.
  void clear();

  void isolate(const std::string& role, IsolationMode mode) override;
  void heal(const std::string& role) override;
  bool isolated(const std::string& role) const override;
  void cut(const std::vector<Cut>& pairs) override;
  void uncut(const std::vector<Cut>& pairs) override;
  std::vector<std::string> cut_peers(const std::string& role) const override;

  std::string isolate_table() const { return prefix_ + "-isolate"; }
  std::string partition_table() const { return prefix_ + "-part"; }

 private:
  std::string prefix_;
  std::string subnet_;
  std::string device_;
  std::map<std::string, NetHost> hosts_;
  std::map<std::string, IsolationMode> isolated_;
  std::map<Cut, int> cuts_;     // normalised (first < second) -> how many windows cut it
  std::set<std::string> down_;  // roles whose namespace is gone until rehome()
  void rewrite_partition_table(const std::string& role);
  // Rewrites each role's partition table, trying all; throws one error naming every failure.
  void rewrite_partition_tables(const std::set<std::string>& roles);
};

}  // namespace locklab
