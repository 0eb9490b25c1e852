// locklab-relay (nemesis/reply_relay.h): the real program, real TCP on 127.0.0.1, an upstream
// server played by the test (a listening socket it accepts from, and sends on when told).
//
// What the tests' model leaves out: the worker namespaces of a run (the reply-delay scenario
// covers the relay there; the ReplyRelayRedirect tests build only a private namespace with a
// redirect rule on loopback, and are skipped where the kernel refuses it, saying why); anything
// but loopback (no loss, no reordering, no real network latency); more than a few connections
// at once (the pair limit is not reached); the 64 MiB back-pressure limit; a relay killed
// mid-run.
//
// Timing: a held reply is checked only against the lower bound the relay promises (never before
// its release time); nothing asserts an upper bound. Waits for an event are bounded by
// kEventWaitMs, which only turns a hang into a failure.
#include "nemesis/reply_relay.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "poll_until.h"
#include "run/process.h"
#include "temp_dir.h"

namespace locklab {
namespace {

using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC, as the relay's release times
using std::chrono::milliseconds;

constexpr int kEventWaitMs = 20'000;

using Fd = UniqueFd;  // nemesis/reply_relay.h

std::string relay_program() {
  return std::string(LOCKLAB_BIN_DIR) + "/locklab-relay";
}

bool wait_readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  int n = 0;
  do {
    n = ::poll(&p, 1, timeout_ms);
  } while (n < 0 && errno == EINTR);
  return n > 0;
}

Fd listen_loopback(uint16_t& port) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd.get(), 16) != 0)
    throw std::runtime_error(std::string("test listener: ") + std::strerror(errno));
  socklen_t length = sizeof address;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length);
  port = ntohs(address.sin_port);
  return fd;
}

Fd connect_loopback(uint16_t port) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    throw std::runtime_error(std::string("test connect: ") + std::strerror(errno));
  return fd;
}

void send_all(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(std::string("test send: ") + std::strerror(errno));
    sent += static_cast<size_t>(n);
  }
}

// Reads exactly `count` bytes; fewer when the peer ends the stream or kEventWaitMs passes
// without a byte.
std::string recv_exact(int fd, size_t count) {
  std::string out;
  std::vector<char> buffer(64 * 1024);
  while (out.size() < count) {
    if (!wait_readable(fd, kEventWaitMs)) break;
    ssize_t n = ::recv(fd, buffer.data(), std::min(buffer.size(), count - out.size()), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buffer.data(), static_cast<size_t>(n));
  }
  return out;
}

// What the next read says once the stream has something: 0 = EOF, -errno, or bytes read.
ssize_t next_read(int fd, std::string* bytes = nullptr) {
  if (!wait_readable(fd, kEventWaitMs)) return -ETIMEDOUT;
  char buffer[4096];
  ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
  if (n < 0) return -errno;
  if (bytes != nullptr) bytes->assign(buffer, static_cast<size_t>(n));
  return n;
}

// The peer ended the stream: an EOF or a reset (not a timeout, not bytes).
bool closed_by_peer(int fd) {
  ssize_t result = next_read(fd);
  return result == 0 || result == -ECONNRESET;
}

std::string pattern(size_t size, unsigned seed) {
  std::string out(size, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (char& c : out) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 24);
  }
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++count;
  return count;
}

// A process of the program: stdout through a pipe (for the ready line), stderr to a file.
class RelayProcess {
 public:
  // `launcher` runs the program (e.g. prlimit ... --); empty = the program itself. Its stdout is
  // a pipe (the `ready <port>` line); stderr goes to stderr_path.
  RelayProcess(const std::vector<std::string>& args, const std::string& stderr_path,
               const std::vector<std::string>& launcher = {}) {
    std::vector<std::string> argv = launcher;
    argv.push_back(relay_program());
    argv.insert(argv.end(), args.begin(), args.end());
    child_ = supervisor_.start(
        {.argv = std::move(argv), .netns = "", .log_path = stderr_path, .pipe_stdout = true});
  }

  // The port of its `ready <port>` line; nullopt when it printed anything else or exited.
  std::optional<uint16_t> ready_port() {
    const std::optional<std::string> line =
        read_line(child_.from_stdout.get(), kEventWaitMs, kReadyLineBytesMax);
    unsigned port = 0;
    if (!line || std::sscanf(line->c_str(), "ready %u", &port) != 1 || port == 0 || port > 65535)
      return std::nullopt;
    return static_cast<uint16_t>(port);
  }
  void signal(int sig) { supervisor_.signal(child_.pid, sig); }
  pid_t pid() const { return child_.pid; }
  // How it ended; nullopt when it still runs after kEventWaitMs.
  std::optional<ExitStatus> wait_exit() { return supervisor_.wait_exit(child_.pid, kEventWaitMs); }

 private:
  static constexpr size_t kReadyLineBytesMax = 64;
  Supervisor supervisor_;  // kills and reaps the relay when the test ends
  StartedChild child_;
};

// One relay with a fixed upstream (the test's listener) and its delay file.
class ReplyRelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(relay_program())) << relay_program() << " is not built";
    upstream_listener_ = listen_loopback(upstream_port_);
    delay_path_ = dir_.file("delay");
    stderr_path_ = dir_.file("relay.stderr");
  }

  void start_relay(const std::vector<std::string>& launcher = {}) {
    relay_.emplace(
        std::vector<std::string>{"--listen", "127.0.0.1:0", "--delay-file", delay_path_,
                                 "--upstream", "127.0.0.1:" + std::to_string(upstream_port_)},
        stderr_path_, launcher);
    std::optional<uint16_t> port = relay_->ready_port();
    ASSERT_TRUE(port.has_value()) << "no ready line; stderr: " << read_file(stderr_path_);
    relay_port_ = *port;
  }

  // Replaced atomically (rename), as the contract asks of writers.
  void set_delay(const std::string& content) {
    const std::string next = dir_.file("delay.next");
    std::ofstream(next) << content;
    std::filesystem::rename(next, delay_path_);
  }

  // Readable once the relay has read the delay file, which it does after each upstream read:
  // how a test knows the relay holds what the upstream sent (inotify IN_ACCESS in the file's
  // directory; the test itself never reads the file).
  Fd watch_delay_reads() {
    Fd watch(inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
    if (watch.get() < 0 || inotify_add_watch(watch.get(), dir_.path().c_str(), IN_ACCESS) < 0)
      throw std::runtime_error(std::string("inotify: ") + std::strerror(errno));
    return watch;
  }

  struct Connection {
    Fd client;    // the test's client end, through the relay
    Fd upstream;  // the test's upstream end, accepted from the relay
  };
  Connection connect() {
    Connection c;
    c.client = connect_loopback(relay_port_);
    if (!wait_readable(upstream_listener_.get(), kEventWaitMs))
      throw std::runtime_error("the relay never connected to the upstream");
    c.upstream = Fd(::accept4(upstream_listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    return c;
  }

  testkit::TempDir dir_;
  Fd upstream_listener_;
  uint16_t upstream_port_ = 0;
  std::string delay_path_;
  std::string stderr_path_;
  std::optional<RelayProcess> relay_;
  uint16_t relay_port_ = 0;
};

TEST_F(ReplyRelayTest, PassesBytesBothWaysUnchanged) {
  start_relay();  // no delay file: delay 0
  Connection c = connect();
  const std::string request = pattern(4 * 1024, 1);
  send_all(c.client.get(), request);
  EXPECT_EQ(recv_exact(c.upstream.get(), request.size()), request);
  const std::string reply = pattern(3 * 1024, 2);
  send_all(c.upstream.get(), reply);
  EXPECT_EQ(recv_exact(c.client.get(), reply.size()), reply);

  const std::string big = pattern(1024 * 1024, 3);  // larger than the socket buffers
  std::thread sender([&] { send_all(c.upstream.get(), big); });
  std::string received = recv_exact(c.client.get(), big.size());
  sender.join();
  EXPECT_EQ(received.size(), big.size());
  EXPECT_TRUE(received == big) << "the 1 MiB reply changed on the way";
}

TEST_F(ReplyRelayTest, HoldsAReplyAtLeastTheDelay) {
  set_delay("300\n");
  start_relay();
  Connection c = connect();
  send_all(c.client.get(), "request");
  ASSERT_EQ(recv_exact(c.upstream.get(), 7), "request");
  const auto sent = Clock::now();
  send_all(c.upstream.get(), "reply");
  ASSERT_EQ(recv_exact(c.client.get(), 5), "reply");
  const auto held = std::chrono::duration_cast<milliseconds>(Clock::now() - sent);
  EXPECT_GE(held.count(), 300) << "the reply arrived before its release time";
}

// A request is not queued behind a held reply. Checked by order, not time: the reply is held
// for 60 s, so a request that reaches the upstream while no reply byte has reached the client
// passed at once. The request is sent only once the relay holds the reply (it read the delay
// file for it).
TEST_F(ReplyRelayTest, ForwardsARequestWhileAReplyIsHeld) {
  set_delay("60000");
  Fd delay_reads = watch_delay_reads();
  start_relay();
  Connection c = connect();
  send_all(c.upstream.get(), "held reply");
  ASSERT_TRUE(wait_readable(delay_reads.get(), kEventWaitMs)) << "the relay never read the reply";
  send_all(c.client.get(), "request");
  EXPECT_EQ(recv_exact(c.upstream.get(), 7), "request");
  EXPECT_FALSE(wait_readable(c.client.get(), 0)) << "the reply came before its release time";
}

// A chunk read at delay 500, then the delay set to 0 and a second chunk sent: the second waits
// behind the first. The delay is changed only once the relay read the first chunk (it read the
// delay file for it).
TEST_F(ReplyRelayTest, KeepsOrderWhenTheDelayDrops) {
  set_delay("500");
  Fd delay_reads = watch_delay_reads();
  start_relay();
  Connection c = connect();
  const std::string a(1000, 'A');
  const std::string b(1000, 'B');
  const auto a_sent = Clock::now();
  send_all(c.upstream.get(), a);
  ASSERT_TRUE(wait_readable(delay_reads.get(), kEventWaitMs))
      << "the relay never read the delay file";
  set_delay("0");
  send_all(c.upstream.get(), b);
  std::string received = recv_exact(c.client.get(), 1);
  const auto first_byte = Clock::now();
  received += recv_exact(c.client.get(), a.size() + b.size() - 1);
  EXPECT_TRUE(received == a + b) << "chunks reordered or changed: got " << received.size()
                                 << " bytes starting with " << received.substr(0, 1);
  EXPECT_GE(std::chrono::duration_cast<milliseconds>(first_byte - a_sent).count(), 500);
}

// Client EOF reaches the upstream, which can still reply; upstream EOF reaches the client only
// after the reply held before it.
TEST_F(ReplyRelayTest, PassesHalfClosesBothWays) {
  set_delay("200");
  start_relay();
  Connection c = connect();
  send_all(c.client.get(), "last request");
  ASSERT_EQ(::shutdown(c.client.get(), SHUT_WR), 0);
  EXPECT_EQ(recv_exact(c.upstream.get(), 12), "last request");
  EXPECT_EQ(next_read(c.upstream.get()), 0) << "the client's EOF did not reach the upstream";
  send_all(c.upstream.get(), "reply after EOF");
  ASSERT_EQ(::shutdown(c.upstream.get(), SHUT_WR), 0);
  EXPECT_EQ(recv_exact(c.client.get(), 15), "reply after EOF");
  EXPECT_EQ(next_read(c.client.get()), 0) << "the upstream's EOF did not reach the client";
}

TEST_F(ReplyRelayTest, PassesAnUpstreamHalfCloseWhileTheClientStillSends) {
  set_delay("200");
  start_relay();
  Connection c = connect();
  send_all(c.upstream.get(), "bye");
  ASSERT_EQ(::shutdown(c.upstream.get(), SHUT_WR), 0);
  EXPECT_EQ(recv_exact(c.client.get(), 3), "bye");
  EXPECT_EQ(next_read(c.client.get()), 0);
  send_all(c.client.get(), "more");
  EXPECT_EQ(recv_exact(c.upstream.get(), 4), "more");
  ASSERT_EQ(::shutdown(c.client.get(), SHUT_WR), 0);
  EXPECT_EQ(next_read(c.upstream.get()), 0);
}

// A reset of the upstream closes the client at once, dropping the reply still held.
TEST_F(ReplyRelayTest, UpstreamResetClosesTheClient) {
  set_delay("60000");
  start_relay();
  Connection c = connect();
  send_all(c.upstream.get(), "held");
  linger reset{1, 0};
  ASSERT_EQ(::setsockopt(c.upstream.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset), 0);
  c.upstream.reset();
  std::string bytes;
  ssize_t result = next_read(c.client.get(), &bytes);
  EXPECT_TRUE(result == 0 || result == -ECONNRESET)
      << "expected the client closed, got " << result << " " << bytes;
}

// "abc" is reported once, naming the file and what it holds, and the delay stays 300 ms.
TEST_F(ReplyRelayTest, InvalidDelayFileKeepsTheLastGoodDelay) {
  set_delay("300");
  start_relay();
  Connection c = connect();
  send_all(c.upstream.get(), "one");
  ASSERT_EQ(recv_exact(c.client.get(), 3), "one");
  set_delay("abc");
  for (const std::string reply : {"two", "three"}) {
    const auto sent = Clock::now();
    send_all(c.upstream.get(), reply);
    ASSERT_EQ(recv_exact(c.client.get(), reply.size()), reply);
    EXPECT_GE(std::chrono::duration_cast<milliseconds>(Clock::now() - sent).count(), 300)
        << reply << " was not held for the last good delay";
  }
  // Written before "two" was read from the upstream, so before it reached the client.
  const std::string errors = read_file(stderr_path_);
  EXPECT_EQ(count_of(errors, delay_path_ + " holds \"abc\""), 1u) << errors;
}

TEST_F(ReplyRelayTest, SigtermExitsZeroWithOpenConnections) {
  set_delay("60000");
  start_relay();
  Connection idle = connect();
  Connection holding = connect();
  send_all(holding.upstream.get(), "held");
  send_all(holding.client.get(), "request");
  ASSERT_EQ(recv_exact(holding.upstream.get(), 7), "request");
  relay_->signal(SIGTERM);
  std::optional<ExitStatus> status = relay_->wait_exit();
  ASSERT_TRUE(status.has_value()) << "still running after SIGTERM";
  EXPECT_EQ(status->describe(), "exit 0");
  EXPECT_TRUE(closed_by_peer(idle.client.get()));
  EXPECT_TRUE(closed_by_peer(holding.client.get()));
}

// The pair limit, scaled down by the open-file limit: with 40 files the relay keeps 32 for itself
// and takes (40 - 32) / 2 = 4 pairs. A fifth connection is closed at once with one line; once a
// pair closed, a new connection is relayed again.
TEST_F(ReplyRelayTest, RefusesConnectionsBeyondThePairLimit) {
  if (!std::filesystem::exists("/usr/bin/prlimit")) GTEST_SKIP() << "needs /usr/bin/prlimit";
  start_relay({"/usr/bin/prlimit", "--nofile=40:40", "--"});
  std::vector<Connection> open;
  for (int i = 0; i < 4; ++i) {
    open.push_back(connect());
    send_all(open.back().client.get(), "ping");
    ASSERT_EQ(recv_exact(open.back().upstream.get(), 4), "ping") << "pair " << i;
  }
  Fd refused = connect_loopback(relay_port_);
  EXPECT_TRUE(closed_by_peer(refused.get())) << "a fifth pair was relayed";
  const std::string errors = read_file(stderr_path_);  // written before the close
  EXPECT_EQ(count_of(errors, "already 4 connection pairs (the limit)"), 1u) << errors;

  ASSERT_EQ(::shutdown(open[0].client.get(), SHUT_WR), 0);
  ASSERT_EQ(next_read(open[0].upstream.get()), 0);
  open[0].upstream.reset();  // both directions done: the relay closes the pair
  ASSERT_EQ(next_read(open[0].client.get()), 0);
  Connection again = connect();
  send_all(again.client.get(), "again");
  EXPECT_EQ(recv_exact(again.upstream.get(), 5), "again");
}

// The relay's open-file limit is lowered, once it is ready, to what it has open (stdio, listener,
// epoll, eventfd and whatever a sanitizer runtime keeps: counted in /proc, not assumed) plus the
// two files of one pair; a second connection fails its accept (EMFILE). The relay says so and stops
// accepting (rather than waking on the still-readable listener forever) until the pair closes, then
// relays the waiting connection, which takes the last two files: the accept after it fails again
// (the kernel takes a file before it looks at the queue) and pauses once more. So exactly two
// lines; a relay that kept accepting would write one per loop.
TEST_F(ReplyRelayTest, PausesAcceptingWhenOutOfFiles) {
  start_relay();
  const std::string fd_dir = "/proc/" + std::to_string(relay_->pid()) + "/fd";
  const auto open_files = static_cast<rlim_t>(std::distance(
      std::filesystem::directory_iterator(fd_dir), std::filesystem::directory_iterator()));
  ASSERT_GE(open_files, 4u) << "stdio and the listener at least, in " << fd_dir;
  const rlimit one_pair{open_files + 2, open_files + 2};
  ASSERT_EQ(::prlimit(relay_->pid(), RLIMIT_NOFILE, &one_pair, nullptr), 0) << std::strerror(errno);
  Connection first = connect();
  send_all(first.client.get(), "ping");
  ASSERT_EQ(recv_exact(first.upstream.get(), 4), "ping");
  Fd waiting = connect_loopback(relay_port_);  // completes in the listener's backlog
  const std::string paused = std::string("failed: ") + std::strerror(EMFILE);
  testkit::poll_until(testkit::after(milliseconds(kEventWaitMs)),
                      [&] { return count_of(read_file(stderr_path_), paused) > 0; });
  ASSERT_EQ(count_of(read_file(stderr_path_), paused), 1u) << read_file(stderr_path_);

  ASSERT_EQ(::shutdown(first.client.get(), SHUT_WR), 0);
  ASSERT_EQ(next_read(first.upstream.get()), 0);
  first.upstream.reset();
  ASSERT_EQ(next_read(first.client.get()), 0);
  ASSERT_TRUE(wait_readable(upstream_listener_.get(), kEventWaitMs))
      << "the waiting connection was never relayed";
  Fd upstream(::accept4(upstream_listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
  send_all(waiting.get(), "late");
  EXPECT_EQ(recv_exact(upstream.get(), 4), "late");
  EXPECT_EQ(count_of(read_file(stderr_path_), paused), 2u)
      << "the accept failures: " << read_file(stderr_path_);
}

TEST_F(ReplyRelayTest, BindFailureExitsOneNamingTheAddress) {
  const std::string taken = "127.0.0.1:" + std::to_string(upstream_port_);  // test's listener
  RelayProcess relay({"--listen", taken, "--delay-file", delay_path_}, stderr_path_);
  std::optional<ExitStatus> status = relay.wait_exit();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->describe(), "exit 1");
  const std::string errors = read_file(stderr_path_);
  EXPECT_NE(errors.find(taken), std::string::npos) << errors;
  EXPECT_NE(errors.find(std::strerror(EADDRINUSE)), std::string::npos) << errors;
}

TEST_F(ReplyRelayTest, BadFlagsExitTwoNamingTheFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string flag;
    std::string value;
  };
  const std::string d = delay_path_;
  const std::vector<Case> cases = {
      {{"--listen", "127.0.0.1:65536", "--delay-file", d}, "--listen", "127.0.0.1:65536"},
      {{"--listen", "localhost:1", "--delay-file", d}, "--listen", "localhost:1"},
      {{"--listen", "127.0.0.1", "--delay-file", d}, "--listen", "127.0.0.1"},
      {{"--delay-file", d}, "--listen", ""},
      {{"--listen", "127.0.0.1:0"}, "--delay-file", ""},
      {{"--listen", "127.0.0.1:0", "--delay-file", d, "--mark", "-1"}, "--mark", "-1"},
      {{"--listen", "127.0.0.1:0", "--delay-file", d, "--upstream", "1.2.3:4"},
       "--upstream",
       "1.2.3:4"},
      {{"--listen", "127.0.0.1:0", "--delay-file", d, "--upstream", "1.2.3.4:0"},
       "--upstream",
       "1.2.3.4:0"},
      {{"--listen", "127.0.0.1:5", "--delay-file", d, "--upstream", "127.0.0.1:5"},
       "--upstream",
       "127.0.0.1:5"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string errors_path = dir_.file("bad" + std::to_string(i) + ".stderr");
    RelayProcess relay(cases[i].args, errors_path);
    std::optional<ExitStatus> status = relay.wait_exit();
    ASSERT_TRUE(status.has_value()) << cases[i].flag;
    EXPECT_EQ(status->describe(), "exit 2") << cases[i].flag;
    const std::string errors = read_file(errors_path);
    EXPECT_EQ(count_of(errors, "\n"), 1u) << errors;
    EXPECT_NE(errors.find(cases[i].flag), std::string::npos) << errors;
    EXPECT_NE(errors.find(cases[i].value), std::string::npos) << errors;
  }
}

// Without --upstream and without a redirect, the original destination is the relay itself (or
// there is none): the connection is refused, never relayed to itself.
TEST_F(ReplyRelayTest, RefusesAConnectionToItself) {
  relay_.emplace(std::vector<std::string>{"--listen", "127.0.0.1:0", "--delay-file", delay_path_},
                 stderr_path_);
  std::optional<uint16_t> port = relay_->ready_port();
  ASSERT_TRUE(port.has_value());
  Fd client = connect_loopback(*port);
  EXPECT_TRUE(closed_by_peer(client.get())) << "the connection was not closed";
  relay_->signal(SIGTERM);
  ASSERT_TRUE(relay_->wait_exit().has_value());
  const std::string errors = read_file(stderr_path_);
  EXPECT_EQ(count_of(errors, "refused a connection"), 1u) << errors;
}

// The redirect case: in a private network namespace (entered by this test's thread, so by the
// relay and nft it starts too), an nft rule sends connections to port 27017 to the relay, except
// packets marked 42 (the relay's own, --mark 42). The upstream is then each connection's
// original destination.
class ReplyRelayRedirectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(relay_program())) << relay_program() << " is not built";
    original_netns_ = Fd(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
    ASSERT_GE(original_netns_.get(), 0);
    if (::unshare(CLONE_NEWNET) != 0)
      GTEST_SKIP() << "a private network namespace is refused: " << std::strerror(errno);
    entered_ = true;
    ToolResult lo = run_tool({"ip", "link", "set", "lo", "up"});
    ASSERT_EQ(lo.code, 0) << "ip link set lo up: " << lo.output;
    delay_path_ = dir_.file("delay");
    stderr_path_ = dir_.file("relay.stderr");
  }
  void TearDown() override {
    relay_.reset();
    if (entered_) {
      EXPECT_EQ(::setns(original_netns_.get(), CLONE_NEWNET), 0);
    }
  }

  // Starts the relay (--mark 42 unless `mark` says otherwise) and the redirect to it.
  void start(const std::string& mark) {
    std::vector<std::string> args{"--listen", "127.0.0.1:0", "--delay-file", delay_path_};
    if (!mark.empty()) args.insert(args.end(), {"--mark", mark});
    relay_.emplace(args, stderr_path_);
    std::optional<uint16_t> port = relay_->ready_port();
    ASSERT_TRUE(port.has_value()) << read_file(stderr_path_);
    relay_port_ = *port;
    const std::string rules =
        "table ip relaytest {\n chain out {\n"
        "  type nat hook output priority -100; policy accept;\n"
        "  meta mark 42 return\n"
        "  tcp dport 27017 redirect to :" +
        std::to_string(relay_port_) + "\n }\n}\n";
    ToolResult nft = run_tool({"nft", "-f", "-"}, "", rules);
    if (nft.code != 0) GTEST_SKIP() << "nft refused the redirect rule: " << nft.output;
  }

  testkit::TempDir dir_;
  Fd original_netns_;
  bool entered_ = false;
  std::string delay_path_;
  std::string stderr_path_;
  std::optional<RelayProcess> relay_;
  uint16_t relay_port_ = 0;
};

TEST_F(ReplyRelayRedirectTest, RelaysToTheOriginalDestination) {
  uint16_t upstream_port = 27017;
  Fd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(upstream_port);
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener.get(), 4), 0);
  std::ofstream(delay_path_) << "300";
  start("42");
  if (HasFatalFailure() || IsSkipped()) return;
  Fd client = connect_loopback(upstream_port);  // redirected to the relay
  ASSERT_TRUE(wait_readable(listener.get(), kEventWaitMs))
      << "the relay never reached the original destination; stderr: " << read_file(stderr_path_);
  Fd upstream(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  send_all(client.get(), "request");
  EXPECT_EQ(recv_exact(upstream.get(), 7), "request");
  const auto sent = Clock::now();
  send_all(upstream.get(), "reply");
  EXPECT_EQ(recv_exact(client.get(), 5), "reply");
  EXPECT_GE(std::chrono::duration_cast<milliseconds>(Clock::now() - sent).count(), 300)
      << "the reply did not pass through the relay";
}

// Under conntrack (loaded by the nat rule) a direct connection to the relay has an original
// destination: the relay's own address. It is refused.
TEST_F(ReplyRelayRedirectTest, RefusesAConnectionToItselfUnderConntrack) {
  start("42");
  if (HasFatalFailure() || IsSkipped()) return;
  Fd client = connect_loopback(relay_port_);
  EXPECT_TRUE(closed_by_peer(client.get())) << "the connection was not closed";
  relay_->signal(SIGTERM);
  ASSERT_TRUE(relay_->wait_exit().has_value());
  const std::string errors = read_file(stderr_path_);
  EXPECT_NE(errors.find("its original destination 127.0.0.1:" + std::to_string(relay_port_) +
                        " is this relay"),
            std::string::npos)
      << errors;
}

TEST(ReplyRelayParse, DelayFileContent) {
  EXPECT_EQ(parse_delay_ms(""), 0);
  EXPECT_EQ(parse_delay_ms("\n"), 0);
  EXPECT_EQ(parse_delay_ms("0"), 0);
  EXPECT_EQ(parse_delay_ms(" 250\n"), 250);
  EXPECT_EQ(parse_delay_ms("600000"), 600'000);
  EXPECT_EQ(parse_delay_ms("600001"), std::nullopt);
  EXPECT_EQ(parse_delay_ms("99999999999999999999999"), std::nullopt);
  EXPECT_EQ(parse_delay_ms("-1"), std::nullopt);
  EXPECT_EQ(parse_delay_ms("+1"), std::nullopt);
  EXPECT_EQ(parse_delay_ms("1.5"), std::nullopt);
  EXPECT_EQ(parse_delay_ms("1 2"), std::nullopt);
  EXPECT_EQ(parse_delay_ms("abc"), std::nullopt);
}

TEST(ReplyRelayParse, Endpoint) {
  std::string why;
  std::optional<Ipv4Endpoint> e = parse_ipv4_endpoint("10.1.2.3:27017", why);
  ASSERT_TRUE(e.has_value()) << why;
  EXPECT_EQ(e->port, 27017);
  EXPECT_EQ(e->text(), "10.1.2.3:27017");
  EXPECT_TRUE(parse_ipv4_endpoint("0.0.0.0:0", why).has_value());
  for (const char* bad : {"", ":1", "1.2.3.4", "1.2.3.4:", "1.2.3.4:x", "1.2.3.4:65536",
                          "1.2.3.4:-1", "host:1", "1.2.3.256:1", "1.2.3.4:1 "}) {
    why.clear();
    EXPECT_FALSE(parse_ipv4_endpoint(bad, why).has_value()) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

}  // namespace
}  // namespace locklab
