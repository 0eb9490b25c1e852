// A private network for one run: a bridge that lives in its own network namespace, and one
// namespace per host (member, worker, the harness's control host) joined to it by a veth pair.
// Addresses are 10.77.0.<n>/24 and exist only inside these namespaces, so concurrent runs (each
// with its own bridge namespace) never collide and the root namespace is never touched.
//
// Names: every namespace is "<prefix>-<role>" (prefix "ll-<harness pid>"), and the partition
// table inside a host is "<prefix>-isolate", so a sweep can find what a dead run left behind.
//
// Isolation (the isolate-worker fault) is an nft table inside the isolated host's namespace that
// cuts it from every other address of the bridge. Mode "drop" discards packets silently:
// established TCP connections stay open until the driver's timeouts fire, which is what a real
// partition does. Mode "reject" answers with a TCP reset, so connections fail at once.
//
// Partitions between hosts (the member partitions: isolate a member, halves, ring, bridge, a
// worker cut from some members) are "cuts": unordered pairs of hosts that cannot reach each
// other. Each host with at least one cut holds the table "<prefix>-part" dropping packets to and
// from its cut peers' addresses (silently, both directions). Cuts are counted, so overlapping
// fault windows compose and a heal removes only its own.
//
// Thread rules: one thread (the harness's main thread). Needs CAP_NET_ADMIN and CAP_SYS_ADMIN over
// the network and mount namespaces it works in: root, or root of the run's sandbox (sandbox.h).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace locklab {

enum class IsolationMode { kDrop, kReject };

struct Host {
  std::string role;     // "m0", "w1", "ctl"
  std::string netns;    // "<prefix>-<role>"
  std::string address;  // "10.77.0.<n>"
};

class Network {
 public:
  // Creates the bridge namespace "<prefix>-br". Throws std::runtime_error with the failing
  // command and its output.
  explicit Network(std::string prefix);
  ~Network();  // teardown()
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // Creates "<prefix>-<role>" with lo and eth0 up, its veth peer on the bridge, and the next
  // free address. At most kHostsMax hosts. Throws on failure or a duplicate role.
  const Host& add_host(const std::string& role);
  const Host& host(const std::string& role) const;  // throws std::out_of_range

  // Cuts `role` off from every other host of the bridge (idempotent); heal() restores it.
  void isolate(const std::string& role, IsolationMode mode);
  void heal(const std::string& role);
  bool isolated(const std::string& role) const;

  using Cut = std::pair<std::string, std::string>;  // two roles
  // Adds (or removes) one count of every pair and rewrites the tables of the hosts concerned.
  // Throws std::out_of_range for an unknown role, std::runtime_error when nft fails.
  void cut(const std::vector<Cut>& pairs);
  void uncut(const std::vector<Cut>& pairs);
  // The roles `role` is cut from now.
  std::vector<std::string> cut_peers(const std::string& role) const;

  // Deletes every namespace of this network (which removes veths, the bridge and nft tables).
  // Never throws; safe to call twice.
  void teardown();

  const std::string& prefix() const { return prefix_; }
  std::string isolate_table() const { return prefix_ + "-isolate"; }
  std::string partition_table() const { return prefix_ + "-part"; }

  static constexpr int kHostsMax = 200;
  static constexpr std::string_view kSubnet = "10.77.0";

 private:
  std::string prefix_;
  std::string bridge_ns_;
  std::map<std::string, Host> hosts_;
  std::map<std::string, IsolationMode> isolated_;
  std::map<Cut, int> cuts_;  // normalised (first < second) -> how many windows cut it
  void rewrite_partition_table(const std::string& role);
  int next_octet_ = 1;
  bool torn_down_ = false;
};

// True when this process can build networks in the namespaces it is in now (root, with `ip` and
// `nft` available). A run needs no root: see netns_backend_refusal() (sandbox.h).
bool netns_supported();
// Named network namespaces whose name starts with `prefix`.
std::vector<std::string> list_namespaces(std::string_view prefix);
// Deletes one named namespace; false (never throws) when it could not.
bool delete_namespace(const std::string& name);

}  // namespace locklab
