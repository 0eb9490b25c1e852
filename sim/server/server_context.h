// Everything the server core's pieces share for the life of the process: options, clock,
// fail points, command registry, parameters, metrics, replica-set state, the write-concern
// waiter, and the two interfaces it reads other layers through: the data layer's newest oplog
// entry (data::OplogPosition) and replication (ReplicationView). One instance, built by Server;
// connection threads hold references to it.
//
// Thread rules: the registry is filled, the write-concern waiter installed and the oplog and
// replication attached before the listener starts; all are read-only after. Every other member
// is itself thread-safe. What is attached must outlive the server's threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/change_signal.h"
#include "base/clock.h"
#include "base/failpoint.h"
#include "base/optime.h"
#include "command/command.h"
#include "data/replication_storage.h"
#include "server/options.h"
#include "server/parameters.h"
#include "server/replica_state.h"
#include "server/replication_view.h"
#include "server/server_metrics.h"
#include "server/write_concern.h"

namespace mongosim::server {

// At most this many client connections at once; more are refused (mongod's default is far
// higher, but a thread each is the cost here).
inline constexpr int64_t kMaxConnections = 1000;

struct ServerContext;

// A member without a replication layer (standalone, one-member set): it commits what it
// applies, a linearizable read needs no barrier (no other primary can have accepted writes),
// and replSetGetStatus is the server core's own.
class SingleNodeReplicationView final : public ReplicationView {
 public:
  explicit SingleNodeReplicationView(const ServerContext& server) : server_(server) {}
  OpTime majority_read_point() const override;
  void linearizable_barrier(int64_t /*max_time_ms*/) override {}
  std::optional<bson::Document> repl_set_status() const override { return std::nullopt; }
  void one_member_initiated() override {}

 private:
  const ServerContext& server_;
};

struct ServerContext {
  explicit ServerContext(ServerOptions opts);

  const ServerOptions options;
  const int64_t start_ms;
  const bson::ObjectId process_id;  // for topology-style identity; new per process start
  ServerClock clock;
  FailPoints failpoints;
  CommandRegistry registry;
  ServerParameters parameters;
  ServerMetrics metrics;
  ReplicaState replica;
  std::unique_ptr<WriteConcernWaiter> write_concern_waiter;
  // Wakes change-stream getMores (docs/mongodb-behaviour.md, Change streams): the data layer
  // notifies it on every oplog change, replication when the commit point moves, shutdown ends
  // their waits.
  ChangeSignal change_signal;
  // How many commands wait in wait_for_read_concern now (serverStatus shows it, so a test can
  // write while a read is known to be waiting: docs/mongodb-behaviour.md, Read concern).
  std::atomic<int64_t> read_concern_waiters{0};

  // The data layer's newest oplog entry, read through `oplog` from now on. Once, before the
  // listener starts.
  void attach_oplog(const data::OplogPosition& oplog);
  // Its optime and wall time (data::OplogPosition); a null optime and 0 until one is attached.
  OpTime last_applied() const;
  int64_t last_write_date_ms() const;

  // Replication as the server core reads it (read concern, replSetGetStatus): `view` from now
  // on, in place of the single-node answers. Once, before the listener starts.
  void attach_replication(ReplicationView& view);
  ReplicationView& replication() const { return *replication_; }

  // The newest optime this member knows: the data layer's, or the set's initiation optime
  // before the first write (it seeds $clusterTime and operationTime; docs/mongodb-behaviour.md,
  // Reply envelope).
  OpTime effective_last_applied() const;

  // Shutdown: set once; wakes every interruptible sleep.
  void request_shutdown();
  bool shutting_down() const { return shutting_down_.load(); }
  // Sleeps up to duration_ms; returns false if shutdown interrupted it.
  bool sleep_unless_shutdown(int64_t duration_ms);

 private:
  const data::OplogPosition* oplog_ = nullptr;
  SingleNodeReplicationView single_node_{*this};
  ReplicationView* replication_ = &single_node_;
  std::atomic<bool> shutting_down_{false};
  std::mutex shutdown_mutex_;
  std::condition_variable shutdown_cv_;
};

}  // namespace mongosim::server
