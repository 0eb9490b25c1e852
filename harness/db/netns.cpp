#include "db/netns.h"

#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include "run/process.h"

namespace locklab {
namespace {

constexpr const char* kIp = "ip";
constexpr const char* kNft = "nft";

}  // namespace

Network::Network(std::string prefix)
    : NftPartitions(prefix, std::string(kSubnet) + ".0/24", "eth0"),
      run_prefix_(std::move(prefix)),
      bridge_ns_(run_prefix_ + "-br") {
  run_tool_checked({kIp, "netns", "add", bridge_ns_});
  try {
    run_tool_checked({kIp, "-n", bridge_ns_, "link", "set", "lo", "up"});
    run_tool_checked({kIp, "-n", bridge_ns_, "link", "add", "br0", "type", "bridge"});
    run_tool_checked({kIp, "-n", bridge_ns_, "link", "set", "br0", "up"});
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
  run_tool_checked({kIp, "-n", h.netns, "link", "set", "lo", "up"});
  run_tool_checked({kIp, "-n", h.netns, "link", "add", "eth0", "type", "veth", "peer", "name", role,
                    "netns", bridge_ns_});
  run_tool_checked({kIp, "-n", h.netns, "addr", "add", h.address + "/24", "dev", "eth0"});
  run_tool_checked({kIp, "-n", h.netns, "link", "set", "eth0", "up"});
  run_tool_checked({kIp, "-n", bridge_ns_, "link", "set", role, "master", "br0"});
  run_tool_checked({kIp, "-n", bridge_ns_, "link", "set", role, "up"});
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
