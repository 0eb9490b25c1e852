// ReplyRelays: the reply-delay lever of the netns backend, on real namespaces, the real
// locklab-relay program, real nft redirect rules and real TCP. Needs root (skipped otherwise).
//
// What the model leaves out: the member is a one-shot Python server, not mongosim (the scenarios
// must-fail/distributedlock-stopwatch-after-reply.toml and its twin run the whole thing with a
// driver); one connection at a time; the relay's own buffering limits are the relay's tests'.
#include "db/reply_relays.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "db/netns.h"
#include "programs.h"
#include "run/process.h"
#include "temp_dir.h"
#include "testkit.h"

namespace locklab {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPython = "/usr/bin/python3";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(ReplyRelayScript, LetsMarkedPacketsThroughBeforeRedirectingTheMembersPort) {
  const std::string script = nft_relay_script("ll-1-relay", "10.77.0.0/24", 27017, 27999, 0x4c4c);
  const size_t mark = script.find("meta mark 19532 return");
  const size_t redirect = script.find("ip daddr 10.77.0.0/24 tcp dport 27017 redirect to :27999");
  ASSERT_NE(mark, std::string::npos) << script;
  ASSERT_NE(redirect, std::string::npos) << script;
  EXPECT_LT(mark, redirect) << "the relay's own connections must not be sent back to it";
  EXPECT_NE(script.find("type nat hook output"), std::string::npos) << script;
}

class ReplyRelaysTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!netns_supported()) GTEST_SKIP() << "needs root with ip and nft to build namespaces";
    prefix_ = "ll-" + std::to_string(getpid()) + "r";
  }
  static std::string relay_program() { return std::string(LOCKLAB_BIN_DIR) + "/locklab-relay"; }
  std::string prefix_;
  testkit::TempDir dir_;
};

// A member that answers one "ping" with "pong", printing the peer's address and, as its last
// line, the monotonic time it sent the reply (namespaces share CLOCK_MONOTONIC).
std::string pong_server(const std::string& address) {
  return "import socket, time\n"
         "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
         "s.bind(('" +
         address +
         "', 27017)); s.listen(8); print('listening', flush=True)\n"
         "c, a = s.accept(); c.recv(16); print('peer', a[0], flush=True)\n"
         "t = time.monotonic(); c.sendall(b'pong'); print('sent', t, flush=True)\n"
         "c.close()\n";
}

// From the worker's namespace: connects to the member's address and port 27017, sends "ping",
// prints the reply and the monotonic time it arrived.
std::string ping_client(const std::string& address) {
  return "import socket, time\n"
         "for _ in range(200):\n"
         "  try:\n"
         "    c = socket.create_connection(('" +
         address +
         "', 27017), timeout=5); break\n"
         "  except OSError: time.sleep(0.01)\n"
         "c.sendall(b'ping'); r = c.recv(16); t = time.monotonic()\n"
         "print(r.decode(), t)\n";
}

TEST_F(ReplyRelaysTest, RepliesToTheWorkerArriveNoEarlierThanTheDelayThroughItsRelay) {
  if (!fs::exists(relay_program())) GTEST_SKIP() << "locklab-relay not built";
  Supervisor supervisor;
  Network net(prefix_);
  const Host& member = net.add_host("m0");
  const Host& worker = net.add_host("w1");
  ReplyRelays relays(supervisor, relay_program(), prefix_, dir_.path(), dir_.path(),
                     "10.77.0.0/24");
  relays.start(worker);
  const std::string server_log = dir_.path() + "/server.log";
  supervisor.spawn({{kPython, "-c", pong_server(member.address)}, member.netns, server_log});
  relays.add_delay("w1", 400);
  // The worker's connect completes at its relay whether or not the member listens yet (the
  // relay then resets it): the ping goes only once the member says it listens.
  ASSERT_TRUE(testkit::poll_until(testkit::after(std::chrono::seconds(15)), [&] {
    return read_text(server_log).find("listening") != std::string::npos;
  })) << read_text(server_log);

  const std::string reply =
      run_tool({kPython, "-c", ping_client(member.address)}, worker.netns, "", 20'000).output;
  ASSERT_EQ(reply.rfind("pong ", 0), 0u) << reply << read_text(server_log);
  const double received_s = std::stod(reply.substr(5));
  supervisor.poll();
  const std::string log = read_text(server_log);
  // The member sees the worker's own address: the relay connects on from inside its namespace.
  EXPECT_NE(log.find("peer " + worker.address), std::string::npos) << log;
  const size_t sent_at = log.find("sent ");
  ASSERT_NE(sent_at, std::string::npos) << log;
  const double sent_s = std::stod(log.substr(sent_at + 5));
  EXPECT_GE(received_s - sent_s, 0.4) << "the reply was not held: " << reply << log;
  EXPECT_EQ(read_text(dir_.path() + "/relay-w1.delay"), "400\n");
  // Overlapping windows: the longest open one is in force; closing the inner one does not end
  // the outer one's delay (it used to set 0 while the outer window was still open).
  relays.add_delay("w1", 1500);
  EXPECT_EQ(read_text(dir_.path() + "/relay-w1.delay"), "1500\n");
  relays.remove_delay("w1", 1500);
  EXPECT_EQ(read_text(dir_.path() + "/relay-w1.delay"), "400\n");
  relays.remove_delay("w1", 400);
  EXPECT_EQ(read_text(dir_.path() + "/relay-w1.delay"), "0\n");
  EXPECT_THROW(relays.remove_delay("w1", 400), std::logic_error);
  relays.stop(2000);
  net.teardown();
}

TEST_F(ReplyRelaysTest, ARelayThatCannotListenIsAnErrorNamingTheWorker) {
  Supervisor supervisor;
  Network net(prefix_);
  net.add_host("m0");
  const Host& worker = net.add_host("w1");
  // /bin/false ends at once without the "ready" line.
  ReplyRelays relays(supervisor, "/bin/false", prefix_, dir_.path(), dir_.path(), "10.77.0.0/24");
  try {
    relays.start(worker);
    FAIL() << "a relay that ended was taken as listening";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the reply relay of w1 ended before it listened"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(relays.add_delay("w2", 10), std::out_of_range);
  EXPECT_THROW(relays.add_delay("w1", 0), std::invalid_argument);
  net.teardown();
}

TEST_F(ReplyRelaysTest, OwnerOfNamesTheRelayAndStopEndsIt) {
  if (!fs::exists(relay_program())) GTEST_SKIP() << "locklab-relay not built";
  Supervisor supervisor;
  Network net(prefix_);
  net.add_host("m0");
  const Host& worker = net.add_host("w1");
  ReplyRelays relays(supervisor, relay_program(), prefix_, dir_.path(), dir_.path(),
                     "10.77.0.0/24");
  relays.start(worker);
  const std::vector<pid_t> pids = supervisor.running_pids();
  ASSERT_EQ(pids.size(), 1u);
  const auto owner = relays.owner_of(pids[0]);
  ASSERT_TRUE(owner.has_value());
  EXPECT_EQ(owner->rfind("the reply relay of w1", 0), 0u) << *owner;
  EXPECT_EQ(relays.owner_of(pids[0] + 100000), std::nullopt);
  relays.stop(2000);
  EXPECT_TRUE(supervisor.running_pids().empty());
  net.teardown();
}

}  // namespace
}  // namespace locklab
