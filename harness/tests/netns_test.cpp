// Network: real namespaces, a real bridge, real TCP across it, and nft isolation. Needs root.
#include "db/netns.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "run/process.h"

namespace locklab {
namespace {

constexpr const char* kPython = "/usr/bin/python3";

// Connects from `netns` to address:7000 and prints OK, REFUSED or TIMEOUT.
std::string try_connect(const std::string& netns, const std::string& address) {
  const std::string script =
      "import socket\n"
      "s = socket.socket(); s.settimeout(1.0)\n"
      "try:\n"
      "  s.connect(('" +
      address +
      "', 7000)); print('OK')\n"
      "except ConnectionRefusedError: print('REFUSED')\n"
      "except OSError: print('TIMEOUT')\n";
  return run_tool({kPython, "-c", script}, netns).output;
}

class NetworkTest : public testing::Test {
 protected:
  void SetUp() override {
    if (!netns_supported()) GTEST_SKIP() << "needs root with ip and nft to build namespaces";
    prefix_ = "ll-" + std::to_string(getpid()) + "t";
  }
  std::string prefix_;
};

// Waits (bounded) until a listener in `server` accepts connections from `client`.
bool wait_reachable(const std::string& client, const std::string& address) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (try_connect(client, address) == "OK\n") return true;
  }
  return false;
}

TEST_F(NetworkTest, HostsTalkAcrossTheBridgeAndIsolationCutsThem) {
  Supervisor supervisor;
  Network net(prefix_);
  const Host& server = net.add_host("m0");
  const Host& client = net.add_host("w1");
  EXPECT_EQ(server.netns, prefix_ + "-m0");
  EXPECT_EQ(server.address, "10.77.0.1");
  EXPECT_EQ(client.address, "10.77.0.2");
  EXPECT_EQ(list_namespaces(prefix_).size(), 3u);

  const std::string listener =
      "import socket\n"
      "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
      "s.bind(('" +
      server.address +
      "', 7000)); s.listen(64)\n"
      "while True:\n"
      "  c, _ = s.accept(); c.close()\n";
  supervisor.spawn({{kPython, "-c", listener}, server.netns, ""});
  ASSERT_TRUE(wait_reachable(client.netns, server.address));

  net.isolate("w1", IsolationMode::kReject);
  EXPECT_TRUE(net.isolated("w1"));
  EXPECT_EQ(try_connect(client.netns, server.address), "REFUSED\n");
  EXPECT_NE(run_tool({"nft", "list", "table", "inet", net.isolate_table()}, client.netns).code, 1);
  net.heal("w1");
  EXPECT_EQ(try_connect(client.netns, server.address), "OK\n");

  net.isolate("w1", IsolationMode::kDrop);
  EXPECT_EQ(try_connect(client.netns, server.address), "TIMEOUT\n");
  net.heal("w1");
  EXPECT_FALSE(net.isolated("w1"));
  EXPECT_EQ(try_connect(client.netns, server.address), "OK\n");

  supervisor.stop_all(1000);
  net.teardown();
  EXPECT_TRUE(list_namespaces(prefix_).empty());
}

TEST_F(NetworkTest, DuplicateHostIsAnError) {
  Network net(prefix_);
  net.add_host("w1");
  EXPECT_THROW(net.add_host("w1"), std::runtime_error);
  EXPECT_THROW(net.host("w9"), std::out_of_range);
}

TEST_F(NetworkTest, DestructorRemovesEverything) {
  {
    Network net(prefix_);
    net.add_host("w1");
    net.isolate("w1", IsolationMode::kDrop);
  }
  EXPECT_TRUE(list_namespaces(prefix_).empty());
}

TEST(NetworkNames, RootNamespaceNeverGetsTheSubnet) {
  const std::string addrs = run_tool({"ip", "-o", "addr"}).output;
  EXPECT_EQ(addrs.find(std::string(Network::kSubnet) + "."), std::string::npos) << addrs;
}

}  // namespace
}  // namespace locklab
