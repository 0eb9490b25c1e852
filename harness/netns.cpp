#include "netns.h"

#include <unistd.h>

#include <cassert>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "process.h"

namespace locklab {
namespace {

constexpr const char* kIp = "ip";
constexpr const char* kNft = "nft";

std::string nft_isolation_script(const std::string& table, IsolationMode mode) {
  // Only eth0 (the bridge) is filtered: the resets that reject generates for our own packets
  // are delivered over lo and must pass.
  const std::string net = std::string(Network::kSubnet) + ".0/24";
  const std::string out = "oifname \"eth0\" ip daddr " + net;
  const std::string in = "iifname \"eth0\" ip saddr " + net;
  const std::string out_rule =
      mode == IsolationMode::kReject
          ? out + " meta l4proto tcp reject with tcp reset; " + out + " drop;"
          : out + " drop;";
  return "table inet " + table + " {\n" +
         "  chain input { type filter hook input priority 0; policy accept; " + in + " drop; }\n" +
         "  chain output { type filter hook output priority 0; policy accept; " + out_rule +
         " }\n}\n";
}

// Replaces the partition table in one nft transaction: declaring an existing table is a no-op,
// so "declare, delete, define" works whether or not it was there.
std::string nft_partition_script(const std::string& table, const std::vector<std::string>& peers) {
  std::string set;
  for (const std::string& address : peers) set += (set.empty() ? "" : ", ") + address;
  return "table inet " + table + " {}\ndelete table inet " + table + "\ntable inet " + table +
         " {\n  chain input { type filter hook input priority 0; policy accept; iifname \"eth0\" "
         "ip saddr { " +
         set +
         " } drop; }\n  chain output { type filter hook output priority 0; "
         "policy accept; oifname \"eth0\" ip daddr { " +
         set + " } drop; }\n}\n";
}

Network::Cut normalised(const Network::Cut& c) {
  return c.first < c.second ? c : Network::Cut{c.second, c.first};
}

}  // namespace

Network::Network(std::string prefix) : prefix_(std::move(prefix)), bridge_ns_(prefix_ + "-br") {
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
  if (hosts_.count(role)) throw std::runtime_error("network: duplicate host " + role);
  if (next_octet_ > kHostsMax) throw std::runtime_error("network: more than 200 hosts");
  Host h{role, prefix_ + "-" + role, std::string(kSubnet) + "." + std::to_string(next_octet_)};
  run_tool_checked({kIp, "netns", "add", h.netns});
  hosts_[role] = h;  // recorded before configuring, so teardown removes a half-built host
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
  return hosts_[role];
}

const Host& Network::host(const std::string& role) const {
  return hosts_.at(role);
}

void Network::isolate(const std::string& role, IsolationMode mode) {
  const Host& h = host(role);
  if (isolated_.count(role)) return;
  run_tool_checked({kNft, "-f", "-"}, h.netns, nft_isolation_script(isolate_table(), mode));
  isolated_[role] = mode;
}

void Network::heal(const std::string& role) {
  const Host& h = host(role);
  if (!isolated_.count(role)) return;
  run_tool_checked({kNft, "delete", "table", "inet", isolate_table()}, h.netns);
  isolated_.erase(role);
}

bool Network::isolated(const std::string& role) const {
  return isolated_.count(role) > 0;
}

void Network::cut(const std::vector<Cut>& pairs) {
  std::set<std::string> touched;
  for (const Cut& raw : pairs) {
    const Cut c = normalised(raw);
    host(c.first);  // throws for an unknown role before anything changes
    host(c.second);
    assert(c.first != c.second);
    ++cuts_[c];
    touched.insert(c.first);
    touched.insert(c.second);
  }
  for (const std::string& role : touched) rewrite_partition_table(role);
}

void Network::uncut(const std::vector<Cut>& pairs) {
  std::set<std::string> touched;
  for (const Cut& raw : pairs) {
    const auto it = cuts_.find(normalised(raw));
    if (it == cuts_.end()) continue;
    if (--it->second == 0) cuts_.erase(it);
    touched.insert(raw.first);
    touched.insert(raw.second);
  }
  for (const std::string& role : touched) rewrite_partition_table(role);
}

std::vector<std::string> Network::cut_peers(const std::string& role) const {
  std::vector<std::string> out;
  for (const auto& [c, count] : cuts_) {
    if (c.first == role) out.push_back(c.second);
    if (c.second == role) out.push_back(c.first);
  }
  return out;
}

void Network::rewrite_partition_table(const std::string& role) {
  const Host& h = host(role);
  std::vector<std::string> addresses;
  for (const std::string& peer : cut_peers(role)) addresses.push_back(host(peer).address);
  if (addresses.empty()) {
    run_tool({kNft, "delete", "table", "inet", partition_table()}, h.netns);  // absent is fine
    return;
  }
  run_tool_checked({kNft, "-f", "-"}, h.netns, nft_partition_script(partition_table(), addresses));
}

void Network::teardown() {
  if (torn_down_) return;
  torn_down_ = true;
  for (const auto& [role, h] : hosts_) delete_namespace(h.netns);
  delete_namespace(bridge_ns_);
  hosts_.clear();
  isolated_.clear();
  cuts_.clear();
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
