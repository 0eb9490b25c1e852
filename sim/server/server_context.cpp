#include "server/server_context.h"

#include <cassert>
#include <chrono>

namespace mongosim::server {

ServerContext::ServerContext(ServerOptions opts)
    : options(std::move(opts)),
      start_ms(ServerClock{}.now_ms()),
      process_id(bson::ObjectId::generate()),
      replica(options.repl_set, options.self_host()),
      write_concern_waiter(std::make_unique<SingleNodeWriteConcernWaiter>()) {
  clock.set_offset_ms(options.clock_offset_ms);  // --clockOffsetMillis, validated by the parser
}

OpTime SingleNodeReplicationView::majority_read_point() const {
  return server_.effective_last_applied();
}

void ServerContext::attach_oplog(const data::OplogPosition& oplog) {
  assert(oplog_ == nullptr);  // once, before the listener starts
  oplog_ = &oplog;
}

OpTime ServerContext::last_applied() const {
  return oplog_ != nullptr ? oplog_->last_applied() : OpTime{};
}

int64_t ServerContext::last_write_date_ms() const {
  return oplog_ != nullptr ? oplog_->last_write_date_ms() : 0;
}

void ServerContext::attach_replication(ReplicationView& view) {
  assert(replication_ == &single_node_);  // once, before the listener starts
  replication_ = &view;
}

OpTime ServerContext::effective_last_applied() const {
  OpTime applied = last_applied();
  OpTime initiated = replica.snapshot().initiate_optime;
  return applied.is_null() || applied < initiated ? initiated : applied;
}

void ServerContext::request_shutdown() {
  {
    std::lock_guard<std::mutex> lock(shutdown_mutex_);
    shutting_down_.store(true);
  }
  shutdown_cv_.notify_all();
  change_signal.shutdown();
}

bool ServerContext::sleep_unless_shutdown(int64_t duration_ms) {
  std::unique_lock<std::mutex> lock(shutdown_mutex_);
  return !shutdown_cv_.wait_for(lock, std::chrono::milliseconds(duration_ms),
                                [&] { return shutting_down_.load(); });
}

}  // namespace mongosim::server
