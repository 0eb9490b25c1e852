// PortReservation (db/port_reservation.h) on this host's kernel, and the two holders of
// reservations: the harness's loopback set (db/process_db.h) and the test kit's MongosimNode.
//
// What the models omit: other processes racing for a port are not provoked by timing. The
// namespace test makes the kernel's choice deterministic instead: in a private network namespace
// with an eight-port ephemeral range it takes every port the kernel will hand out (bind(0) with
// and without SO_REUSEADDR, then outbound connections until none is left) and expects exactly
// the seven that are not reserved.
#include "db/port_reservation.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "run/process.h"
#include "run/sandbox.h"
#include "testkit.h"

namespace locklab {
namespace {

using testkit::connect_loopback;

// A socket on 127.0.0.1:<port> (0 = the kernel's choice); -1 with errno when bind (or listen,
// when asked) fails.
int bound(int port, bool reuse, bool listening) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int on = 1;
  if (reuse) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      (listening && ::listen(fd, 16) != 0)) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

int local_port(int fd) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return -1;
  return ntohs(address.sin_port);
}

TEST(PortReservation, APlainBindToTheReservedPortIsRefused) {
  const PortReservation reservation;
  ASSERT_GT(reservation.port(), 0);
  errno = 0;
  EXPECT_EQ(bound(reservation.port(), false, false), -1);
  EXPECT_EQ(errno, EADDRINUSE);
}

// What mongosim's listener and mongod do: SO_REUSEADDR, bind, listen; then a kill, a restart.
TEST(PortReservation, AServerWithReuseAddrListensThereAndAgainAfterAKill) {
  const PortReservation reservation;
  const int server = bound(reservation.port(), true, true);
  ASSERT_GE(server, 0) << std::strerror(errno);
  errno = 0;
  EXPECT_EQ(bound(reservation.port(), true, true), -1) << "a second listener on the port";
  EXPECT_EQ(errno, EADDRINUSE);
  const int client = connect_loopback(reservation.port());
  EXPECT_GE(client, 0);
  const int accepted = ::accept(server, nullptr, nullptr);
  EXPECT_GE(accepted, 0);
  // The server ends with a connection open (its side goes to TIME_WAIT), as a killed member does.
  ::close(accepted);
  ::close(server);
  ::close(client);
  const int restarted = bound(reservation.port(), true, true);
  EXPECT_GE(restarted, 0) << std::strerror(errno);
  if (restarted >= 0) ::close(restarted);
}

TEST(PortReservation, ReservationsNeverShareAPortAndAMovedOneKeepsIt) {
  std::vector<PortReservation> reservations(64);
  std::set<int> ports;
  for (const PortReservation& r : reservations) ports.insert(r.port());
  EXPECT_EQ(ports.size(), reservations.size());
  const int port = reservations.front().port();
  PortReservation moved = std::move(reservations.front());
  EXPECT_EQ(moved.port(), port);
  EXPECT_EQ(reservations.front().port(), 0);
  EXPECT_EQ(bound(port, false, false), -1) << "the moved reservation still holds " << port;
}

TEST(PortReservation, DestructionFreesThePort) {
  int port = 0;
  { port = PortReservation().port(); }
  const int fd = bound(port, false, false);
  EXPECT_GE(fd, 0) << "port " << port << ": " << std::strerror(errno);
  if (fd >= 0) ::close(fd);
}

// Runs in a child in a private network namespace (and a user namespace when not root); writes
// "reserved <port>", "handed <port>" lines and "error <what>" to `out`.
int take_every_port(const std::string& out) {
  std::ofstream facts(out);
  enter_private_namespaces();
  if (run_tool({"ip", "link", "set", "lo", "up"}).code != 0) return facts << "error lo\n", 1;
  std::ofstream("/proc/sys/net/ipv4/ip_local_port_range") << "40000 40007\n";
  const PortReservation reservation;
  facts << "reserved " << reservation.port() << "\n";
  std::vector<int> held;
  for (const bool reuse : {true, false}) {
    const int fd = bound(0, reuse, reuse);
    if (fd < 0) return facts << "error bind(0) reuse=" << reuse << "\n", 1;
    held.push_back(fd);
    facts << "handed " << local_port(fd) << "\n";
  }
  const int listener = bound(50000, false, true);  // outside the range
  if (listener < 0) return facts << "error listener\n", 1;
  for (int i = 0; i < 16; ++i) {
    const int fd = connect_loopback(50000);
    if (fd < 0) break;
    held.push_back(fd);
    facts << "handed " << local_port(fd) << "\n";
  }
  return 0;
}

TEST(PortReservation, TheKernelHandsOutEveryOtherPortOfTheRangeButNotTheReservedOne) {
  const std::string refusal = netns_backend_refusal();
  if (!refusal.empty()) GTEST_SKIP() << refusal;
  testkit::TempDir dir;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(take_every_port(dir.file("facts")));
  EXPECT_EQ(testkit::wait_child_exit(child, testkit::after(std::chrono::seconds(20))), 0);
  std::ifstream in(dir.file("facts"));
  std::string word;
  int port = 0;
  int reserved = 0;
  std::multiset<int> handed;
  std::stringstream all;
  while (in >> word >> port) {
    all << word << " " << port << "\n";
    if (word == "reserved") reserved = port;
    if (word == "handed") handed.insert(port);
  }
  std::multiset<int> others;
  for (int p = 40000; p <= 40007; ++p) {
    if (p != reserved) others.insert(p);
  }
  EXPECT_GE(reserved, 40000) << all.str();
  EXPECT_EQ(handed, others) << all.str();
}

// The loopback set keeps each member's port over a kill: nothing else may bind it, and the
// member restarts on it.
TEST(PortReservation, AKilledLoopbackMembersPortStaysItsOwnUntilTheRestart) {
  testkit::TempDir dir;
  Supervisor supervisor;
  std::unique_ptr<Db> db = testkit::harness_db(dir.path(), 1, supervisor);
  db->start();
  const std::string host = db->host(0);
  const int port = std::stoi(host.substr(host.rfind(':') + 1));
  db->kill_member(0);
  errno = 0;
  EXPECT_EQ(bound(port, false, false), -1) << "port " << port << " was free after the kill";
  EXPECT_EQ(errno, EADDRINUSE);
  db->restart_member(0);
  EXPECT_TRUE(db->running(0));
  EXPECT_EQ(db->host(0), host);
  db->stop();
}

TEST(PortReservation, AKilledTestNodesPortStaysItsOwnUntilTheRestart) {
  if (testkit::mongosim_program().empty()) GTEST_SKIP() << "this build has no mongosim";
  testkit::MongosimNode node;
  node.kill();
  errno = 0;
  EXPECT_EQ(bound(node.port(), false, false), -1) << "port " << node.port() << " was free";
  EXPECT_EQ(errno, EADDRINUSE);
  node.restart();
  EXPECT_TRUE(node.running());
}

}  // namespace
}  // namespace locklab
