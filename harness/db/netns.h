// A private network for one run: a bridge that lives in its own network namespace, and one
// namespace per host (member, worker, the harness's control host) joined to it by a veth pair.
// Addresses are 10.77.0.<n>/24 and exist only inside these namespaces, so concurrent runs (each
// with its own bridge namespace) never collide and the root namespace is never touched.
//
// Names: every namespace is "<prefix>-<role>" (prefix "ll-<harness pid>"), and the partition
// table inside a host is "<prefix>-isolate", so a sweep can find what a dead run left behind.
//
// Partitions (isolating a host, cuts between hosts) are the NftPartitions this class is: nft
// tables inside each host's namespace, filtering eth0 (the bridge) within the subnet
// 10.77.0.0/24.
//
// Thread rules: one thread (the harness's main thread). Needs CAP_NET_ADMIN and CAP_SYS_ADMIN over
// the network and mount namespaces it works in: root, or root of the run's sandbox (run/sandbox.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "db/partitions.h"

namespace locklab {

// A host of the network: netns "<prefix>-<role>", address "10.77.0.<n>".
using Host = NetHost;

class Network : public NftPartitions {
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
  // add_host for several roles at once, in order, with a few ip processes in all (a fork and
  // exec is tens of milliseconds on a loaded machine; a run builds up to a dozen hosts).
  void add_hosts(const std::vector<std::string>& roles);

  // Deletes every namespace of this network (which removes veths, the bridge and nft tables).
  // Never throws; safe to call twice.
  void teardown();

  const std::string& prefix() const { return run_prefix_; }

  static constexpr int kHostsMax = 200;
  static constexpr std::string_view kSubnet = "10.77.0";

 private:
  std::string run_prefix_;
  std::string bridge_ns_;
  std::vector<std::string> namespaces_;  // every host's, for teardown
  int next_octet_ = 1;
  bool torn_down_ = false;
};

// True when this process can build networks in the namespaces it is in now (root, with `ip` and
// `nft` available). A run needs no root: see netns_backend_refusal() (run/sandbox.h).
bool netns_supported();
// Named network namespaces whose name starts with `prefix`.
std::vector<std::string> list_namespaces(std::string_view prefix);
// Deletes one named namespace; false (never throws) when it could not.
bool delete_namespace(const std::string& name);

}  // namespace locklab
