#include "server/member_store.h"

namespace mongosim::server {

data::StoreOptions member_store_options(ServerContext& ctx, ReplStateLock& repl_state_lock) {
  repl_state_lock.set_unmanaged_source([&ctx] {
    ReplicaSnapshot snap = ctx.replica.snapshot();
    return WriteState{snap.is_writable_primary(), snap.term};
  });
  data::StoreOptions o;
  o.clock = &ctx.clock;
  o.failpoints = &ctx.failpoints;
  o.ttl_monitor_sleep_secs = [&ctx] { return ctx.parameters.ttl_monitor_sleep_secs(); };
  o.current_term = [&ctx] { return ctx.replica.term(); };
  o.can_accept_writes = [&ctx] { return ctx.replica.snapshot().is_writable_primary(); };
  o.repl_state_lock = &repl_state_lock;
  o.majority_read_point = [&ctx] { return ctx.replication().majority_read_point(); };
  o.replica_set = [&ctx] { return ctx.replica.snapshot().replication_enabled; };
  o.change_signal = &ctx.change_signal;
  return o;
}

}  // namespace mongosim::server
