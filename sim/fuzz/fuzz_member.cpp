#include "fuzz/fuzz_member.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <thread>

#include "base/log.h"
#include "fuzz/wire_target.h"
#include "server/connection.h"
#include "server/dispatcher.h"
#include "server/member_store.h"
#include "server/op_msg.h"

namespace mongosim::fuzz {
namespace {

// Writes the whole input, then half-closes so the server sees end-of-stream after the last byte.
void write_then_close(int fd, const std::string& prefix, const uint8_t* data, size_t size) {
  auto write_all = [fd](const uint8_t* bytes, size_t n) {
    size_t sent = 0;
    while (sent < n) {
      ssize_t k = ::send(fd, bytes + sent, n - sent, MSG_NOSIGNAL);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) return false;  // the server closed the connection: the rest is never read
      sent += static_cast<size_t>(k);
    }
    return true;
  };
  if (write_all(reinterpret_cast<const uint8_t*>(prefix.data()), prefix.size()))
    write_all(data, size);
  ::shutdown(fd, SHUT_WR);
}

// Reads replies until the server side is closed, so replies never fill the socket buffer and
// stall the connection thread; keeps the first `keep` bytes in `out` (if given).
void drain(int fd, std::string* out, size_t keep) {
  char buffer[16 * 1024];
  while (true) {
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    if (out != nullptr && out->size() < keep)
      out->append(buffer, std::min(static_cast<size_t>(n), keep - out->size()));
  }
}

data::StoreOptions store_options(server::ServerContext& ctx, ReplStateLock& repl_state_lock) {
  data::StoreOptions o = server::member_store_options(ctx, repl_state_lock);
  o.cursor_id_seed = kCursorIdSeed;
  return o;
}

server::ServerOptions set_options() {
  server::ServerOptions o;
  o.repl_set = "fuzz";
  o.port = 1;  // the member's own host:port in its config (fuzz_member.h)
  return o;
}

// Shuts the member down if serving has not ended within kServeBudgetMs.
class ServeWatchdog {
 public:
  explicit ServeWatchdog(server::ServerContext& ctx)
      : thread_([this, &ctx] {
          std::unique_lock lock(mutex_);
          if (!done_cv_.wait_for(lock, std::chrono::milliseconds(kServeBudgetMs),
                                 [this] { return done_; })) {
            ctx.request_shutdown();
          }
        }) {}
  ~ServeWatchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
    thread_.join();
  }
  ServeWatchdog(const ServeWatchdog&) = delete;
  ServeWatchdog& operator=(const ServeWatchdog&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;  // last: it reads the members above
};

}  // namespace

void silence_once() {
  static const bool done = [] {
    server::set_log_fd(-1);
    std::signal(SIGPIPE, SIG_IGN);
    return true;
  }();
  (void)done;
}

Standalone::Standalone()
    : server(server::ServerOptions{}), store(store_options(server.context(), repl_state_lock)) {
  store.register_commands(server.context().registry);
  server.context().attach_oplog(store);
}

Standalone::~Standalone() {
  store.stop();
}

SetMember::SetMember()
    : server(set_options()),
      store(store_options(server.context(), repl_state_lock)),
      replication(server.context(), store, repl_state_lock, nullptr) {
  store.register_commands(server.context().registry);
  server.context().attach_oplog(store);
  replication.register_commands();
  replication.start();
}

SetMember::~SetMember() {
  replication.stop();
  store.stop();
}

std::string initiate_message(const bson::Document& config) {
  bson::Document initiate{{"replSetInitiate", bson::V(config)}, {"$db", bson::V("admin")}};
  return server::encode_op_msg_request(0, 0, initiate, {}, false);
}

void serve_connection(server::ServerContext& ctx, const std::string& prefix, const uint8_t* data,
                      size_t size, std::string* replies) {
  server::Dispatcher dispatcher(ctx);
  int fds[2];
  [[maybe_unused]] int rc = ::socketpair(AF_UNIX, SOCK_STREAM, 0, fds);
  assert(rc == 0);
  const int client_fd = fds[0];
  const int server_fd = fds[1];
  std::thread writer([&] { write_then_close(client_fd, prefix, data, size); });
  std::thread reader([&] { drain(client_fd, replies, kMaxReplyBytes); });
  {
    ServeWatchdog watchdog(ctx);
    server::Connection(ctx, dispatcher, server_fd, 1, "fuzz:0").serve();
  }
  ::shutdown(server_fd, SHUT_RDWR);  // ends the drain and any write the server never read
  writer.join();
  reader.join();
  ::close(server_fd);
  ::close(client_fd);
}

}  // namespace mongosim::fuzz
