// How a member's data layer is wired to its server core: the store reads the member's clock,
// fail points, term, writability, commit point and replica-set mode from the ServerContext, and
// shares the member's replication-state lock and change signal. One definition, used by the
// mongosim program (main.cpp) and the wire fuzzer's one-member set (sim/fuzz), so what the fuzzer
// serves is wired as the program is.
//
// Thread rules: call once, before the store is built; the options read the context (thread-safe)
// from whichever thread the store calls them on.
#pragma once

#include "base/repl_state_lock.h"
#include "data/store.h"
#include "server/server_context.h"

namespace mongosim::server {

// The store's options for the member `ctx`. Also gives `repl_state_lock` its unmanaged source:
// until the replication layer manages the lock (a set of two or more members), the member's
// ReplicaState says whether it is writable and in which term. `ctx` and `repl_state_lock` must
// outlive the store.
data::StoreOptions member_store_options(ServerContext& ctx, ReplStateLock& repl_state_lock);

}  // namespace mongosim::server
