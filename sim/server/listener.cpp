#include "server/listener.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "base/log.h"
#include "server/connection.h"

namespace mongosim::server {

namespace {

constexpr int kListenBacklog = 128;
// The accept thread wakes at least this often to join finished connection threads.
constexpr int kReapIntervalMs = 1000;

std::string errno_text() {
  return std::strerror(errno);
}

std::string peer_name(const sockaddr_in& addr) {
  char ip[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &addr.sin_addr, ip, sizeof ip);
  return std::string(ip) + ":" + std::to_string(ntohs(addr.sin_port));
}

int listen_on(const std::string& address, int32_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  std::string ip = address == "localhost" ? "127.0.0.1" : address;
  if (inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1) {
    throw std::runtime_error("--bind_ip: '" + address + "' is not an IPv4 address");
  }
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket(): " + errno_text());
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd, kListenBacklog) != 0) {
    std::string why = errno_text();
    ::close(fd);
    throw std::runtime_error("cannot listen on " + address + ":" + std::to_string(port) + ": " +
                             why);
  }
  return fd;
}

}  // namespace

Listener::Listener(ServerContext& server, Dispatcher& dispatcher)
    : server_(server), dispatcher_(dispatcher) {}

Listener::~Listener() {
  stop();
}

void Listener::bind_and_listen() {
  assert(listen_fds_.empty());
  try {
    for (const auto& address : server_.options.bind_ips) {
      listen_fds_.push_back(listen_on(address, server_.options.port));
    }
  } catch (...) {
    for (int fd : listen_fds_) ::close(fd);
    listen_fds_.clear();
    throw;
  }
  if (::pipe2(wake_pipe_, O_CLOEXEC) != 0) throw std::runtime_error("pipe2(): " + errno_text());
}

void Listener::start() {
  assert(!listen_fds_.empty() && !accept_thread_.joinable());
  accept_thread_ = std::thread([this] { accept_loop(); });
}

void Listener::accept_loop() {
  std::vector<pollfd> fds;
  for (int fd : listen_fds_) fds.push_back(pollfd{fd, POLLIN, 0});
  fds.push_back(pollfd{wake_pipe_[0], POLLIN, 0});
  while (true) {
    int ready = ::poll(fds.data(), fds.size(), kReapIntervalMs);
    reap_finished();
    if (ready < 0 && errno != EINTR) return;
    if (fds.back().revents != 0) return;  // stop() wrote to the wake pipe
    for (size_t i = 0; i + 1 < fds.size(); ++i) {
      if (fds[i].revents & POLLIN) accept_one(fds[i].fd);
    }
  }
}

void Listener::accept_one(int listen_fd) {
  sockaddr_in peer{};
  socklen_t len = sizeof peer;
  int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_CLOEXEC);
  if (fd < 0) return;  // the client gave up between poll and accept, or fds ran out
  std::string remote = peer_name(peer);
  if (server_.metrics.current_connections() >= kMaxConnections) {
    log_event(Severity::kWarning, "NETWORK", log_id::kConnectionRefused, "listener",
              "Connection refused because there are too many open connections",
              bson::Document{{"remote", bson::V(remote)},
                             {"connectionCount", bson::V(server_.metrics.current_connections())}});
    ::close(fd);
    return;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  auto client = std::make_unique<Client>();
  Client* c = client.get();
  c->id = next_connection_id_++;
  c->fd = fd;
  c->remote = remote;
  server_.metrics.connection_opened();
  log_event(Severity::kInfo, "NETWORK", log_id::kConnectionAccepted, "listener",
            "Connection accepted",
            bson::Document{{"remote", bson::V(remote)},
                           {"connectionId", bson::V(c->id)},
                           {"connectionCount", bson::V(server_.metrics.current_connections())}});
  std::lock_guard<std::mutex> lock(mutex_);
  c->thread = std::thread([this, c] {
    Connection(server_, dispatcher_, c->fd, c->id, c->remote).serve();
    // The client sees the close now; the descriptor itself is closed when the thread is joined.
    ::shutdown(c->fd, SHUT_RDWR);
    server_.metrics.connection_closed();
    log_event(Severity::kInfo, "NETWORK", log_id::kConnectionEnded, "conn" + std::to_string(c->id),
              "Connection ended",
              bson::Document{{"remote", bson::V(c->remote)},
                             {"connectionId", bson::V(c->id)},
                             {"connectionCount", bson::V(server_.metrics.current_connections())}});
    c->done.store(true);
  });
  clients_.push_back(std::move(client));
}

void Listener::reap_finished() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = clients_.begin(); it != clients_.end();) {
    if (!(*it)->done.load()) {
      ++it;
      continue;
    }
    (*it)->thread.join();
    ::close((*it)->fd);
    it = clients_.erase(it);
  }
}

void Listener::stop() {
  if (accept_thread_.joinable()) {
    char byte = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_pipe_[1], &byte, 1);
    accept_thread_.join();
  }
  for (int fd : listen_fds_) ::close(fd);
  listen_fds_.clear();
  std::list<std::unique_ptr<Client>> remaining;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    remaining.swap(clients_);
  }
  // Wake every blocked read; the descriptors stay open until their threads are joined.
  for (auto& c : remaining) ::shutdown(c->fd, SHUT_RDWR);
  for (auto& c : remaining) {
    c->thread.join();
    ::close(c->fd);
  }
  for (int& fd : wake_pipe_) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
}

}  // namespace mongosim::server
