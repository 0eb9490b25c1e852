// The replication layer of a multi-member replica set: it drives this member's repl::Topology
// over real TCP and performs the actions the topology asks for (docs/mongodb-behaviour.md, Replica
// sets).
//
// - A tick thread calls Topology::tick() every kTickIntervalMs on the ServerClock, and at once
//   when an election timer runs out (Topology::next_timer_ms), and sends
//   heartbeats (replSetHeartbeat) and votes (replSetRequestVotes) on short-lived threads, each
//   bounded by kMemberCommandTimeoutMs; a member that does not answer is simply silent.
// - A fetcher thread pulls oplog entries from the topology's sync source (replSetFetchOplog, a
//   mongosim-internal command), applies them through the data layer and reports its position to
//   the primary (replSetUpdatePosition). The source holds a fetch that finds nothing new until an
//   entry shows, its commit point passes the one the fetcher sent, or kFetchAwaitMs pass (as
//   mongod's fetcher tails with an awaitData cursor), so a write, and the commit point after it,
//   reach the secondaries about a round trip after they are made; the holding thread is a
//   connection thread of the source and takes no lock while it waits.
// - The topology's state is mirrored into ServerContext::replica (hello, not-primary checks):
//   PRIMARY there means writable; a primary still catching up shows as SECONDARY.
// - Every touch of the data (fetch answers, applying, no-ops, durability, rollback) goes through
//   data::ReplicationStorage; the server core reads read concern's commit point, the
//   linearizable barrier and replSetGetStatus through this coordinator as its ReplicationView.
// - Write concern waits (w:N, w:"majority") block on the topology's optimes and commit point.
// A one-member set keeps the server core's behaviour: no topology runs for it.
//
// Heartbeats carry the sender's config, so a member started with the same --replSet learns the
// config from the first heartbeat that reaches it (reconfig is not supported yet).
//
// Set identity: every member-to-member command leaves through member_command() with this set's
// replicaSetId, and every replication command passes refuse_other_set() first (93 for another
// set's id, checked against the installed config) and, in its handler,
// require_topology_of_this_set() (the same check against the topology it acts on, so a config
// installed in between is met too); heartbeat answers carry the id and the
// topology ignores one from another set. So a member of another set of the same name on a host of
// our config is never counted, elected, synced from or rolled back against.
//
// The replication-state lock (repl_state_lock.h, shared with the data layer) makes the glue's
// threads safe for the state machine:
// - writability is what the lock publishes, not what the topology says: after every topology
//   event, sync_write_state() compares the topology's wish (writable primary,
//   not stepping down, in term T) with the published state and, if they differ,
//   takes the lock EXCLUSIVE (which interrupts running writes with 11602) and
//   publishes the wish. hello shows a writable primary only once it is
//   published. replSetStepDown takes it exclusive before the attempt starts, so
//   the attempt compares the secondaries with the oplog's final newest entry;
// - the new primary's no-op is appended under the exclusive hold, then writability published;
// - a fetched batch is applied under a SHARED hold, and only after re-validating: this member
//   is still SECONDARY (or a primary in catch-up), in the term and with the
//   sync source the fetch started with, nothing is published writable, no
//   rollback is pending, and the oplog still ends at the optime the fetch asked
//   after. Otherwise the batch is dropped (logged). Rollback's data changes run
//   under a shared hold too;
// - write-concern waits fail with 189 once the term moves past the write's own term.
//
// Thread rules: lock order ReplStateLock, then `mutex_`, then the data layer's lock. `mutex_`
// guards the topology; it is never held while sending, while waiting, while asking for the
// ReplStateLock or while calling the data layer. register_commands() before the listener starts;
// start() after; stop() after the server has stopped (it joins every thread it started).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/optime.h"
#include "base/repl_state_lock.h"
#include "data/replication_storage.h"
#include "repl/rollback_plan.h"
#include "repl/topology.h"
#include "server/durability.h"
#include "server/member_client.h"
#include "server/replication_view.h"
#include "server/server_context.h"

namespace mongosim::server {

// The seed of this member's election-timer jitter: drawn from the system's entropy source and
// mixed with the member's own "host:port". Members in PID namespaces of their own (containers)
// all run as the same pid and learn the config from one heartbeat in the same millisecond, so a
// seed made of pid and time was the same on every member: their jitter matched draw for draw,
// their timers ran out together and every election split the vote (the set stayed without a
// primary for as long as the partition lasted).
uint64_t election_timer_seed(std::string_view self_host);

// How long the tick thread sleeps: the tick interval, or less when the topology's next election
// timer (Topology::next_timer_ms, INT64_MAX for none) runs out sooner; at least 1 ms, so a
// deadline already passed is met by the next tick without spinning.
int64_t tick_sleep_ms(int64_t now_ms, int64_t next_timer_ms, int64_t tick_interval_ms);

class ReplicationCoordinator final : public ReplicationView {
 public:
  static constexpr int64_t kTickIntervalMs = 50;
  static constexpr int64_t kMemberCommandTimeoutMs = 1000;
  static constexpr int64_t kFetchTimeoutMs = 2000;
  static constexpr size_t kFetchBatchEntries = 500;
  // How long a sync source holds a fetch that finds nothing new (replSetFetchOplog's
  // maxAwaitMs): well inside kFetchTimeoutMs, and short enough that a fetcher whose member
  // changed role or sync source meanwhile re-validates soon.
  static constexpr int64_t kFetchAwaitMs = 200;
  // The longest maxAwaitMs a sync source honours.
  static constexpr int64_t kFetchAwaitMaxMs = 10'000;
  static constexpr int kMaxSendsInFlight = 64;
  // The longest a replSetStepDown / replSetStepUp command waits for its outcome.
  static constexpr int64_t kMaxCommandWaitMs = 120'000;
  // The longest a write-concern wait without wtimeout blocks.
  static constexpr int64_t kMaxWriteConcernWaitMs = 600'000;

  // `storage` is the member's data (data::Store); `repl_state_lock` the member's
  // replication-state lock, shared with the data layer; `dbpath` keeps the term, vote, config
  // and rollback files (--dbpath), null keeps them in memory. All three outlive the
  // coordinator.
  ReplicationCoordinator(ServerContext& server, data::ReplicationStorage& storage,
                         ReplStateLock& repl_state_lock, DbPath* dbpath);
  ~ReplicationCoordinator();
  ReplicationCoordinator(const ReplicationCoordinator&) = delete;
  ReplicationCoordinator& operator=(const ReplicationCoordinator&) = delete;

  // Adds the member-to-member and step-down/freeze/step-up commands, installs the write-concern
  // waiter and attaches this coordinator to the server as its ReplicationView.
  void register_commands();
  // Startup recovery (--dbpath): the persisted config, term and vote. Before start().
  void restore(const PersistedReplicaState& state);
  void start();
  void stop();

  // Whether a multi-member topology is running (false for standalones and one-member sets).
  bool active() const;

  // Write-concern wait on the topology (the waiter installed by register_commands()).
  std::optional<bson::Document> wait_for_write_concern(const WriteConcern& wc,
                                                       const std::optional<OpTime>& optime);
  // j:true and majority writes: blocks until the journal holds `optime` (docs/mongodb-behaviour.md,
  // Write concern).
  bool wait_durable(OpTime optime);

  // ReplicationView (replication_reads.cpp, replication_status.cpp): the commit point; 134
  // while below minValid (after a rollback, until the member has applied through it).
  OpTime majority_read_point() const override;
  void linearizable_barrier(int64_t max_time_ms) override;
  std::optional<bson::Document> repl_set_status() const override;
  void one_member_initiated() override { persist_one_member_config(); }

 private:
  using Actions = std::vector<repl::Action>;

  // The commit point this member knows (the topology's, or what a one-member set applied).
  OpTime last_committed() const;
  bool ensure_topology();
  int64_t now_ms() const { return server_.clock.now_ms(); }
  // Drains the topology's actions and mirrors its state; caller holds mutex_.
  Actions drain_locked();
  void mirror_state_locked();
  // What the topology wants published (see the header comment); caller holds mutex_.
  WriteState desired_write_state_locked() const;
  // Publishes desired_write_state_locked() under the exclusive ReplStateLock if it differs from
  // what is published. Callers hold neither lock.
  void sync_write_state();
  // Whether the fetcher may apply now: SECONDARY, or a primary in catch-up; caller holds mutex_.
  bool fetching_allowed_locked() const;
  // Why a batch fetched in `term` from `source` after `after` must be dropped ("" to apply it); the
  // caller holds the ReplStateLock shared (`hold`).
  std::string stale_batch_reason(const ReplStateLock::Shared& hold, int64_t term, int source,
                                 OpTime after);
  void perform(Actions actions);
  void note_local_optimes();

  // Every member-to-member command goes out through here: on `host`'s admin database, carrying
  // this member's replicaSetId so that a member of another set of the same name refuses it.
  MemberReply member_command(const std::string& host, bson::Document command, int64_t timeout_ms);
  // Throws 93 InvalidReplicaSetConfig when `body` names another set's replicaSetId than ours (a
  // member of another set reached us on a host of its config), 2 BadValue when it is not an
  // ObjectId. A body without one (a user's command) passes.
  void refuse_other_set(const bson::Document& body) const;
  // The topology a replication command acts on (else 94 NotYetInitialized), and the body's
  // replicaSetId checked against it once more under mutex_: refuse_other_set() runs before the
  // handler, and a config installed in between (an initiate, a heartbeat's config) is one it
  // could not compare with. The topology's config never changes after it is built.
  void require_topology_of_this_set(const bson::Document& body);
  void spawn_send(std::function<void()> send);
  void send_heartbeat(int target);
  void send_vote_request(int target, const repl::VoteRequest& request);
  void send_step_up(int target);
  void write_new_primary_noop();

  void tick_loop();
  // What one fetch round did: applied entries, asked and found nothing new (the source already
  // waited for it: ask again now), or could not ask (sleep before the next round).
  enum class FetchRound { kApplied, kNothingNew, kIdle };
  void fetch_loop();
  FetchRound fetch_once();
  // The source side's wait (handle_fetch_oplog): re-reads after each change until an entry after
  // `after` shows or the commit point passes `known_committed` (the fetcher's; nullopt: the one
  // of the fetch's arrival), `await_ms` pass, or the server shuts down (11600).
  std::optional<std::vector<bson::Document>> await_oplog_after(
      OpTime after, size_t limit, int64_t await_ms, std::optional<OpTime> known_committed);
  void report_position();

  // Persistence (replication_persistence.cpp): writes the topology's term, vote and config to
  // the dbpath; called for kPersistState before any message of the same event leaves.
  void persist_state();
  // A one-member set has no topology; its config is persisted from the tick loop.
  void persist_one_member_config();

  // Rollback (replication_rollback.cpp), run on the fetcher thread.
  void run_rollback(int source);
  std::optional<repl::RollbackPlan> plan_against(const std::string& host, OpTime& local_last);
  std::optional<data::RollbackRequest> build_request(const std::string& host,
                                                     const repl::RollbackPlan& plan,
                                                     OpTime local_last);
  void write_rollback_files(const data::RollbackOutcome& outcome);
  void finish_rollback(OpTime common_point);
  // Persists and installs minValid (replication_rollback.cpp's header says why).
  void record_min_valid(OpTime optime);
  void enter_resync_state(const std::string& reason);
  bson::Document handle_rollback_optimes(const bson::Document& body);
  bson::Document handle_rollback_fetch(const bson::Document& body);
  bool sleep_ms(int64_t duration_ms);
  int64_t next_tick_in_ms();

  bson::Document member_status_locked(int index, int64_t now) const;

  bson::Document handle_heartbeat(const bson::Document& body);
  bson::Document handle_request_votes(const bson::Document& body);
  bson::Document handle_update_position(const bson::Document& body);
  bson::Document handle_fetch_oplog(const bson::Document& body);
  bson::Document handle_step_down(const bson::Document& body);
  bson::Document handle_freeze(const bson::Document& body);
  bson::Document handle_step_up(const bson::Document& body);
  // Throws the error a step-down/freeze/step-up gets when no multi-member topology runs.
  [[noreturn]] void refuse_without_topology(int32_t primary_code,
                                            const std::string& primary_message) const;
  // Waits for a pending step-down/step-up outcome; throws its error.
  void await_outcome(std::optional<repl::Action>& slot, int64_t wait_ms);

  ServerContext& server_;
  data::ReplicationStorage& storage_;
  ReplStateLock& repl_state_lock_;
  DbPath* const dbpath_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;  // commit point, state, outcomes, stop
  std::optional<repl::Topology> topology_;
  bool step_down_attempt_ = false;
  std::optional<repl::Action> step_down_outcome_;
  std::optional<repl::Action> step_up_outcome_;
  bool step_down_running_ = false;
  bool step_up_running_ = false;
  bool stopping_ = false;
  OpTime reported_applied_;
  OpTime reported_durable_;
  int sends_in_flight_ = 0;
  std::optional<repl::PersistentState> restored_election_;
  OpTime restored_min_valid_;  // from the dbpath, given to the topology when it
                               // is created
  OpTime refetch_top_;         // fetcher thread: the source's newest optime at refetch
                               // time
  int rollback_source_ = -1;   // set by kStartRollback, consumed by the fetcher
  bool needs_resync_ = false;  // a rollback was impossible: shown as RECOVERING, no fetching
  std::mutex persist_mu_;      // one replica-state write at a time
  // Under persist_mu_: the tick thread and a replSetInitiate's connection thread both persist.
  bool one_member_config_persisted_ = false;

  std::thread tick_thread_;
  std::thread fetch_thread_;
};

}  // namespace mongosim::server
