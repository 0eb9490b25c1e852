// A raw TCP client for integration tests: sends hand-built wire messages to a mongosim and
// reads replies with bounded waits, so tests can send what no driver would.
//
// Thread rules: one owner thread per client.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>

#include "bson/codec.h"
#include "server/op_msg.h"
#include "server/op_query.h"
#include "server/wire.h"
#include "testkit.h"

namespace mongosim::testing {

class RawClient {
 public:
  static constexpr int kReplyTimeoutMs = 10000;

  explicit RawClient(int port) : fd_(locklab::testkit::connect_loopback(port)) {
    if (fd_ < 0) throw std::runtime_error("cannot connect to port " + std::to_string(port));
  }
  ~RawClient() { ::close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }

  // One whole message, or nullopt if the server closed the connection or the wait ran out.
  std::optional<std::string> read_message(int timeout_ms = kReplyTimeoutMs) {
    std::string header;
    if (!read_bytes(server::kHeaderBytes, header, timeout_ms)) return std::nullopt;
    server::MessageHeader h =
        server::decode_header(reinterpret_cast<const uint8_t*>(header.data()));
    if (h.message_length < 16 || h.message_length > server::kMaxMessageBytes) return std::nullopt;
    std::string rest;
    if (!read_bytes(static_cast<size_t>(h.message_length) - server::kHeaderBytes, rest,
                    timeout_ms)) {
      return std::nullopt;
    }
    return header + rest;
  }

  // True once the server has closed the connection (within the wait).
  bool closed_by_server(int timeout_ms = kReplyTimeoutMs) {
    char byte;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    return ::recv(fd_, &byte, 1, 0) <= 0;
  }

  // Sends an OP_MSG command and returns the reply body; throws if no reply arrives within
  // timeout_ms.
  bson::Document command(bson::Document body, const std::string& db = "admin",
                         int timeout_ms = kReplyTimeoutMs) {
    body.set("$db", bson::V(db));
    int32_t id = next_id_++;
    if (!send(server::encode_op_msg_request(id, 0, body))) throw std::runtime_error("send failed");
    auto reply = read_message(timeout_ms);
    if (!reply) throw std::runtime_error("no reply to " + body.first_key());
    return op_msg_body(*reply);
  }

  static bson::Document op_msg_body(const std::string& message) {
    size_t offset = server::kHeaderBytes + 5;  // flags + section kind
    auto decoded = bson::decode_document(reinterpret_cast<const uint8_t*>(message.data()) + offset,
                                         message.size() - offset);
    if (!decoded.doc) throw std::runtime_error("bad reply body: " + decoded.error);
    return *decoded.doc;
  }

  static bson::Document op_reply_document(const std::string& message) {
    size_t offset = server::kHeaderBytes + 20;
    auto decoded = bson::decode_document(reinterpret_cast<const uint8_t*>(message.data()) + offset,
                                         message.size() - offset);
    if (!decoded.doc) throw std::runtime_error("bad OP_REPLY document: " + decoded.error);
    return *decoded.doc;
  }

  int fd() const { return fd_; }

 private:
  bool read_bytes(size_t size, std::string& out, int timeout_ms) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    out.resize(size);
    size_t done = 0;
    while (done < size) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      ssize_t n = ::recv(fd_, out.data() + done, size - done, 0);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  int fd_;
  int32_t next_id_ = 1;
};

}  // namespace mongosim::testing
