// The reply relay (see reply_relay.h): one epoll loop over non-blocking sockets, level
// triggered. Each connection pair lives in pairs_ under an id; epoll events carry the id and the
// side, so an event for a pair closed earlier in the same batch finds nothing and is dropped.
//
// Invariants of a Pair:
//  - held_bytes == the unsent bytes of `held` (the front chunk counted from head_offset);
//  - held_bytes <= kRelayMaxHeldBytes and the pending request bytes <= kRelayMaxPendingBytes
//    (reads are cut to the room left);
//  - client_write_shut implies upstream_eof and held is empty; upstream_write_shut implies
//    client_eof and no pending request bytes;
//  - a socket is registered in epoll only while it has an interest (mask != 0): a half-closed
//    socket would otherwise report EPOLLHUP on every wait.
#include "nemesis/reply_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/netfilter_ipv4.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <cerrno>
#include <charconv>
#include <deque>
#include <iostream>
#include <map>
#include <system_error>
#include <vector>

namespace locklab {

namespace {

constexpr uint64_t kTagListen = 0;
constexpr uint64_t kTagStop = 1;
constexpr int kMaxEventsPerWait = 256;
constexpr int kAcceptsPerEvent = 64;
constexpr int kListenBacklog = 256;
constexpr int kReservedFds = 32;  // listener, epoll, eventfd, stdio, delay file, headroom

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::string errno_text(int error) {
  return std::system_category().message(error);
}

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::system_category(), "reply relay: " + what);
}

// Quoted for a one-line message: control and non-ASCII bytes as \xNN.
std::string quoted(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out + "\"";
}

// Not checked by UBSan's vptr sanitizer: this line is written when the process is out of file
// descriptors (an accept failed with EMFILE), and the check then cannot read the process's own
// module list (/proc/self/...), so it reports std::cerr as an object with an invalid vptr and
// the relay ends. Nothing here is polymorphic beyond std::cerr itself.
__attribute__((no_sanitize("vptr"))) void log_line(const std::string& line) {
  std::cerr << "locklab-relay: " << line << std::endl;
}

sockaddr_in to_sockaddr(const Ipv4Endpoint& endpoint) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = endpoint.address_be;
  address.sin_port = htons(endpoint.port);
  return address;
}

Ipv4Endpoint from_sockaddr(const sockaddr_in& address) {
  return Ipv4Endpoint{address.sin_addr.s_addr, ntohs(address.sin_port)};
}

std::optional<Ipv4Endpoint> local_endpoint(int fd) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return std::nullopt;
  return from_sockaddr(address);
}

// Closing with SO_LINGER {on, 0} sends a reset instead of a FIN.
void reset_on_close(int fd) {
  if (fd < 0) return;
  linger option{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, sizeof option);
}

// The delay file and what was last read from it.
class DelayFile {
 public:
  explicit DelayFile(std::string path) : path_(std::move(path)) {}

  // The delay now: the file's value, or the last good one when the file is invalid.
  int64_t current_ms() {
    UniqueFd fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (fd.get() < 0) {
      if (errno == ENOENT) return last_good_ms_ = 0;
      return invalid("cannot be read (" + errno_text(errno) + ")");
    }
    std::array<char, kRelayMaxDelayFileBytes + 1> buffer{};
    size_t length = 0;
    while (length < buffer.size()) {
      ssize_t n = ::read(fd.get(), buffer.data() + length, buffer.size() - length);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return invalid("cannot be read (" + errno_text(errno) + ")");
      if (n == 0) break;
      length += static_cast<size_t>(n);
    }
    std::string_view content(buffer.data(), length);
    std::string expected =
        ", not a number of milliseconds in 0.." + std::to_string(kRelayMaxDelayMs);
    if (length > kRelayMaxDelayFileBytes)
      return invalid("holds more than " + std::to_string(kRelayMaxDelayFileBytes) + " bytes" +
                     expected);
    std::optional<int64_t> value = parse_delay_ms(content);
    if (!value) return invalid("holds " + quoted(content) + expected);
    return last_good_ms_ = *value;
  }

 private:
  std::string path_;
  int64_t last_good_ms_ = 0;
  std::optional<std::string> last_reported_;

  int64_t invalid(const std::string& what) {
    if (last_reported_ != what) {
      last_reported_ = what;
      log_line("delay file " + path_ + " " + what + "; the delay stays " +
               std::to_string(last_good_ms_) + " ms");
    }
    return last_good_ms_;
  }
};

struct HeldChunk {
  std::string bytes;
  int64_t release_at_ns = 0;
};

struct Pair {
  uint64_t id = 0;
  std::string label;  // "client A -> upstream B", for messages
  UniqueFd client;
  UniqueFd upstream;
  bool connecting = true;
  std::string pending;  // client -> upstream bytes not yet written, from pending_offset
  size_t pending_offset = 0;
  std::deque<HeldChunk> held;  // upstream -> client, in the order read
  size_t head_offset = 0;      // bytes of held.front() already written
  size_t held_bytes = 0;
  bool client_blocked = false;  // the last write to the client would have blocked
  bool client_eof = false;
  bool upstream_eof = false;
  bool client_write_shut = false;
  bool upstream_write_shut = false;
  uint32_t client_mask = 0;  // registered epoll interest; 0 = not registered
  uint32_t upstream_mask = 0;

  size_t pending_bytes() const { return pending.size() - pending_offset; }
  bool done() const { return client_write_shut && upstream_write_shut; }
};

}  // namespace

class ReplyRelay::Impl {
 public:
  explicit Impl(ReplyRelayOptions options);
  uint16_t port() const { return port_; }
  void run();
  void request_stop() noexcept {
    stop_.store(true);
    uint64_t one = 1;
    ssize_t ignored = ::write(stop_event_.get(), &one, sizeof one);  // EAGAIN: already woken
    (void)ignored;
  }

 private:
  ReplyRelayOptions options_;
  UniqueFd listen_;
  UniqueFd epoll_;
  UniqueFd stop_event_;
  uint16_t port_ = 0;
  int max_pairs_ = kRelayMaxPairs;
  std::atomic<bool> stop_{false};
  static_assert(std::atomic<bool>::is_always_lock_free, "request_stop runs in signal handlers");
  std::map<uint64_t, std::unique_ptr<Pair>> pairs_;
  uint64_t next_id_ = 1;
  DelayFile delay_;
  std::vector<char> read_buffer_;

  bool accepting_paused_ = false;

  void setup_listener();
  void pause_accepting(bool pause);
  void accept_ready();
  void start_pair(UniqueFd client);
  std::optional<Ipv4Endpoint> upstream_for(int client_fd, std::string& why) const;
  void on_event(uint64_t tag, uint32_t events);
  bool on_client_event(Pair& pair, uint32_t events);
  bool on_upstream_event(Pair& pair, uint32_t events);
  bool read_client(Pair& pair);
  bool read_upstream(Pair& pair);
  bool finish_connect(Pair& pair);
  bool flush_to_upstream(Pair& pair);
  bool flush_to_client(Pair& pair);
  bool fail(Pair& pair, const std::string& what, int error);
  void settle(Pair& pair, bool alive);
  void set_interest(int fd, uint64_t tag, uint32_t& registered, uint32_t wanted);
  void update_interest(Pair& pair);
  void release_due();
  int wait_timeout_ms() const;
};

ReplyRelay::Impl::Impl(ReplyRelayOptions options)
    : options_(std::move(options)), delay_(options_.delay_file) {
  read_buffer_.resize(kRelayReadChunkBytes);
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
    int64_t room = (static_cast<int64_t>(files.rlim_cur) - kReservedFds) / 2;
    max_pairs_ = static_cast<int>(std::clamp<int64_t>(room, 1, kRelayMaxPairs));
  }
  epoll_ = UniqueFd(epoll_create1(EPOLL_CLOEXEC));
  if (epoll_.get() < 0) throw_errno("epoll_create1");
  stop_event_ = UniqueFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (stop_event_.get() < 0) throw_errno("eventfd");
  setup_listener();
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = kTagStop;
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, stop_event_.get(), &event) != 0)
    throw_errno("epoll_ctl(eventfd)");
  event.data.u64 = kTagListen;
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, listen_.get(), &event) != 0)
    throw_errno("epoll_ctl(listener)");
}

void ReplyRelay::Impl::setup_listener() {
  listen_ = UniqueFd(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (listen_.get() < 0) throw_errno("socket");
  int on = 1;
  if (setsockopt(listen_.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0)
    throw_errno("SO_REUSEADDR");
  sockaddr_in address = to_sockaddr(options_.listen);
  if (bind(listen_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    throw RelayBindError("cannot bind " + options_.listen.text() + ": " + errno_text(errno));
  if (listen(listen_.get(), kListenBacklog) != 0)
    throw RelayBindError("cannot listen on " + options_.listen.text() + ": " + errno_text(errno));
  std::optional<Ipv4Endpoint> bound = local_endpoint(listen_.get());
  if (!bound) throw_errno("getsockname");
  port_ = bound->port;
}

void ReplyRelay::Impl::run() {
  std::array<epoll_event, kMaxEventsPerWait> events{};
  while (!stop_.load()) {
    int n = epoll_wait(epoll_.get(), events.data(), kMaxEventsPerWait, wait_timeout_ms());
    if (n < 0 && errno != EINTR) throw_errno("epoll_wait");
    for (int i = 0; i < n && !stop_.load(); ++i) on_event(events[i].data.u64, events[i].events);
    release_due();
  }
  pairs_.clear();  // closes every socket
}

void ReplyRelay::Impl::on_event(uint64_t tag, uint32_t events) {
  if (tag == kTagStop) return;  // stop_ is set; the loop ends
  if (tag == kTagListen) return accept_ready();
  auto found = pairs_.find(tag / 2);
  if (found == pairs_.end()) return;  // closed earlier in this batch
  Pair& pair = *found->second;
  bool alive = tag % 2 == 0 ? on_client_event(pair, events) : on_upstream_event(pair, events);
  settle(pair, alive);
}

void ReplyRelay::Impl::accept_ready() {
  for (int i = 0; i < kAcceptsPerEvent; ++i) {
    UniqueFd client(accept4(listen_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (client.get() < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      if (errno == ECONNABORTED || errno == EPROTO) continue;
      // EMFILE and the like: the listener would stay readable and spin the loop, so accepting
      // pauses until a pair closes.
      log_line("accept on " + options_.listen.text() + " failed: " + errno_text(errno) +
               "; accepting again once a connection closes");
      return pause_accepting(true);
    }
    if (static_cast<int>(pairs_.size()) >= max_pairs_) {
      log_line("refused a connection: already " + std::to_string(pairs_.size()) +
               " connection pairs (the limit)");
      continue;  // closed by UniqueFd
    }
    start_pair(std::move(client));
  }
}

void ReplyRelay::Impl::pause_accepting(bool pause) {
  if (pause == accepting_paused_) return;
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = kTagListen;
  if (epoll_ctl(epoll_.get(), pause ? EPOLL_CTL_DEL : EPOLL_CTL_ADD, listen_.get(), &event) != 0)
    throw_errno("epoll_ctl(listener)");
  accepting_paused_ = pause;
}

std::optional<Ipv4Endpoint> ReplyRelay::Impl::upstream_for(int client_fd, std::string& why) const {
  if (options_.upstream) return options_.upstream;
  sockaddr_in original{};
  socklen_t length = sizeof original;
  if (getsockopt(client_fd, SOL_IP, SO_ORIGINAL_DST, &original, &length) != 0) {
    why = "no original destination (" + errno_text(errno) + ")";
    return std::nullopt;
  }
  Ipv4Endpoint destination = from_sockaddr(original);
  std::optional<Ipv4Endpoint> local = local_endpoint(client_fd);
  bool to_listener =
      destination.port == port_ && (options_.listen.address_be == htonl(INADDR_ANY) ||
                                    destination.address_be == options_.listen.address_be);
  if (to_listener || (local && destination == *local)) {
    why = "its original destination " + destination.text() + " is this relay (no redirect)";
    return std::nullopt;
  }
  return destination;
}

void ReplyRelay::Impl::start_pair(UniqueFd client) {
  std::string why;
  std::optional<Ipv4Endpoint> upstream = upstream_for(client.get(), why);
  if (!upstream) return log_line("refused a connection: " + why);
  UniqueFd socket_fd(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (socket_fd.get() < 0) return log_line("refused a connection: socket: " + errno_text(errno));
  if (options_.mark != 0 &&
      setsockopt(socket_fd.get(), SOL_SOCKET, SO_MARK, &options_.mark, sizeof options_.mark) != 0)
    return log_line("refused a connection: SO_MARK " + std::to_string(options_.mark) + ": " +
                    errno_text(errno));
  int on = 1;
  setsockopt(socket_fd.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  setsockopt(client.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  sockaddr_in address = to_sockaddr(*upstream);
  if (connect(socket_fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 &&
      errno != EINPROGRESS)
    return log_line("refused a connection: connect to " + upstream->text() + ": " +
                    errno_text(errno));
  auto pair = std::make_unique<Pair>();
  pair->id = next_id_++;
  std::optional<Ipv4Endpoint> peer;
  sockaddr_in client_address{};
  socklen_t length = sizeof client_address;
  if (getpeername(client.get(), reinterpret_cast<sockaddr*>(&client_address), &length) == 0)
    peer = from_sockaddr(client_address);
  pair->label =
      "client " + (peer ? peer->text() : std::string("?")) + " -> upstream " + upstream->text();
  pair->client = std::move(client);
  pair->upstream = std::move(socket_fd);
  Pair& added = *pair;
  pairs_.emplace(added.id, std::move(pair));
  update_interest(added);
}

bool ReplyRelay::Impl::on_client_event(Pair& pair, uint32_t events) {
  if (events & EPOLLERR) {
    int error = 0;
    socklen_t length = sizeof error;
    getsockopt(pair.client.get(), SOL_SOCKET, SO_ERROR, &error, &length);
    return fail(pair, "client socket", error);
  }
  if (events & EPOLLOUT) pair.client_blocked = false;
  if ((events & (EPOLLIN | EPOLLHUP)) && (pair.client_mask & EPOLLIN)) {
    if (!read_client(pair)) return false;
  }
  return flush_to_upstream(pair) && flush_to_client(pair);
}

bool ReplyRelay::Impl::on_upstream_event(Pair& pair, uint32_t events) {
  if (events & EPOLLERR) {
    int error = 0;
    socklen_t length = sizeof error;
    getsockopt(pair.upstream.get(), SOL_SOCKET, SO_ERROR, &error, &length);
    return fail(pair, pair.connecting ? "upstream connect" : "upstream socket", error);
  }
  if (pair.connecting) {
    if (!(events & (EPOLLOUT | EPOLLHUP))) return true;
    return finish_connect(pair);
  }
  if ((events & (EPOLLIN | EPOLLHUP)) && (pair.upstream_mask & EPOLLIN)) {
    if (!read_upstream(pair)) return false;
  }
  return flush_to_upstream(pair) && flush_to_client(pair);
}

bool ReplyRelay::Impl::finish_connect(Pair& pair) {
  int error = 0;
  socklen_t length = sizeof error;
  if (getsockopt(pair.upstream.get(), SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
  if (error != 0) return fail(pair, "upstream connect", error);
  pair.connecting = false;
  return flush_to_upstream(pair);
}

bool ReplyRelay::Impl::read_client(Pair& pair) {
  assert(pair.pending_bytes() < kRelayMaxPendingBytes);
  size_t room = std::min(kRelayReadChunkBytes, kRelayMaxPendingBytes - pair.pending_bytes());
  ssize_t n = ::recv(pair.client.get(), read_buffer_.data(), room, 0);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return true;
    return fail(pair, "client read", errno);
  }
  if (n == 0) {
    pair.client_eof = true;
    return true;
  }
  if (pair.pending_offset == pair.pending.size()) {
    pair.pending.clear();
    pair.pending_offset = 0;
  }
  pair.pending.append(read_buffer_.data(), static_cast<size_t>(n));
  return true;
}

bool ReplyRelay::Impl::read_upstream(Pair& pair) {
  assert(pair.held_bytes < kRelayMaxHeldBytes);
  size_t room = std::min(kRelayReadChunkBytes, kRelayMaxHeldBytes - pair.held_bytes);
  ssize_t n = ::recv(pair.upstream.get(), read_buffer_.data(), room, 0);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return true;
    return fail(pair, "upstream read", errno);
  }
  if (n == 0) {
    pair.upstream_eof = true;
    return true;
  }
  int64_t delay_ms = delay_.current_ms();
  assert(delay_ms >= 0 && delay_ms <= kRelayMaxDelayMs);
  HeldChunk chunk;
  chunk.bytes.assign(read_buffer_.data(), static_cast<size_t>(n));
  chunk.release_at_ns = now_ns() + delay_ms * 1'000'000;
  pair.held.push_back(std::move(chunk));
  pair.held_bytes += static_cast<size_t>(n);
  return true;
}

bool ReplyRelay::Impl::flush_to_upstream(Pair& pair) {
  if (pair.connecting || pair.upstream_write_shut) return true;
  while (pair.pending_bytes() > 0) {
    ssize_t n = ::send(pair.upstream.get(), pair.pending.data() + pair.pending_offset,
                       pair.pending_bytes(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return fail(pair, "upstream write", errno);
    }
    pair.pending_offset += static_cast<size_t>(n);
  }
  if (pair.pending_bytes() == 0) {
    pair.pending.clear();
    pair.pending_offset = 0;
    if (pair.client_eof) {
      if (shutdown(pair.upstream.get(), SHUT_WR) != 0 && errno != ENOTCONN)
        return fail(pair, "upstream shutdown", errno);
      pair.upstream_write_shut = true;
    }
  } else if (pair.pending_offset > pair.pending.size() / 2) {
    pair.pending.erase(0, pair.pending_offset);
    pair.pending_offset = 0;
  }
  return true;
}

bool ReplyRelay::Impl::flush_to_client(Pair& pair) {
  if (pair.client_blocked || pair.client_write_shut) return true;
  while (!pair.held.empty() && pair.held.front().release_at_ns <= now_ns()) {
    const std::string& bytes = pair.held.front().bytes;
    ssize_t n = ::send(pair.client.get(), bytes.data() + pair.head_offset,
                       bytes.size() - pair.head_offset, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        pair.client_blocked = true;
        return true;
      }
      return fail(pair, "client write", errno);
    }
    pair.head_offset += static_cast<size_t>(n);
    pair.held_bytes -= static_cast<size_t>(n);
    if (pair.head_offset == bytes.size()) {
      pair.held.pop_front();
      pair.head_offset = 0;
    }
  }
  if (pair.held.empty() && pair.upstream_eof) {
    assert(pair.held_bytes == 0);
    if (shutdown(pair.client.get(), SHUT_WR) != 0 && errno != ENOTCONN)
      return fail(pair, "client shutdown", errno);
    pair.client_write_shut = true;
  }
  return true;
}

bool ReplyRelay::Impl::fail(Pair& pair, const std::string& what, int error) {
  log_line(pair.label + ": " + what + ": " + errno_text(error) + "; closing both sides");
  return false;
}

// After an event: a pair that failed is reset on both sides, a finished one closed, any other
// gets its epoll interest brought up to date.
void ReplyRelay::Impl::settle(Pair& pair, bool alive) {
  if (!alive) {
    reset_on_close(pair.client.get());
    reset_on_close(pair.upstream.get());
  }
  if (!alive || pair.done()) {
    pairs_.erase(pair.id);  // closing a socket removes it from epoll
    pause_accepting(false);
    return;
  }
  update_interest(pair);
}

void ReplyRelay::Impl::set_interest(int fd, uint64_t tag, uint32_t& registered, uint32_t wanted) {
  if (wanted == registered) return;
  epoll_event event{};
  event.events = wanted;
  event.data.u64 = tag;
  int op = wanted == 0 ? EPOLL_CTL_DEL : registered == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
  if (epoll_ctl(epoll_.get(), op, fd, &event) != 0) throw_errno("epoll_ctl(connection)");
  registered = wanted;
}

void ReplyRelay::Impl::update_interest(Pair& pair) {
  uint32_t client = 0;
  if (!pair.client_eof && pair.pending_bytes() < kRelayMaxPendingBytes) client |= EPOLLIN;
  if (pair.client_blocked) client |= EPOLLOUT;
  uint32_t upstream = 0;
  if (pair.connecting) {
    upstream = EPOLLOUT;
  } else {
    if (!pair.upstream_eof && pair.held_bytes < kRelayMaxHeldBytes) upstream |= EPOLLIN;
    if (pair.pending_bytes() > 0 && !pair.upstream_write_shut) upstream |= EPOLLOUT;
  }
  set_interest(pair.client.get(), pair.id * 2, pair.client_mask, client);
  set_interest(pair.upstream.get(), pair.id * 2 + 1, pair.upstream_mask, upstream);
}

// Writes every chunk whose release time has come to its client.
void ReplyRelay::Impl::release_due() {
  int64_t now = now_ns();
  std::vector<uint64_t> due;
  for (const auto& [id, pair] : pairs_) {
    if (!pair->client_blocked && !pair->held.empty() && pair->held.front().release_at_ns <= now)
      due.push_back(id);
  }
  for (uint64_t id : due) {
    Pair& pair = *pairs_.at(id);
    settle(pair, flush_to_client(pair));
  }
}

// Until the earliest release among pairs that can write, rounded up so the wait never ends
// before it; -1 (no timeout) when nothing is held.
int ReplyRelay::Impl::wait_timeout_ms() const {
  std::optional<int64_t> earliest;
  for (const auto& [id, pair] : pairs_) {
    if (pair->client_blocked || pair->held.empty()) continue;
    int64_t at = pair->held.front().release_at_ns;
    if (!earliest || at < *earliest) earliest = at;
  }
  if (!earliest) return -1;
  int64_t wait_ns = *earliest - now_ns();
  if (wait_ns <= 0) return 0;
  return static_cast<int>(std::min<int64_t>((wait_ns + 999'999) / 1'000'000, kRelayMaxDelayMs));
}

std::string Ipv4Endpoint::text() const {
  char buffer[INET_ADDRSTRLEN] = {};
  in_addr address{};
  address.s_addr = address_be;
  inet_ntop(AF_INET, &address, buffer, sizeof buffer);
  return std::string(buffer) + ":" + std::to_string(port);
}

std::optional<Ipv4Endpoint> parse_ipv4_endpoint(std::string_view text, std::string& why) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    why = "expected A.B.C.D:PORT";
    return std::nullopt;
  }
  std::string host(text.substr(0, colon));
  std::string_view port_text = text.substr(colon + 1);
  in_addr address{};
  if (host.empty() || inet_pton(AF_INET, host.c_str(), &address) != 1) {
    why = "not an IPv4 address: " + quoted(host);
    return std::nullopt;
  }
  unsigned port = 0;
  auto [end, error] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || error != std::errc() || end != port_text.data() + port_text.size() ||
      port > 65535) {
    why = "port " + quoted(port_text) + " is not in 0..65535";
    return std::nullopt;
  }
  return Ipv4Endpoint{address.s_addr, static_cast<uint16_t>(port)};
}

std::optional<int64_t> parse_delay_ms(std::string_view content) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!content.empty() && space(content.front())) content.remove_prefix(1);
  while (!content.empty() && space(content.back())) content.remove_suffix(1);
  if (content.empty()) return 0;
  for (char c : content)
    if (c < '0' || c > '9') return std::nullopt;
  int64_t value = 0;
  auto [end, error] = std::from_chars(content.data(), content.data() + content.size(), value);
  if (error != std::errc() || end != content.data() + content.size() || value > kRelayMaxDelayMs)
    return std::nullopt;
  return value;
}

ReplyRelay::ReplyRelay(ReplyRelayOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
ReplyRelay::~ReplyRelay() = default;
uint16_t ReplyRelay::port() const {
  return impl_->port();
}
void ReplyRelay::run() {
  impl_->run();
}
void ReplyRelay::request_stop() noexcept {
  impl_->request_stop();
}

}  // namespace locklab
