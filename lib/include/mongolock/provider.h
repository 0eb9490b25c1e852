// mongolock::Provider: one MongoDB client pool + database + Options; makes Locks and RwLocks and
// offers the operator tools inspect() and force_release().
//
// Construction validates the options (InvalidArgument) and, if create_index, starts the one-time
// background creation of the TTL index for each collection (once per cluster, database and
// collection per process). It sends nothing else; the first round trip is the first acquire
// (for a plain lock, a listIndexes first: mongolock.h [index]).
//
// Pool ownership: from a URI the Provider creates and owns a mongoc_client_pool_t (error API
// version 2, mongoc's log output routed away from stderr except warnings and errors, appname
// from Options::app_name unless the URI has one, socketTimeoutMS and serverSelectionTimeoutMS
// bounded by the lease unless the URI sets them). A borrowed pool must outlive every Lock and
// Handle made from this Provider; its error API must be version 2 (the Provider sets it, which
// mongoc allows only before the first client is popped).
//
// Threads: a Provider runs no background thread until its first hold. From then on, until the
// shared state is destroyed (the Provider and every Lock and Handle gone), it runs, for all its
// holds together: one timer thread (each hold's next extension and lease deadline: it marks a
// hold lost at its deadline whatever else is blocked); extension workers, 1 to 16 (one
// extension round trip each; extensions due while all 16 are blocked, as in a partition, wait
// in due order, and their holds are lost at their deadlines if they never run); notifiers,
// 1 to 16 (each runs one hold's lost notification: its token, on_lost callbacks and kLost event;
// a 17th loss while 16 callbacks block waits for one of them, though lost() reads true at the
// deadline regardless). Workers and notifiers beyond the first of each pool end after 2 s idle.
// At most 33 scheduler threads, none per hold, and with Backoff::kNotify one more: the
// release watcher's change stream (mongolock.h [notify]). Besides these, libmongoc's pool runs
// threads of its own that monitor the servers (one per member of the set, seen with
// libmongoc 1.23), whatever the number of holds. The on_event observer runs on the
// extension workers (kExtend*) and the notifiers (kLost): a slow observer slows those pools.
// Lifetime: Locks and Handles keep the shared state alive; destroying the Provider first is
// fine. The last reference may drop inside a callback, on one of the Provider's own threads.
// Limits: at most 1000 live holds per Provider (an acquire's attempt in flight takes one of
// them while it runs) and 34 background threads of mongolock's own; every round trip waits at most
// min(expiry_ms / 2, 30 s) for a pooled client (mongolock.h "Bounds").
// fork(): a Provider is the process's that made it; a child must make its own (mongolock.h
// [fork]).
// Thread rules: all methods may be called from any thread concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "mongolock/lock.h"
#include "mongolock/lock_info.h"
#include "mongolock/options.h"
#include "mongolock/rw_lock.h"

typedef struct _mongoc_client_pool_t mongoc_client_pool_t;

namespace mongolock {

class Provider {
 public:
  Provider(const std::string& uri, std::string database, Options options = {});
  Provider(mongoc_client_pool_t* borrowed_pool, std::string database, Options options = {});
  ~Provider();
  Provider(const Provider&) = delete;
  Provider& operator=(const Provider&) = delete;

  // Names: 1..1024 bytes of valid UTF-8 without NUL. Throws InvalidArgument otherwise.
  Lock create_lock(std::string name) const;
  RwLock create_rw_lock(std::string name, int32_t max_shared = 0) const;

  // One read (aggregate with $$NOW) of the lock document; std::nullopt if none exists.
  std::optional<LockInfo> inspect(std::string_view name) const;
  std::optional<LockInfo> inspect_rw(std::string_view name) const;
  // Operator override: clears every hold of the lock (the holders learn of it at their next
  // extension), keeping the fencing counter. Returns true if the document recorded any hold.
  bool force_release(std::string_view name) const;
  bool force_release_rw(std::string_view name) const;

  const Options& options() const;

 private:
  std::shared_ptr<detail::Context> context_;
};

}  // namespace mongolock
