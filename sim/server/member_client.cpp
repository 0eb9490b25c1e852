#include "server/member_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "bson/codec.h"
#include "server/op_msg.h"
#include "server/wire.h"

namespace mongosim::server {

namespace {

std::atomic<int32_t> next_request_id{1};

int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// Waits until fd is ready for `events` or the deadline passes.
bool wait_ready(int fd, short events, int64_t deadline_ms) {
  for (;;) {
    int64_t left_ms = deadline_ms - steady_ms();
    if (left_ms <= 0) return false;
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>(left_ms));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

bool connect_to(int fd, const std::string& host, int64_t deadline_ms, std::string& error) {
  size_t colon = host.rfind(':');
  if (colon == std::string::npos) {
    error = "no port in host " + host;
    return false;
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string name = host.substr(0, colon);
  std::string port = host.substr(colon + 1);
  if (::getaddrinfo(name.c_str(), port.c_str(), &hints, &res) != 0 || res == nullptr) {
    error = "cannot resolve " + host;
    return false;
  }
  int rc = ::connect(fd, res->ai_addr, res->ai_addrlen);
  ::freeaddrinfo(res);
  if (rc != 0 && errno != EINPROGRESS) {
    error = "connect to " + host + " failed: " + std::strerror(errno);
    return false;
  }
  if (rc != 0) {
    if (!wait_ready(fd, POLLOUT, deadline_ms)) {
      error = "connect to " + host + " timed out";
      return false;
    }
    int so_error = 0;
    socklen_t len = sizeof so_error;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
    if (so_error != 0) {
      error = "connect to " + host + " failed: " + std::strerror(so_error);
      return false;
    }
  }
  return true;
}

bool send_all(int fd, const std::string& data, int64_t deadline_ms) {
  size_t sent = 0;
  while (sent < data.size()) {
    if (!wait_ready(fd, POLLOUT, deadline_ms)) return false;
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

bool recv_exact(int fd, uint8_t* out, size_t size, int64_t deadline_ms) {
  size_t got = 0;
  while (got < size) {
    if (!wait_ready(fd, POLLIN, deadline_ms)) return false;
    ssize_t n = ::recv(fd, out + got, size - got, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

// flagBits, then one kind-0 section holding the body (what encode_op_msg produces).
MemberReply decode_reply(const std::string& host, const std::vector<uint8_t>& message) {
  MemberReply out;
  constexpr size_t kBodyOffset = kHeaderBytes + 4 + 1;
  if (message.size() <= kBodyOffset || message[kHeaderBytes + 4] != 0) {
    out.error = "unexpected reply layout from " + host;
    return out;
  }
  const uint8_t* body = message.data() + kBodyOffset;
  size_t left = message.size() - kBodyOffset;
  int32_t len = bson::peek_document_length(body, left);
  if (len <= 0 || static_cast<size_t>(len) > left) {
    out.error = "bad reply document from " + host;
    return out;
  }
  bson::DecodeResult decoded = bson::decode_document(body, static_cast<size_t>(len));
  if (!decoded.doc) {
    out.error = "bad reply document from " + host + ": " + decoded.error;
    return out;
  }
  out.body = std::move(*decoded.doc);
  return out;
}

}  // namespace

MemberReply run_member_command(const std::string& host, const std::string& db,
                               const bson::Document& command, int64_t timeout_ms) {
  MemberReply out;
  int64_t deadline_ms = steady_ms() + timeout_ms;
  Socket sock(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (sock.fd() < 0) {
    out.error = "socket: " + std::string(std::strerror(errno));
    return out;
  }
  int one = 1;
  ::setsockopt(sock.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (!connect_to(sock.fd(), host, deadline_ms, out.error)) return out;
  bson::Document body = command;
  body.append("$db", bson::V(db));
  std::string request = encode_op_msg_request(next_request_id.fetch_add(1), 0, body);
  if (!send_all(sock.fd(), request, deadline_ms)) {
    out.error = "sending to " + host + " failed or timed out";
    return out;
  }
  std::vector<uint8_t> message(kHeaderBytes);
  if (!recv_exact(sock.fd(), message.data(), kHeaderBytes, deadline_ms)) {
    out.error = "no reply from " + host + " within " + std::to_string(timeout_ms) + " ms";
    return out;
  }
  MessageHeader header = decode_header(message.data());
  if (header.message_length < static_cast<int32_t>(kHeaderBytes) ||
      static_cast<size_t>(header.message_length) > kMaxMemberReplyBytes ||
      header.op_code != opcode::kMsg) {
    out.error = "bad reply header from " + host;
    return out;
  }
  message.resize(static_cast<size_t>(header.message_length));
  if (!recv_exact(sock.fd(), message.data() + kHeaderBytes, message.size() - kHeaderBytes,
                  deadline_ms)) {
    out.error = "reply from " + host + " cut short";
    return out;
  }
  return decode_reply(host, message);
}

}  // namespace mongosim::server
