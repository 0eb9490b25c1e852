// The replication layer's part of read concern (docs/mongodb-behaviour.md, Read concern;
// read_concern.h).
#include "server/replication.h"

namespace mongosim::server {

// The longest a linearizable read waits for its no-op to become majority committed.
constexpr int64_t kLinearizableWaitMs = 15'000;

namespace {
constexpr int32_t kReadConcernMajorityNotAvailableYet = 134;
}  // namespace

OpTime ReplicationCoordinator::majority_read_point() const {
  {
    std::lock_guard lock(mutex_);
    if (topology_ && topology_->applied() < topology_->min_valid()) {
      // After a rollback the data matches no single point of the oplog until minValid.
      throw CommandError(kReadConcernMajorityNotAvailableYet,
                         "Read concern majority reads are currently not possible: this member "
                         "has not applied through its minValid after a rollback");
    }
  }
  return last_committed();
}

OpTime ReplicationCoordinator::last_committed() const {
  {
    std::lock_guard lock(mutex_);
    if (topology_) return topology_->last_committed();
  }
  return server_.effective_last_applied();  // one-member sets commit what they apply
}

void ReplicationCoordinator::linearizable_barrier(int64_t max_time_ms) {
  {
    std::lock_guard lock(mutex_);
    if (!topology_) return;  // one member: no other primary can have accepted writes
  }
  // A write after the read that a majority accepts proves no newer primary existed when the read
  // ran (mongod writes the same kind of no-op). Like any write it is appended under the
  // ReplStateLock, in the term published writable.
  OpTime noop;
  {
    ReplStateLock::Shared hold(repl_state_lock_);
    if (!hold.state().writable) {
      throw CommandError(code::kNotWritablePrimary,
                         "cannot satisfy linearizable read concern on non-primary node");
    }
    noop = storage_.append_noop("linearizable read", hold.state().term);
  }
  WriteConcern majority;
  majority.mode = WriteConcern::Mode::kMajority;
  majority.wtimeout_ms = max_time_ms > 0 ? max_time_ms : kLinearizableWaitMs;
  std::optional<bson::Document> error = wait_for_write_concern(majority, noop);
  if (!error) return;
  const bson::Value* code = error->get("code");
  if (max_time_ms > 0 && code != nullptr && code->is_number() &&
      code->number_as_exact_int32() == code::kWriteConcernFailed) {
    throw CommandError(code::kMaxTimeMSExpired, "operation exceeded time limit");
  }
  const bson::Value* message = error->get("errmsg");
  throw CommandError(code != nullptr
                         ? code->number_as_exact_int32().value_or(code::kWriteConcernFailed)
                         : code::kWriteConcernFailed,
                     message != nullptr && message->is_string() ? message->as_string()
                                                                : "linearizable read failed");
}

}  // namespace mongosim::server
