// What the server core reads of replication: the point majority and snapshot reads read at,
// the linearizable-read barrier and replSetGetStatus. The replication coordinator implements it
// for a multi-member set; without one, the server core answers as a single node
// (SingleNodeReplicationView in server_context.h). Write-concern waits have their own interface
// (WriteConcernWaiter, write_concern.h).
//
// Thread rules (every method): called from many connection threads at once; the implementation
// takes its own locks. Where a method may block, its comment says how long.
#pragma once

#include <cstdint>
#include <optional>

#include "base/optime.h"
#include "bson/value.h"

namespace mongosim::server {

class ReplicationView {
 public:
  virtual ~ReplicationView() = default;
  // The majority commit point this member knows: what majority and snapshot reads read at and
  // afterClusterTime waits for. Never blocks (short internal locks only). Throws CommandError
  // 134 (ReadConcernMajorityNotAvailableYet) while the data matches no single oplog point
  // (after a rollback, until the member has applied through minValid).
  virtual OpTime majority_read_point() const = 0;
  // Runs after a linearizable read: returns once a no-op written after the read is majority
  // committed while this member is still primary. Blocks up to max_time_ms when that is
  // positive, else up to the implementation's own bound; throws CommandError when the no-op
  // cannot be written (not primary) or is not committed in time (50 with max_time_ms, else the
  // write-concern error's code).
  virtual void linearizable_barrier(int64_t max_time_ms) = 0;
  // replSetGetStatus of a multi-member set; nullopt while there is nothing to say (standalone,
  // one-member set, uninitiated), and the server core answers itself. Never blocks.
  virtual std::optional<bson::Document> repl_set_status() const = 0;
  // Runs after replSetInitiate installed a one-member config and before its answer leaves: the
  // config is on the dbpath by then (mongod writes it before answering), so a SIGKILL right
  // after the answer does not leave the member without one. Blocks for one dbpath write.
  virtual void one_member_initiated() = 0;
};

}  // namespace mongosim::server
