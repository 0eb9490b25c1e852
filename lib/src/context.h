// Context: the state a Provider shares with its Locks and Handles: the client pool, the database,
// the validated Options, and the one-time background index creation.
//
// Every round trip of the library goes through write(), write_once(), read() or
// check_indexes(), which classify the result:
//   kOk       the server ran the command (for writes: acknowledged with the write concern).
//   kNotSent  it provably never reached a server: server selection failed, or no pooled client
//             became free within pool_wait_ms_.
//   kRefused  the server answered with an error. A server error can still follow an applied
//             write (interrupted while waiting for the write concern): callers that need
//             certainty (the acquire, the release) treat kRefused as possibly written.
//             `transient` marks errors a retry may cure (not primary, stepping down, shutting
//             down, write conflict, E11000).
//   kUnknown  it may have run: network error after sending, socket timeout, write concern error
//             (in writeConcernError or as a top-level code 64).
// Invariant: a kUnknown is never turned into "not done" here; callers resolve it.
//
// What libmongoc 1.23 itself retries (mongoc-client.c, mongoc-cmd.c): through the generic
// write helper (write()) only a findAndModify is a retryable write: it gets lsid + txnNumber
// and is sent once more, on a new server selection, after a network error (any stream error,
// a socket timeout included) or a reply labelled RetryableWriteError. Every other command sent
// through write() -- the `update` of resolve, extend and release, and createIndexes -- gets no
// txnNumber and is sent exactly once: a socket timeout is returned as it is. So, per command:
//   acquire (findAndModify)        write_once(): sent once, never retried (see there)
//   resolve, extend, release       write(), `update`: sent once
//   notify release (findAndModify) write_once(): sent once, like the plain release
//   force_release (findAndModify)  write(): retried once (it is idempotent)
//   createIndexes                  write(): sent once (the index thread retries, 3 tries)
//   inspect (aggregate)            read(): a retryable read, retried once on a network error
//                                  or a retryable server error
//   listIndexes                    check_indexes(): sent once, no read concern
//   createIndexes                  check_indexes(), before the first acquire into a collection
//                                  without its index: write(), sent once
// The Context also owns the Provider's HoldScheduler (hold_scheduler.h), the threads that extend
// and watch every hold; they start with the first hold and stop when the Context is destroyed,
// which may happen on one of them (the last Handle dropped in a callback).
// Thread rules: all methods are safe from any thread; the pool hands one client per call.
#pragma once

#include <mongoc/mongoc.h>
#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "bson_ptr.h"
#include "hold_scheduler.h"
#include "index_check.h"
#include "local_line.h"
#include "mongolock/options.h"
#include "release_watcher.h"

namespace mongolock::detail {

enum class Outcome { kOk, kNotSent, kRefused, kUnknown };

// How a round trip is handed to libmongoc: read(), write(), write_once() below.
enum class SendMode { kRead, kWrite, kWriteOnce, kPlain };

struct Reply {
  Outcome outcome = Outcome::kUnknown;
  Bson doc;  // the server reply (empty document when none arrived)
  int domain = 0;
  int code = 0;
  bool transient = false;
  std::string message;
  // A write acknowledged with a majority write concern: its reply's operationTime (0 otherwise,
  // or when the reply has none). For a write that changed the data that is its own oplog
  // entry's timestamp, majority committed: no failover rolls it back, so every later write of
  // any primary is at a later timestamp (release_watcher.h).
  ClusterTime operation_time = 0;
};

// One TTL index the Context creates: on reapAt in `collection`, named `name`.
struct IndexTarget {
  std::string collection;
  const char* name;
};

// Beyond this many holds a Provider refuses to acquire. Holds run no threads of their own (the
// scheduler's are bounded by kSchedulerThreadsMax); what the limit bounds is the extension load
// one Provider puts on its cluster and its scheduler: at the default cadence (expiry_ms / 3 =
// 10 s) 100 round trips a second, spread over at most kExtensionWorkersMax workers.
inline constexpr int64_t kHoldsPerProviderMax = 1000;
// How long a round trip waits for a pooled client when every one is in use (then: kNotSent).
inline constexpr int64_t kPoolWaitMsMax = 30'000;

class Context {
 public:
  // Owns a pool built from `uri`. Throws InvalidArgument for a bad URI.
  Context(const std::string& uri, std::string database, Options options);
  // Borrows `pool`; the caller keeps it alive longer than this Context.
  Context(mongoc_client_pool_t* pool, std::string database, Options options);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const Options& options() const { return options_; }
  const std::string& database() const { return database_; }

  // A write through libmongoc's write helper. For a findAndModify that is a retryable write
  // (lsid + txnNumber, one retry on a network or retryable error); any other command is sent
  // once. Callers whose commands are idempotent (resolve, extend, release, force_release,
  // createIndexes) use it.
  Reply write(const bson_t& command);
  // A write sent at most once: no txnNumber, no driver retry (mongoc_client_command_with_opts
  // with the same write concern). Every reply, error or timeout is that one try's. The acquire
  // uses it: a driver retry answered "busy" while the first try is still held somewhere (a
  // network queue, a blocked connection) would hide a grant that happens later, because a
  // retry that wrote nothing leaves no session record for the server to deduplicate the late
  // try against (mongod records only statements that wrote).
  Reply write_once(const bson_t& command);
  Reply read(const bson_t& command);

  // Whether the plain (rw false) or rw collection's TTL indexes keep lock documents at least
  // reap_after_s after reapAt (index_check.h: judge_indexes). With create_index and no reapAt
  // index yet, it makes the index first (createIndexes, sent once) and judges again: up to three
  // round trips. kClean is remembered once the judgement is final (the check is then free);
  // kClean while this Provider may not create its index, kRefused and kUnchecked (listIndexes
  // or createIndexes failed, or the list came in more than one batch: `detail` says why) are
  // asked again next time.
  enum class IndexCheck { kClean, kRefused, kUnchecked };
  // A stop asked between its round trips ends it as kUnchecked (nothing more is sent).
  IndexCheck check_indexes(bool rw, std::string& detail, const std::stop_token& stop);
  // True in a process forked after this Context was made: its pool is the parent's.
  bool in_forked_child() const;

  // This Provider's random id: the `p` of its waiters' queue entries (mongolock.h [notify]).
  const std::string& provider_id() const { return provider_id_; }
  // The Provider's change stream for notify waiters, made on first use; nullptr in a forked
  // child.
  ReleaseWatcher* release_watcher();
  // The same, if a waiter has made it (nullptr otherwise: nobody of this Provider waits on it).
  ReleaseWatcher* release_watcher_if_made();

  // Holds (Leases) alive on this Provider, at most kHoldsPerProviderMax. try_reserve_hold()
  // takes a slot before an acquire attempt; the Lease that the attempt creates owns it and
  // gives it back in its destructor; a failed attempt gives it back with release_hold().
  bool try_reserve_hold();
  void release_hold();

  // The local lines of this Provider's notify waiters (local_line.h).
  LocalLines& lines() { return lines_; }

  // The scheduler of this Provider's holds (its threads start on the first Lease::start()).
  HoldScheduler& scheduler() { return scheduler_; }

 private:
  Reply run(const bson_t& command, SendMode mode);
  static void note_operation_time(Reply& reply);
  void start_index_creation(const std::string& cluster_key);
  void create_index(const std::string& key, const IndexTarget& target, std::stop_token stop);
  IndexTarget index_target(bool rw) const;
  Reply make_index(const IndexTarget& target);  // createIndexes {reapAt: 1}, sent once
  std::optional<IndexVerdict> judge_collection(const IndexTarget& target, bool rw,
                                               std::string& detail);

  Options options_;
  std::string database_;
  mongoc_client_pool_t* pool_ = nullptr;
  bool owns_pool_ = false;
  Bson write_opts_;
  Bson read_opts_;
  std::vector<std::jthread> index_threads_;  // at most 2 (plain and rw collection)
  std::atomic<int64_t> holds_{0};
  std::atomic<bool> plain_indexes_final_{false};  // set once check_indexes judged them final
  std::atomic<bool> rw_indexes_final_{false};
  int64_t pool_wait_ms_ = 0;  // derived from the options: min(expiry_ms / 2, kPoolWaitMsMax)
  pid_t creator_pid_ = 0;
  std::string provider_id_;
  std::mutex watcher_mutex_;
  std::unique_ptr<ReleaseWatcher> watcher_;  // made by release_watcher(), under watcher_mutex_
  LocalLines lines_{options_.expiry_ms, options_.busy_wait_min_ms};
  // Last, so it is destroyed first: its threads are idle then (a job holds a Lease, a Lease holds
  // this Context), and it joins them, or detaches the one running this destructor.
  HoldScheduler scheduler_;
};

}  // namespace mongolock::detail
