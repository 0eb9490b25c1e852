#include "server/connection.h"

#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "base/log.h"
#include "server/op_msg.h"
#include "server/op_query.h"
#include "server/reply_envelope.h"
#include "server/wire.h"

namespace mongosim::server {

namespace {

std::atomic<int32_t> g_next_reply_id{1};

// Repeats one recv/send step until `size` bytes moved; false on EOF or a socket error.
template <typename Step>
bool transfer_all(size_t size, Step step) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = step(done);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return false;
    }
  }
  return true;
}

int32_t next_reply_id() {
  return g_next_reply_id.fetch_add(1, std::memory_order_relaxed);
}

bool is_not_primary(const bson::Document& reply) {
  const bson::Value* code = reply.get("code");
  return code != nullptr && code->number_as_exact_int32() == code::kNotWritablePrimary;
}

}  // namespace

Connection::Connection(ServerContext& server, Dispatcher& dispatcher, int fd, int64_t id,
                       std::string remote)
    : server_(server), dispatcher_(dispatcher), fd_(fd) {
  state_.id = id;
  state_.remote = std::move(remote);
}

void Connection::serve() {
  while (!server_.shutting_down()) {
    char header[kHeaderBytes];
    if (!read_exact(header, kHeaderBytes)) return;  // client left (or shutdown woke us)
    MessageHeader h = decode_header(reinterpret_cast<const uint8_t*>(header));
    if (auto err = check_message_length(h.message_length)) return log_closing(*err);
    std::string message(static_cast<size_t>(h.message_length), '\0');
    std::memcpy(message.data(), header, kHeaderBytes);
    if (!read_exact(message.data() + kHeaderBytes, message.size() - kHeaderBytes)) {
      return log_closing("message truncated: the client closed before sending " +
                         std::to_string(h.message_length) + " bytes");
    }
    if (handle_message(message) == Next::kClose) return;
  }
}

Connection::Next Connection::handle_message(const std::string& message) {
  MessageHeader h = decode_header(reinterpret_cast<const uint8_t*>(message.data()));
  switch (h.op_code) {
    case opcode::kMsg:
      return handle_op_msg(message, h.request_id);
    case opcode::kQuery:
      return handle_op_query(message, h.request_id);
    default:
      // Legacy write opcodes were removed in 6.0 and compression is never advertised
      // (docs/mongodb-behaviour.md, Framing).
      log_closing("unsupported opCode " + std::to_string(h.op_code));
      return Next::kClose;
  }
}

Connection::Next Connection::handle_op_msg(const std::string& message, int32_t request_id) {
  OpMsgParse parsed =
      parse_op_msg(reinterpret_cast<const uint8_t*>(message.data()), message.size());
  bool more_to_come = (parsed.flags & op_msg_flag::kMoreToCome) != 0;
  bson::Document reply;
  if (parsed.refusal) {
    if (parsed.refusal->close_connection) {
      log_closing("bad OP_MSG: " + parsed.refusal->message);
      return Next::kClose;
    }
    reply = error_reply(parsed.refusal->code, parsed.refusal->message);
  } else {
    DispatchRequest request;
    request.db = parsed.request->body.get("$db")->as_string();
    request.body = std::move(parsed.request->body);
    DispatchOutcome outcome = dispatcher_.run(state_, std::move(request));
    if (outcome.close_connection) {
      log_closing("command asked to close the connection");
      return Next::kClose;
    }
    reply = std::move(outcome.reply);
  }
  if (more_to_come) {
    // Fire-and-forget: no reply; a write refused for not being primary closes instead
    // (docs/mongodb-behaviour.md, OP_MSG), so the driver learns of it.
    if (is_not_primary(reply)) {
      log_closing("moreToCome write on a non-primary");
      return Next::kClose;
    }
    return Next::kContinue;
  }
  return send_all(encode_op_msg(next_reply_id(), request_id, reply)) ? Next::kContinue
                                                                     : Next::kClose;
}

Connection::Next Connection::handle_op_query(const std::string& message, int32_t request_id) {
  OpQueryParse parsed =
      parse_op_query(reinterpret_cast<const uint8_t*>(message.data()), message.size());
  if (!parsed.request) {
    log_closing("bad OP_QUERY: " + parsed.error);
    return Next::kClose;
  }
  std::string name = command_name_of(parsed.request->command);
  bson::Document reply;
  if (!parsed.request->command_namespace || !op_query_command_allowed(name)) {
    reply = unsupported_op_query_reply(parsed.request->command_namespace ? name : "find");
  } else {
    DispatchRequest request;
    request.db = parsed.request->db;
    request.body = std::move(parsed.request->command);
    request.secondary_ok = parsed.request->secondary_ok();
    DispatchOutcome outcome = dispatcher_.run(state_, std::move(request));
    if (outcome.close_connection) {
      log_closing("command asked to close the connection");
      return Next::kClose;
    }
    reply = std::move(outcome.reply);
  }
  return send_all(encode_op_reply(next_reply_id(), request_id, reply)) ? Next::kContinue
                                                                       : Next::kClose;
}

bool Connection::read_exact(char* out, size_t size) {
  return transfer_all(size, [&](size_t done) { return ::recv(fd_, out + done, size - done, 0); });
}

bool Connection::send_all(const std::string& bytes) {
  return transfer_all(bytes.size(), [&](size_t done) {
    return ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
  });
}

void Connection::log_closing(const std::string& reason) {
  log_event(Severity::kWarning, "NETWORK", log_id::kBadMessage, context_name(),
            "Closing connection",
            bson::Document{{"remote", bson::V(state_.remote)}, {"reason", bson::V(reason)}});
}

}  // namespace mongosim::server
