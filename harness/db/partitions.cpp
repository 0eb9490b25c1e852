#include "db/partitions.h"

#include <cassert>
#include <set>
#include <stdexcept>

#include "run/process.h"

namespace locklab {
namespace {

constexpr const char* kNft = "nft";

std::string nft_isolation_script(const std::string& table, const std::string& subnet,
                                 const std::string& device, IsolationMode mode) {
  // Only the run's link is filtered: the resets that reject generates for our own packets are
  // delivered over lo and must pass.
  const std::string out = "oifname \"" + device + "\" ip daddr " + subnet;
  const std::string in = "iifname \"" + device + "\" ip saddr " + subnet;
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
std::string nft_partition_script(const std::string& table, const std::string& device,
                                 const std::vector<std::string>& peers) {
  std::string set;
  for (const std::string& address : peers) set += (set.empty() ? "" : ", ") + address;
  return "table inet " + table + " {}\ndelete table inet " + table + "\ntable inet " + table +
         " {\n  chain input { type filter hook input priority 0; policy accept; iifname \"" +
         device + "\" ip saddr { " + set +
         " } drop; }\n  chain output { type filter hook output priority 0; "
         "policy accept; oifname \"" +
         device + "\" ip daddr { " + set + " } drop; }\n}\n";
}

Partitions::Cut normalised(const Partitions::Cut& c) {
  return c.first < c.second ? c : Partitions::Cut{c.second, c.first};
}

}  // namespace

NftPartitions::NftPartitions(std::string prefix, std::string subnet, std::string device)
    : prefix_(std::move(prefix)), subnet_(std::move(subnet)), device_(std::move(device)) {}

void NftPartitions::register_host(const NetHost& host) {
  if (hosts_.count(host.role)) throw std::runtime_error("network: duplicate host " + host.role);
  hosts_[host.role] = host;
}

const NetHost& NftPartitions::host(const std::string& role) const {
  return hosts_.at(role);
}

void NftPartitions::rehome(const std::string& role, const std::string& netns) {
  hosts_.at(role).netns = netns;
  down_.erase(role);
  if (const auto it = isolated_.find(role); it != isolated_.end()) {
    run_tool_checked({kNft, "-f", "-"}, netns,
                     nft_isolation_script(isolate_table(), subnet_, device_, it->second));
  }
  rewrite_partition_table(role);
}

void NftPartitions::mark_down(const std::string& role) {
  host(role);
  down_.insert(role);
}

void NftPartitions::clear() {
  hosts_.clear();
  down_.clear();
  isolated_.clear();
  cuts_.clear();
}

void NftPartitions::isolate(const std::string& role, IsolationMode mode) {
  const NetHost& h = host(role);
  if (isolated_.count(role)) return;
  // A down host is isolated when it comes back (rehome writes the table).
  if (!down(role)) {
    run_tool_checked({kNft, "-f", "-"}, h.netns,
                     nft_isolation_script(isolate_table(), subnet_, device_, mode));
  }
  isolated_[role] = mode;
}

void NftPartitions::heal(const std::string& role) {
  const NetHost& h = host(role);
  if (!isolated_.count(role)) return;
  // Forgotten first: a down host's table died with its namespace, and a refusal here must not
  // leave the history's heal undone in the harness's own record.
  isolated_.erase(role);
  if (!down(role)) run_tool_checked({kNft, "delete", "table", "inet", isolate_table()}, h.netns);
}

bool NftPartitions::isolated(const std::string& role) const {
  return isolated_.count(role) > 0;
}

void NftPartitions::cut(const std::vector<Cut>& pairs) {
  for (const Cut& c : pairs) {
    host(c.first);  // throws for an unknown role before anything changes
    host(c.second);
  }
  std::set<std::string> touched;
  for (const Cut& raw : pairs) {
    const Cut c = normalised(raw);
    assert(c.first != c.second);
    ++cuts_[c];
    touched.insert(c.first);
    touched.insert(c.second);
  }
  rewrite_partition_tables(touched);
}

void NftPartitions::uncut(const std::vector<Cut>& pairs) {
  std::set<std::string> touched;
  for (const Cut& raw : pairs) {
    const auto it = cuts_.find(normalised(raw));
    if (it == cuts_.end()) continue;
    if (--it->second == 0) cuts_.erase(it);
    touched.insert(raw.first);
    touched.insert(raw.second);
  }
  rewrite_partition_tables(touched);
}

std::vector<std::string> NftPartitions::cut_peers(const std::string& role) const {
  std::vector<std::string> out;
  for (const auto& [c, count] : cuts_) {
    if (c.first == role) out.push_back(c.second);
    if (c.second == role) out.push_back(c.first);
  }
  return out;
}

void NftPartitions::rewrite_partition_tables(const std::set<std::string>& roles) {
  std::string failures;
  for (const std::string& role : roles) {
    try {
      rewrite_partition_table(role);
    } catch (const std::exception& e) {
      failures += (failures.empty() ? "" : "; ") + role + ": " + e.what();
    }
  }
  if (!failures.empty()) throw std::runtime_error("partition tables not written: " + failures);
}

void NftPartitions::rewrite_partition_table(const std::string& role) {
  if (down(role)) return;  // written by rehome() when it comes back
  const NetHost& h = host(role);
  std::vector<std::string> addresses;
  for (const std::string& peer : cut_peers(role)) addresses.push_back(host(peer).address);
  if (addresses.empty()) {
    run_tool({kNft, "delete", "table", "inet", partition_table()}, h.netns);  // absent is fine
    return;
  }
  run_tool_checked({kNft, "-f", "-"}, h.netns,
                   nft_partition_script(partition_table(), device_, addresses));
}

}  // namespace locklab
