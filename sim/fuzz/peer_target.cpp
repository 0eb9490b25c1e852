#include "fuzz/peer_target.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "fuzz/fuzz_member.h"
#include "fuzz/wire_target.h"
#include "server/op_msg.h"
#include "server/wire.h"

namespace mongosim::fuzz {
namespace {

using Script = std::map<std::string, std::deque<bson::Document>>;
using Clock = std::chrono::steady_clock;

// How long the peer waits for one request's bytes, and how often its accept loop looks at stop.
constexpr int kPeerReadTimeoutMs = 200;
constexpr int kAcceptPollMs = 5;
// Requests the peer remembers for PeerRun::received.
constexpr size_t kMaxReceived = 10'000;
// The largest request the peer reads (a heartbeat carries the config; nothing is near this).
constexpr size_t kMaxRequestBytes = 1024 * 1024;

// The script's replies by command, in order (peer_target.h: frames up to the first malformed one,
// bodies of another shape skipped, at most kMaxPeerReplies).
Script parse_script(const uint8_t* data, size_t size) {
  Script script;
  size_t kept = 0;
  size_t at = 0;
  while (size - at >= server::kHeaderBytes && kept < kMaxPeerReplies) {
    const server::MessageHeader h = server::decode_header(data + at);
    if (h.message_length < static_cast<int32_t>(server::kHeaderBytes) ||
        static_cast<size_t>(h.message_length) > size - at) {
      break;
    }
    const auto length = static_cast<size_t>(h.message_length);
    server::OpMsgParse parsed = h.op_code == server::opcode::kMsg
                                    ? server::parse_op_msg(data + at, length)
                                    : server::OpMsgParse{};
    at += length;
    if (!parsed.request) continue;
    const bson::Value* command = parsed.request->body.get("reply");
    const bson::Value* body = parsed.request->body.get("body");
    if (command == nullptr || !command->is_string() || body == nullptr || !body->is_document()) {
      continue;
    }
    script[command->as_string()].push_back(body->as_document());
    ++kept;
  }
  return script;
}

bool read_exact(int fd, uint8_t* out, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t k = ::recv(fd, out + got, n - got, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;  // closed, or SO_RCVTIMEO passed
    got += static_cast<size_t>(k);
  }
  return true;
}

// A peer on 127.0.0.1:<ephemeral port> that answers each request (one per connection, as
// member_client.h sends them) with the script's next reply for its command, and closes the
// connection without a reply when the script has none left (the member sees silence).
class FakePeer {
 public:
  explicit FakePeer(Script script) : script_(std::move(script)) {
    for (const auto& [name, replies] : script_) left_ += replies.size();
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(listen_fd_, 64) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      if (listen_fd_ >= 0) ::close(listen_fd_);
      throw std::runtime_error("fake peer: cannot listen on 127.0.0.1");
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { accept_loop(); });
  }
  ~FakePeer() {
    stop_ = true;
    thread_.join();
    ::close(listen_fd_);
  }
  FakePeer(const FakePeer&) = delete;
  FakePeer& operator=(const FakePeer&) = delete;

  int port() const { return port_; }
  // Requests received so far, and whether every scripted reply was sent.
  uint64_t requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  bool spent() const {
    std::lock_guard lock(mutex_);
    return left_ == 0;
  }
  // Returns once a request after the first `seen` arrived, or at `deadline`.
  void wait_for_request(uint64_t seen, Clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    request_cv_.wait_until(lock, deadline, [&] { return requests_ > seen; });
  }
  std::vector<std::string> received() const {
    std::lock_guard lock(mutex_);
    return received_;
  }

 private:
  void accept_loop() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, kAcceptPollMs) <= 0) continue;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      answer(fd);
      ::close(fd);
    }
  }

  void answer(int fd) {
    timeval timeout{0, kPeerReadTimeoutMs * 1000};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    std::vector<uint8_t> message(server::kHeaderBytes);
    if (!read_exact(fd, message.data(), message.size())) return;
    const server::MessageHeader h = server::decode_header(message.data());
    if (h.message_length < static_cast<int32_t>(server::kHeaderBytes) ||
        static_cast<size_t>(h.message_length) > kMaxRequestBytes) {
      return;
    }
    message.resize(static_cast<size_t>(h.message_length));
    if (!read_exact(fd, message.data() + server::kHeaderBytes,
                    message.size() - server::kHeaderBytes)) {
      return;
    }
    const server::OpMsgParse parsed = server::parse_op_msg(message.data(), message.size());
    if (!parsed.request || parsed.request->body.empty()) return;
    const std::string command = parsed.request->body.first_key();
    std::optional<bson::Document> reply;
    {
      std::lock_guard lock(mutex_);
      ++requests_;
      if (received_.size() < kMaxReceived) received_.push_back(command);
      auto it = script_.find(command);
      if (it != script_.end() && !it->second.empty()) {
        reply = std::move(it->second.front());
        it->second.pop_front();
        --left_;
      }
    }
    // Woken before the reply leaves: a waiter then reads the member's state as of its request,
    // never one this reply already changed.
    request_cv_.notify_all();
    if (reply) {
      const std::string bytes = server::encode_op_msg(next_id_++, h.request_id, *reply);
      (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    }
  }

  mutable std::mutex mutex_;
  std::condition_variable request_cv_;
  Script script_;                      // under mutex_
  size_t left_ = 0;                    // replies not yet sent, under mutex_
  uint64_t requests_ = 0;              // under mutex_
  std::vector<std::string> received_;  // under mutex_
  int32_t next_id_ = 1;                // the accept thread's
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: it reads the members above
};

// This member (127.0.0.1:1) and the peer, with heartbeats and elections fast enough that a run
// of kPeerBudgetMs sees several of each.
bson::Document peer_config(int peer_port) {
  auto member = [](int32_t id, const std::string& host) {
    return bson::V(bson::Document{{"_id", bson::V(id)}, {"host", bson::V(host)}});
  };
  return bson::Document{
      {"_id", bson::V("fuzz")},
      {"members", bson::V(bson::Array{member(0, "127.0.0.1:1"),
                                      member(1, "127.0.0.1:" + std::to_string(peer_port))})},
      {"settings",
       bson::V(bson::Document{{"heartbeatIntervalMillis", bson::V(kPeerHeartbeatMs)},
                              {"electionTimeoutMillis", bson::V(kPeerElectionTimeoutMs)}})}};
}

}  // namespace

std::string peer_reply(const std::string& command, const bson::Document& body) {
  return server::encode_op_msg_request(
      0, 0,
      bson::Document{
          {"reply", bson::V(command)}, {"body", bson::V(body)}, {"$db", bson::V("admin")}},
      {}, false);
}

PeerRun serve_peer_input(const uint8_t* data, size_t size, const PeerRunOptions& options) {
  silence_once();
  PeerRun run;
  Script script = parse_script(data, size);
  if (script.empty()) return run;  // a silent peer: the wire target's secondary covers it
  FakePeer peer(std::move(script));
  {
    SetMember member;  // destroyed before the peer, which answers (or closes) to the end
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(options.budget_ms);
    serve_connection(member.context(), initiate_message(peer_config(peer.port())), nullptr, 0,
                     nullptr);
    auto observe = [&] {
      run.final_state = member.server.context().replica.snapshot().state;
      run.last_applied = member.store.last_applied();
      run.received = peer.received();
    };
    // Looked at whenever the peer receives a request (the member's heartbeats come every
    // kPeerHeartbeatMs): an event, never a sleep.
    std::optional<uint64_t> spent_at;  // requests when the script was found spent
    for (uint64_t seen = peer.requests(); Clock::now() < deadline; seen = peer.requests()) {
      observe();
      if (options.until) {
        if (options.until(run)) break;
      } else if (spent_at) {
        if (seen > *spent_at) break;  // one request after the last reply: the member acted on it
      } else if (peer.spent()) {
        spent_at = seen;
      }
      peer.wait_for_request(seen, deadline);
    }
    observe();
  }
  run.received = peer.received();  // with the requests the member sent while it stopped
  return run;
}

void run_peer_input(const uint8_t* data, size_t size) {
  if (size > kMaxInputBytes) return;
  (void)serve_peer_input(data, size, PeerRunOptions{});
}

}  // namespace mongosim::fuzz
