// Accepts TCP connections on every --bind_ip address and serves each on its own thread, at
// most kMaxConnections at once (more are refused with a log line, as mongod does).
//
// Lifecycle: bind_and_listen() (throws naming the address on failure), start(), stop().
// stop() closes the listening sockets, wakes every connection (shutdown(2) on its socket) and
// joins every thread.
//
// Thread rules: start/stop from one controlling thread. The accept thread owns the
// connection list together with stop(), under mutex_; each connection thread only sets its
// own done flag.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/dispatcher.h"
#include "server/server_context.h"

namespace mongosim::server {

class Listener {
 public:
  Listener(ServerContext& server, Dispatcher& dispatcher);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  void bind_and_listen();
  void start();
  void stop();

 private:
  struct Client {
    int64_t id = 0;
    int fd = -1;
    std::string remote;
    std::thread thread;
    std::atomic<bool> done{false};
  };

  void accept_loop();
  void accept_one(int listen_fd);
  void reap_finished();  // joins and closes finished connections; takes mutex_

  ServerContext& server_;
  Dispatcher& dispatcher_;
  std::vector<int> listen_fds_;
  int wake_pipe_[2] = {-1, -1};
  std::thread accept_thread_;
  std::mutex mutex_;
  std::list<std::unique_ptr<Client>> clients_;
  int64_t next_connection_id_ = 1;
};

}  // namespace mongosim::server
