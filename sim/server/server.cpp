#include "server/server.h"

#include "base/log.h"
#include "server/admin_commands.h"

namespace mongosim::server {

Server::Server(ServerOptions options)
    : context_(std::make_unique<ServerContext>(std::move(options))),
      dispatcher_(std::make_unique<Dispatcher>(*context_)),
      listener_(std::make_unique<Listener>(*context_, *dispatcher_)) {
  for (const auto& assignment : context_->options.set_parameters) {
    context_->parameters.set_from_startup(assignment);
  }
  register_admin_commands(*context_);
}

Server::~Server() {
  stop();
}

void Server::start() {
  listener_->bind_and_listen();
  listener_->start();
  bson::Array addresses;
  for (const auto& ip : context_->options.bind_ips) addresses.push_back(bson::V(ip));
  log_event(Severity::kInfo, "NETWORK", log_id::kWaitingForConnections, "listener",
            "Waiting for connections",
            bson::Document{{"port", bson::V(context_->options.port)},
                           {"bindIp", bson::V(std::move(addresses))},
                           {"replSet", bson::V(context_->options.repl_set)}});
}

void Server::stop() {
  context_->request_shutdown();
  listener_->stop();
}

}  // namespace mongosim::server
