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
  if (next_octet_ > kHostsMax) throw std::runtime_error("network: more than 200 hosts");
  const Host h{role, run_prefix_ + "-" + role,
               std::string(kSubnet) + "." + std::to_string(next_octet_)};
  register_host(h);  // throws on a duplicate role, before anything is created
  run_tool_checked({kIp, "netns", "add", h.netns});
  namespaces_.push_back(h.netns);  // recorded before configuring: teardown removes a half-built
  ++next_octet_;
  // The host end is created inside the host namespace, so its name is local to it and runs in
  // parallel never collide; the bridge end is named for the role inside the bridge namespace.
  std::string host_steps = "link set lo up\n";
  host_steps += "link add eth0 type veth peer name " + role + " netns " + bridge_ns_ + "\n";
  host_steps += "addr add " + h.address + "/24 dev eth0\n";
  host_steps += "link set eth0 up\n";
  ip_batch(h.netns, host_steps);
  ip_batch(bridge_ns_, "link set " + role + " master br0\nlink set " + role + " up\n");
  return host(role);
}

void Network::teardown() {
  if (torn_down_) return;
  torn_down_ = true;
  for (const std::string& ns : namespaces_) delete_namespace(ns);
  delete_namespace(bridge_ns_);
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
