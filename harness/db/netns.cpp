#include "db/netns.h"

#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include "run/process.h"

namespace locklab {
namespace {

constexpr const char* kIp = "ip";
constexpr const char* kNft = "nft";

// Runs `commands` (ip commands without "ip", one a line) in namespace `netns` with one ip
// process: a fork and exec per step was most of a run's network build (about 60 ms each on a
// loaded 2-core machine, six steps per host). ip stops at the first failing line and exits
// non-zero; run_tool_checked then throws with the line ip names.
void ip_batch(const std::string& netns, const std::string& commands) {
  run_tool_checked({kIp, "-n", netns, "-batch", "-"}, "", commands);
}

}  // namespace

Network::Network(std::string prefix)
    : NftPartitions(prefix, std::string(kSubnet) + ".0/24", "eth0"),
      run_prefix_(std::move(prefix)),
      bridge_ns_(run_prefix_ + "-br") {
  run_tool_checked({kIp, "netns", "add", bridge_ns_});
  try {
    ip_batch(bridge_ns_, "link set lo up\nlink add br0 type bridge\nlink set br0 up\n");
  } catch (...) {
    teardown();
    throw;
  }
}

Network::~Network() {
  teardown();
}

const Host& Network::add_host(const std::string& role) {
  add_hosts({role});
  return host(role);
}

// Three kinds of ip process, not three per host: one in the root namespace adds every
// namespace, one in the bridge's creates every veth pair (the host end named eth0 straight
// into its namespace) and joins it to br0, and one per host sets its address and links up
// (an address is set from inside the namespace that has the device).
void Network::add_hosts(const std::vector<std::string>& roles) {
  if (next_octet_ + static_cast<int>(roles.size()) - 1 > kHostsMax) {
    throw std::runtime_error("network: more than " + std::to_string(kHostsMax) + " hosts");
  }
  std::vector<Host> hosts;
  for (const std::string& role : roles) {
    hosts.push_back({role, run_prefix_ + "-" + role,
                     std::string(kSubnet) + "." + std::to_string(next_octet_++)});
    register_host(hosts.back());  // throws on a duplicate role, before anything is created
  }
  std::string add_namespaces;
  std::string bridge_steps;
  for (const Host& h : hosts) {
    add_namespaces += "netns add " + h.netns + "\n";
    namespaces_.push_back(h.netns);  // recorded before creating: teardown removes a half-built
    bridge_steps += "link add " + h.role + " type veth peer name eth0 netns " + h.netns + "\n";
    bridge_steps += "link set " + h.role + " master br0\nlink set " + h.role + " up\n";
  }
  run_tool_checked({kIp, "-batch", "-"}, "", add_namespaces);
  ip_batch(bridge_ns_, bridge_steps);
  for (const Host& h : hosts) {
    ip_batch(h.netns, "link set lo up\naddr add " + h.address + "/24 dev eth0\nlink set eth0 up\n");
  }
}

void Network::teardown() {
  if (torn_down_) return;
  torn_down_ = true;
  // One ip process; -force goes on past a namespace already gone. The bridge goes last.
  std::string steps;
  for (const std::string& ns : namespaces_) steps += "netns delete " + ns + "\n";
  steps += "netns delete " + bridge_ns_ + "\n";
  try {
    run_tool({kIp, "-force", "-batch", "-"}, "", steps);
  } catch (const std::exception&) {
    // ip could not be run: fall through to one at a time, each never throwing
  }
  for (const std::string& ns : namespaces_) {
    if (std::filesystem::exists("/var/run/netns/" + ns)) delete_namespace(ns);
  }
  if (std::filesystem::exists("/var/run/netns/" + bridge_ns_)) delete_namespace(bridge_ns_);
  namespaces_.clear();
  clear();
}

bool netns_supported() {
  if (geteuid() != 0) return false;
  try {
    return run_tool({kIp, "-V"}).code == 0 && run_tool({kNft, "--version"}).code == 0;
  } catch (const std::exception&) {
    return false;
  }
}

std::vector<std::string> list_namespaces(std::string_view prefix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/var/run/netns", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(prefix)) out.push_back(name);
  }
  return out;
}

bool delete_namespace(const std::string& name) {
  try {
    return run_tool({kIp, "netns", "delete", name}).code == 0;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace locklab
