#include "fuzz/wire_target.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "base/log.h"
#include "base/repl_state_lock.h"
#include "data/cursors.h"
#include "data/store.h"
#include "server/connection.h"
#include "server/dispatcher.h"
#include "server/member_store.h"
#include "server/op_msg.h"
#include "server/replication.h"
#include "server/server.h"

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

// A standalone server with the data layer's commands, as sim/main.cpp builds one without
// --replSet, but never listening: the input arrives on a socketpair instead of an accepted socket.
struct Standalone {
  Standalone()
      : server(server::ServerOptions{}), store(store_options(server.context(), repl_state_lock)) {
    store.register_commands(server.context().registry);
    server.context().attach_oplog(store);
  }
  ~Standalone() { store.stop(); }
  Standalone(const Standalone&) = delete;
  Standalone& operator=(const Standalone&) = delete;

  server::ServerContext& context() { return server.context(); }
  std::string prefix() const { return {}; }

  server::Server server;
  ReplStateLock repl_state_lock;
  data::Store store;
};

server::ServerOptions set_options() {
  server::ServerOptions o;
  o.repl_set = "fuzz";
  // The member's own host:port in its config. Ports 1 and 2 (the other member's) are never
  // served here, so nothing the member sends to its config's hosts reaches another process.
  o.port = 1;
  return o;
}

// The replSetInitiate sent ahead of the input: an empty config (this member alone, which makes
// it primary at once), or this member and one on port 2, which never answers (this member
// stays a secondary and serves the member-to-member commands of a set with a topology).
std::string initiate_message(Topology topology) {
  bson::Document config;
  if (topology == Topology::kSecondaryOfTwo) {
    auto member = [](int32_t id, const char* host) {
      return bson::V(bson::Document{{"_id", bson::V(id)}, {"host", bson::V(host)}});
    };
    config = bson::Document{
        {"_id", bson::V("fuzz")},
        {"members", bson::V(bson::Array{member(0, "127.0.0.1:1"), member(1, "127.0.0.1:2")})}};
  }
  bson::Document initiate{{"replSetInitiate", bson::V(std::move(config))},
                          {"$db", bson::V("admin")}};
  return server::encode_op_msg_request(0, 0, initiate, {}, false);
}

// A replica-set member wired as sim/main.cpp wires one (store, replication-state lock,
// replication coordinator and its threads); prefix() is the replSetInitiate that configures it.
struct SetMember {
  explicit SetMember(Topology topology)
      : topology_(topology),
        server(set_options()),
        store(store_options(server.context(), repl_state_lock)),
        replication(server.context(), store, repl_state_lock, nullptr) {
    store.register_commands(server.context().registry);
    server.context().attach_oplog(store);
    replication.register_commands();
    replication.start();
  }
  ~SetMember() {
    replication.stop();
    store.stop();
  }
  SetMember(const SetMember&) = delete;
  SetMember& operator=(const SetMember&) = delete;

  server::ServerContext& context() { return server.context(); }
  std::string prefix() const { return initiate_message(topology_); }

  const Topology topology_;
  server::Server server;
  ReplStateLock repl_state_lock;
  data::Store store;
  server::ReplicationCoordinator replication;
};

void silence_once() {
  static const bool done = [] {
    server::set_log_fd(-1);
    std::signal(SIGPIPE, SIG_IGN);
    return true;
  }();
  (void)done;
}

// Shuts the member down if serving has not ended within kServeBudgetMs (wire_target.h).
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

template <typename Member>
void serve(std::unique_ptr<Member> member, const uint8_t* data, size_t size, std::string* replies) {
  server::Dispatcher dispatcher(member->context());
  int fds[2];
  [[maybe_unused]] int rc = ::socketpair(AF_UNIX, SOCK_STREAM, 0, fds);
  assert(rc == 0);
  const int client_fd = fds[0];
  const int server_fd = fds[1];
  const std::string prefix = member->prefix();
  std::thread writer([&] { write_then_close(client_fd, prefix, data, size); });
  std::thread reader([&] { drain(client_fd, replies, kMaxReplyBytes); });
  {
    ServeWatchdog watchdog(member->context());
    server::Connection(member->context(), dispatcher, server_fd, 1, "fuzz:0").serve();
  }
  ::shutdown(server_fd, SHUT_RDWR);  // ends the drain and any write the server never read
  writer.join();
  reader.join();
  ::close(server_fd);
  ::close(client_fd);
}

}  // namespace

int64_t cursor_id(int n) {
  assert(n >= 1);
  data::CursorManager cursors(kCursorIdSeed);
  int64_t id = 0;
  for (int i = 0; i < n; ++i) {
    std::deque<bson::Document> two(2);  // one for the first batch, one left for the cursor
    id = cursors.open("fuzz.c", std::move(two), 1, false, 0)
             .get("cursor")
             ->as_document()
             .get("id")
             ->as_int64();
  }
  return id;
}

void run_wire_input(const uint8_t* data, size_t size) {
  if (size > kMaxInputBytes) return;
  for (Topology topology : kTopologies) serve_wire_input(data, size, topology, nullptr);
}

std::string serve_wire_input(const uint8_t* data, size_t size, Topology topology) {
  std::string replies;
  serve_wire_input(data, size, topology, &replies);
  return replies;
}

void serve_wire_input(const uint8_t* data, size_t size, Topology topology, std::string* replies) {
  silence_once();
  if (topology == Topology::kStandalone) {
    serve(std::make_unique<Standalone>(), data, size, replies);
  } else {
    serve(std::make_unique<SetMember>(topology), data, size, replies);
  }
}

}  // namespace mongosim::fuzz
