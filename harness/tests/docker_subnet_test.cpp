// The choice of a docker run's subnet (db/docker_subnet.h): what `ip` output says is in use, the
// first free subnet from a start (wrapping), and, on the real host, that a link holding a
// 10.89.<n>.1 address takes <n> out of the choice, as another run's bridge would.
//
// What the model leaves out: a real second daemon (a bare bridge stands in for its network) and two
// runs choosing at the same moment (the check after creation, host_gateways_on, is only counted
// here, not raced).
#include "db/docker_subnet.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "run/process.h"

namespace locklab {
namespace {

TEST(DockerSubnet, MentionedSubnetsComeFromAddressesAndRoutes) {
  const std::string addresses =
      "1: lo    inet 127.0.0.1/8 scope host lo\n"
      "7: br-1a2b3c    inet 10.89.120.1/24 brd 10.89.120.255 scope global br-1a2b3c\n"
      "9: eth0    inet 110.89.5.1/24 scope global eth0\n";
  const std::string routes =
      "10.89.121.0/24 dev br-9f proto kernel scope link src 10.89.121.1 linkdown\n"
      "default via 172.16.0.1 dev eth0\n";
  EXPECT_EQ(subnets_mentioned(addresses), (std::set<int>{120}));
  EXPECT_EQ(subnets_mentioned(routes), (std::set<int>{121}));
  EXPECT_TRUE(subnets_mentioned("").empty());
}

TEST(DockerSubnet, ChoiceSkipsUsedOnesAndWraps) {
  EXPECT_EQ(choose_subnet({}, 130), 130);
  EXPECT_EQ(choose_subnet({130, 131}, 130), 132);
  EXPECT_EQ(choose_subnet({249}, 249), 100);  // wraps within [100, 250)
  EXPECT_EQ(choose_subnet({}, 100 + 150 + 7), 107);
  std::set<int> all;
  for (int n = kSubnetFirst; n < kSubnetFirst + kSubnetCount; ++n) all.insert(n);
  EXPECT_EQ(choose_subnet(all, 120), -1);
}

TEST(DockerSubnet, AHostLinkOnASubnetTakesItOutOfTheChoice) {
  if (geteuid() != 0) GTEST_SKIP() << "adding a link needs root";
  const std::string link = "llsub" + std::to_string(getpid() % 100000);
  if (run_tool({"ip", "link", "add", link, "type", "bridge"}).code != 0) {
    GTEST_SKIP() << "no bridge links here";
  }
  const int n = choose_subnet(host_subnets_in_use(), kSubnetFirst + getpid() % kSubnetCount);
  ASSERT_GE(n, 0);
  const std::string gateway = "10.89." + std::to_string(n) + ".1/24";
  const ToolResult added = run_tool({"ip", "addr", "add", gateway, "dev", link});
  run_tool({"ip", "link", "set", link, "up"});
  const std::set<int> used = host_subnets_in_use();
  const int next = choose_subnet(used, n);
  const int gateways = host_gateways_on(n);
  run_tool({"ip", "link", "del", link});
  ASSERT_EQ(added.code, 0) << added.output;
  EXPECT_TRUE(used.count(n)) << "10.89." << n << ".0/24 is on " << link << " but not seen";
  EXPECT_NE(next, n);
  EXPECT_EQ(gateways, 1);
}

}  // namespace
}  // namespace locklab
