// Everything the server core's pieces share for the life of the process: options, clock,
// fail points, command registry, parameters, metrics, replica-set state, the write-concern
// waiter and the data layer's optime source. One instance, built by Server; connection threads
// hold references to it.
//
// Thread rules: the registry is filled before the listener starts and read-only after; every
// other member is itself thread-safe. The optime sources are set once before start.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/failpoint.h"
#include "base/optime.h"
#include "command/command.h"
#include "server/options.h"
#include "server/parameters.h"
#include "server/replica_state.h"
#include "server/server_metrics.h"
#include "server/write_concern.h"

namespace mongosim::server {

// At most this many client connections at once; more are refused (mongod's default is far
// higher, but a thread each is the cost here).
inline constexpr int64_t kMaxConnections = 1000;

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

  // The data layer's newest oplog entry; both return nulls until a data layer is attached.
  std::function<OpTime()> last_applied = [] { return OpTime{}; };
  std::function<int64_t()> last_write_date_ms = [] { return int64_t{0}; };

  // Read concern (read_concern.h). The majority commit point this member knows: a single node
  // commits what it applies; a replication layer replaces it. The linearizable barrier runs
  // after a linearizable read: it returns once a no-op written after the read is majority
  // committed on this still-primary member, within max_time_ms when that is positive, and
  // throws CommandError otherwise.
  std::function<OpTime()> last_committed = [this] { return effective_last_applied(); };
  std::function<void(int64_t max_time_ms)> linearizable_barrier = [](int64_t) {};

  // replSetGetStatus of a multi-member set, from the replication layer; nullopt while it has
  // nothing to say (standalone, one-member set, uninitiated), and the core answers itself.
  std::function<std::optional<bson::Document>()> repl_set_status = [] {
    return std::optional<bson::Document>{};
  };

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
  std::atomic<bool> shutting_down_{false};
  std::mutex shutdown_mutex_;
  std::condition_variable shutdown_cv_;
};

}  // namespace mongosim::server
