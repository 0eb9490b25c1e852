#include "fuzz/wire_target.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <csignal>
#include <memory>
#include <thread>

#include "base/log.h"
#include "data/store.h"
#include "server/connection.h"
#include "server/dispatcher.h"
#include "server/server.h"

namespace mongosim::fuzz {
namespace {

// Writes the whole input, then half-closes so the server sees end-of-stream after the last byte.
void write_then_close(int fd, const uint8_t* data, size_t size) {
  size_t sent = 0;
  while (sent < size) {
    ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the server closed the connection: the rest is never read
    sent += static_cast<size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
}

// Reads and discards replies until the server side is closed, so replies never fill the socket
// buffer and stall the connection thread.
void drain(int fd) {
  char buffer[16 * 1024];
  while (true) {
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
  }
}

// A standalone server with the data layer's commands, as sim/main.cpp builds one, but never
// listening: the fuzz input arrives on a socketpair instead of an accepted socket.
struct Fixture {
  Fixture() : server(server::ServerOptions{}), store(store_options(server.context())) {
    store.register_commands(server.context().registry);
    server.context().attach_oplog(store);
  }

  static data::StoreOptions store_options(server::ServerContext& ctx) {
    data::StoreOptions o;
    o.clock = &ctx.clock;
    o.failpoints = &ctx.failpoints;
    o.current_term = [] { return int64_t{0}; };
    // A standalone, as sim/main.cpp wires one: change streams are refused (40573) after their
    // stage is parsed, so no getMore can wait on the fuzz input's connection.
    o.replica_set = [] { return false; };
    o.change_signal = &ctx.change_signal;
    return o;
  }

  server::Server server;
  data::Store store;
};

void silence_once() {
  static const bool done = [] {
    server::set_log_fd(-1);
    std::signal(SIGPIPE, SIG_IGN);
    return true;
  }();
  (void)done;
}

}  // namespace

void run_wire_input(const uint8_t* data, size_t size) {
  if (size > kMaxInputBytes) return;
  silence_once();
  auto fixture = std::make_unique<Fixture>();
  server::Dispatcher dispatcher(fixture->server.context());

  int fds[2];
  [[maybe_unused]] int rc = ::socketpair(AF_UNIX, SOCK_STREAM, 0, fds);
  assert(rc == 0);
  const int client_fd = fds[0];
  const int server_fd = fds[1];

  std::thread writer([&] { write_then_close(client_fd, data, size); });
  std::thread reader([&] { drain(client_fd); });
  server::Connection(fixture->server.context(), dispatcher, server_fd, 1, "fuzz:0").serve();
  ::shutdown(server_fd, SHUT_RDWR);  // ends the drain and any write the server never read
  writer.join();
  reader.join();
  ::close(server_fd);
  ::close(client_fd);
  fixture->store.stop();
}

}  // namespace mongosim::fuzz
