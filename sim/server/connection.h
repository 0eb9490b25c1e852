// One client connection: reads framed messages, parses them (OP_MSG, or OP_QUERY for the
// handshake), runs commands through the Dispatcher and writes replies, until the client
// leaves, sends something malformed, a command asks to close, or the server shuts down.
//
// A malformed, oversized or truncated message closes only this connection, with a log line
// (docs/mongodb-behaviour.md, Framing); nothing a client sends can crash or hang the server.
//
// Thread rules: serve() runs on the connection's own thread and owns the socket's reads and
// writes; the listener may only shutdown(2) the socket (to wake a blocked read at shutdown).
#pragma once

#include <cstdint>
#include <string>

#include "server/dispatcher.h"
#include "server/server_context.h"

namespace mongosim::server {

class Connection {
 public:
  Connection(ServerContext& server, Dispatcher& dispatcher, int fd, int64_t id, std::string remote);
  // Returns when the connection is over. Does not close the socket (the listener does, after
  // joining this thread, so the descriptor cannot be reused while it might be shut down).
  void serve();

 private:
  enum class Next { kContinue, kClose };
  Next handle_message(const std::string& message);
  Next handle_op_msg(const std::string& message, int32_t request_id);
  Next handle_op_query(const std::string& message, int32_t request_id);
  bool read_exact(char* out, size_t size);
  bool send_all(const std::string& bytes);
  void log_closing(const std::string& reason);
  std::string context_name() const { return "conn" + std::to_string(state_.id); }

  ServerContext& server_;
  Dispatcher& dispatcher_;
  const int fd_;
  ConnectionState state_;
};

}  // namespace mongosim::server
