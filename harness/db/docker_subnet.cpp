#include "db/docker_subnet.h"

#include <regex>
#include <stdexcept>

#include "run/process.h"

namespace locklab {

std::set<int> subnets_mentioned(const std::string& ip_text) {
  static const std::regex address(R"((^|[^0-9.])10\.89\.([0-9]{1,3})\.[0-9]{1,3})");
  std::set<int> out;
  for (auto it = std::sregex_iterator(ip_text.begin(), ip_text.end(), address);
       it != std::sregex_iterator(); ++it) {
    const int n = std::stoi((*it)[2]);
    if (n <= 255) out.insert(n);
  }
  return out;
}

std::set<int> host_subnets_in_use() {
  std::set<int> used;
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{"ip", "-o", "-4", "addr", "show"},
        std::vector<std::string>{"ip", "-4", "route", "show", "table", "all"}}) {
    const ToolResult r = run_tool(argv);
    if (r.code != 0) throw std::runtime_error("ip failed: " + r.output);
    const std::set<int> found = subnets_mentioned(r.output);
    used.insert(found.begin(), found.end());
  }
  return used;
}

int choose_subnet(const std::set<int>& used, int start) {
  const int offset = ((start - kSubnetFirst) % kSubnetCount + kSubnetCount) % kSubnetCount;
  for (int i = 0; i < kSubnetCount; ++i) {
    const int n = kSubnetFirst + (offset + i) % kSubnetCount;
    if (!used.count(n)) return n;
  }
  return -1;
}

int host_gateways_on(int n) {
  const ToolResult r = run_tool({"ip", "-o", "-4", "addr", "show"});
  const std::string gateway = " 10.89." + std::to_string(n) + ".1/";
  int count = 0;
  for (size_t at = r.output.find(gateway); at != std::string::npos;
       at = r.output.find(gateway, at + 1)) {
    ++count;
  }
  return count;
}

}  // namespace locklab
