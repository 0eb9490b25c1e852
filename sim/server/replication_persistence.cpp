// Persisting the replica-set state a member must not forget across a restart: the term, its
// vote (mongod's local.replset.election) and the config (local.system.replset). A member that
// forgot its vote could vote twice in one term and elect two primaries (docs/mongodb-behaviour.md,
// Elections).
#include <cstdlib>

#include "base/log.h"
#include "server/replication.h"

namespace mongosim::server {

void ReplicationCoordinator::persist_state() {
  if (dbpath_ == nullptr) return;
  // Serialised, and the state is read inside the lock: whichever thread writes last writes
  // the newest state, so concurrent events can never leave an older term or vote on disk.
  std::lock_guard persist_lock(persist_mu_);
  PersistedReplicaState state;
  {
    std::lock_guard lock(mutex_);
    if (!topology_) return;
    state.election = topology_->persistent_state();
    state.config = topology_->config();
  }
  try {
    dbpath_->save_replica_state(state);
  } catch (const std::exception& e) {
    // Acting on a vote or term that is not on disk would break the one-vote-per-term rule
    // after a crash: stop instead (mongod fasserts here too).
    log_event(Severity::kError, "REPL", 21212, "replication",
              "Cannot persist the replica-set election state; terminating",
              bson::Document{{"error", bson::V(std::string(e.what()))}});
    std::abort();
  }
}

bool ReplicationCoordinator::wait_durable(OpTime optime) {
  return storage_.wait_durable(optime);
}

void ReplicationCoordinator::persist_one_member_config() {
  if (dbpath_ == nullptr) return;
  std::lock_guard persist_lock(persist_mu_);
  if (one_member_config_persisted_) return;
  ReplicaSnapshot snap = server_.replica.snapshot();
  if (!snap.config || snap.config->members.size() != 1) return;
  PersistedReplicaState state;
  state.election.term = snap.term;
  state.config = snap.config;
  try {
    dbpath_->save_replica_state(state);
    one_member_config_persisted_ = true;
  } catch (const std::exception& e) {  // retried on the next tick
    log_event(Severity::kWarning, "REPL", 21213, "replication",
              "Cannot persist the replica-set config; will retry",
              bson::Document{{"error", bson::V(std::string(e.what()))}});
  }
}

void ReplicationCoordinator::restore(const PersistedReplicaState& state) {
  if (state.config && state.config->members.size() == 1 && !server_.replica.snapshot().config) {
    // A one-member set runs no topology: adopting its config again makes it primary, as
    // before, and keeps its replicaSetId (a new initiate would give it another).
    if (!server_.replica.restore_one_member(*state.config, now_ms())) {
      log_event(Severity::kWarning, "REPL", 21394, "initandlisten",
                "The persisted one-member replica-set config does not list this member or names "
                "another set; ignoring it",
                bson::Document{{"set", bson::V(state.config->set_name)}});
      return;
    }
    {
      std::lock_guard persist_lock(persist_mu_);
      one_member_config_persisted_ = true;
    }
    log_event(Severity::kInfo, "REPL", 21311, "initandlisten",
              "Restored the one-member replica-set config from the dbpath",
              bson::Document{{"set", bson::V(state.config->set_name)}});
    return;
  }
  if (state.config && !server_.replica.snapshot().config) {
    if (!server_.replica.install_config(*state.config)) {
      log_event(Severity::kWarning, "REPL", 21394, "initandlisten",
                "The persisted replica-set config does not list this member or names another "
                "set; ignoring it",
                bson::Document{{"set", bson::V(state.config->set_name)}});
      return;
    }
  }
  ReplicaSnapshot snap = server_.replica.snapshot();
  if (snap.config && state.election.term > snap.term) {
    // hello and replSetGetStatus show the restored term before the topology starts.
    server_.replica.set_state(snap.state, state.election.term, now_ms());
  }
  std::lock_guard lock(mutex_);
  restored_election_ = state.election;
  restored_min_valid_ = state.min_valid;
  log_event(Severity::kInfo, "REPL", 21311, "initandlisten",
            "Restored the replica-set state from the dbpath",
            bson::Document{{"term", bson::V(state.election.term)},
                           {"lastVoteTerm", bson::V(state.election.last_vote_term)},
                           {"config", bson::V(state.config.has_value())}});
}

}  // namespace mongosim::server
