// The mongosim server: the shared context, the dispatcher and the listener, put together.
//
// Usage (sim/main.cpp): construct with parsed options (admin commands are registered then),
// let the data layer register its commands and attach its optime source through context(),
// then start() and, at SIGTERM/SIGINT, stop().
//
// Thread rules: construct, start and stop from one thread; connection threads run inside.
#pragma once

#include <memory>

#include "server/dispatcher.h"
#include "server/listener.h"
#include "server/options.h"
#include "server/server_context.h"

namespace mongosim::server {

class Server {
 public:
  // Throws std::invalid_argument for a bad --setParameter.
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  ServerContext& context() { return *context_; }

  // Binds and starts accepting; logs "Waiting for connections". Throws std::runtime_error
  // naming the address when it cannot listen.
  void start();
  // Interrupts blocked commands, closes every connection and joins every thread. Idempotent.
  void stop();

 private:
  std::unique_ptr<ServerContext> context_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::unique_ptr<Listener> listener_;
};

}  // namespace mongosim::server
