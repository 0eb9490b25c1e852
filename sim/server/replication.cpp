#include "server/replication.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <functional>
#include <random>

#include "base/error_codes.h"
#include "base/log.h"
#include "repl/command_args.h"
#include "server/member_client.h"
#include "server/replication_fields.h"
#include "server/write_concern.h"

namespace mongosim::server {

using namespace replication_fields;

namespace {

constexpr int64_t kStopWaitMs = 10'000;

class TopologyWriteConcernWaiter final : public WriteConcernWaiter {
 public:
  explicit TopologyWriteConcernWaiter(ReplicationCoordinator& coordinator)
      : coordinator_(coordinator) {}
  std::optional<bson::Document> wait(const WriteConcern& wc,
                                     const std::optional<OpTime>& optime) override {
    // j:true, and majority (j defaults to writeConcernMajorityJournalDefault=true;
    // docs/mongodb-behaviour.md, Write concern), are acknowledged only once the journal holds the
    // write; the commit point itself counts durable optimes only.
    bool journaled = wc.j || wc.mode == WriteConcern::Mode::kMajority;
    if (optime && journaled && !coordinator_.wait_durable(*optime)) {
      return write_concern_error(code::kWriteConcernFailed,
                                 "waiting for the journal commit timed out", wc);
    }
    if (!coordinator_.active()) return single_.wait(wc, optime);
    return coordinator_.wait_for_write_concern(wc, optime);
  }

 private:
  ReplicationCoordinator& coordinator_;
  SingleNodeWriteConcernWaiter single_;
};

}  // namespace

ReplicationCoordinator::ReplicationCoordinator(ServerContext& server,
                                               data::ReplicationStorage& storage,
                                               ReplStateLock& repl_state_lock, DbPath* dbpath)
    : server_(server), storage_(storage), repl_state_lock_(repl_state_lock), dbpath_(dbpath) {}

ReplicationCoordinator::~ReplicationCoordinator() {
  stop();
}

bool ReplicationCoordinator::active() const {
  std::lock_guard lock(mutex_);
  return topology_.has_value();
}

uint64_t election_timer_seed(std::string_view self_host) {
  std::random_device entropy;
  const uint64_t high = entropy();
  const uint64_t low = entropy();
  return ((high << 32) ^ low) ^ std::hash<std::string_view>{}(self_host);
}

bool ReplicationCoordinator::ensure_topology() {
  {
    std::lock_guard lock(mutex_);
    if (topology_) return true;
  }
  ReplicaSnapshot snap = server_.replica.snapshot();
  if (!snap.config || snap.config->members.size() < 2) return false;
  int self = -1;
  for (int i = 0; i < snap.config->member_count(); ++i) {
    if (snap.config->members[static_cast<size_t>(i)].host == snap.self_host) self = i;
  }
  if (self < 0) return false;
  OpTime applied = storage_.last_applied();
  OpTime durable = storage_.last_durable();
  repl::Topology::Options options;
  options.self_index = self;
  options.seed = election_timer_seed(snap.self_host);
  options.persisted.term = snap.term;
  options.applied = applied;
  options.durable = durable;
  options.now_ms = now_ms();
  bool created = false;
  {
    std::lock_guard lock(mutex_);
    if (restored_election_ && restored_election_->term >= options.persisted.term) {
      options.persisted = *restored_election_;  // the vote of the restored term still counts
    }
    if (!topology_) {
      topology_.emplace(*snap.config, options);
      topology_->set_min_valid(restored_min_valid_);
      reported_applied_ = applied;
      reported_durable_ = durable;
      created = true;
      log_event(Severity::kInfo, "REPL", 21392, "replication", "New replica set config in use",
                bson::Document{{"config", bson::V(snap.config->to_document())}});
    }
  }
  if (created) persist_state();  // the config, so a restart rejoins without replSetInitiate
  return true;
}

ReplicationCoordinator::Actions ReplicationCoordinator::drain_locked() {
  Actions actions = topology_->take_actions();
  for (const auto& a : actions) {
    if (a.kind == repl::ActionKind::kStepDownAttemptStarted) step_down_attempt_ = true;
    if (a.kind == repl::ActionKind::kStepDownFinished) {
      step_down_attempt_ = false;
      step_down_outcome_ = a;
    }
    if (a.kind == repl::ActionKind::kStepUpFinished) step_up_outcome_ = a;
  }
  mirror_state_locked();
  changed_.notify_all();
  return actions;
}

WriteState ReplicationCoordinator::desired_write_state_locked() const {
  const repl::Topology& t = *topology_;
  return WriteState{t.is_writable_primary() && !step_down_attempt_ && !needs_resync_, t.term()};
}

void ReplicationCoordinator::sync_write_state() {
  ReplStateLock& rstl = repl_state_lock_;
  auto same = [](const WriteState& a, const WriteState& b) {
    // While not writable the term is not used by anyone holding the lock: no need to stop writes.
    return a.writable == b.writable && (!a.writable || a.term == b.term);
  };
  {
    std::lock_guard lock(mutex_);
    if (!topology_ || (rstl.managed() && same(rstl.published(), desired_write_state_locked()))) {
      return;
    }
  }
  ReplStateLock::Exclusive exclusive(rstl);  // interrupts running writes
  std::lock_guard lock(mutex_);
  exclusive.publish(desired_write_state_locked());
  mirror_state_locked();
  changed_.notify_all();
}

void ReplicationCoordinator::mirror_state_locked() {
  const repl::Topology& t = *topology_;
  MemberState state = t.state();
  WriteState published = repl_state_lock_.published();
  bool published_writable =
      repl_state_lock_.managed() && published.writable && published.term == t.term();
  if (state == MemberState::kPrimary &&
      (!t.is_writable_primary() || step_down_attempt_ || !published_writable)) {
    state = MemberState::kSecondary;  // not writable yet (catch-up) or stepping down
  }
  if (needs_resync_) state = MemberState::kRecovering;  // a rollback was impossible
  ReplicaSnapshot snap = server_.replica.snapshot();
  if (snap.state != state || snap.term != t.term()) {
    server_.replica.set_state(state, t.term(), now_ms());
  }
  int primary = t.primary_index();
  std::string primary_host =
      primary >= 0 ? t.config().members[static_cast<size_t>(primary)].host : std::string();
  if (snap.primary_host != primary_host) server_.replica.set_primary_host(primary_host);
  if (snap.majority_optime != t.last_committed()) {
    server_.replica.set_majority_optime(t.last_committed());
    server_.change_signal.notify();  // change streams read through the commit point
  }
}

void ReplicationCoordinator::perform(Actions actions) {
  for (const auto& a : actions) {
    switch (a.kind) {
      case repl::ActionKind::kSendHeartbeat:
        spawn_send([this, target = a.target] { send_heartbeat(target); });
        break;
      case repl::ActionKind::kSendVoteRequest:
        spawn_send([this, target = a.target, request = a.vote_request] {
          send_vote_request(target, request);
        });
        break;
      case repl::ActionKind::kSendStepUp:
        spawn_send([this, target = a.target] { send_step_up(target); });
        break;
      case repl::ActionKind::kWriteNewPrimaryNoop:
        write_new_primary_noop();
        break;
      case repl::ActionKind::kBecomePrimary:
      case repl::ActionKind::kStepDown:
        log_event(Severity::kInfo, "REPL", 21358, "replication", "Replica set state transition",
                  bson::Document{{"action", bson::V(a.kind == repl::ActionKind::kBecomePrimary
                                                        ? "becomePrimary"
                                                        : "stepDown")},
                                 {"reason", bson::V(a.reason)}});
        break;
      case repl::ActionKind::kStartRollback: {
        // The fetcher runs it (replication_rollback.cpp); the topology stays in ROLLBACK.
        std::lock_guard lock(mutex_);
        rollback_source_ = a.target;
        changed_.notify_all();
        break;
      }
      case repl::ActionKind::kElectionProgress:
        log_event(Severity::kInfo, "ELECTION", log_id::kElectionProgress, "replication",
                  "Election progress", bson::Document{{"what", bson::V(a.reason)}});
        break;
      case repl::ActionKind::kPersistState:
        persist_state();  // before any message of the same event leaves (topology.h)
        break;
      case repl::ActionKind::kStepDownAttemptStarted:
      case repl::ActionKind::kStepDownFinished:
      case repl::ActionKind::kStepUpFinished:
      case repl::ActionKind::kChangeSyncSource:     // the fetcher reads sync_source() each round
      case repl::ActionKind::kCommitPointAdvanced:  // drain_locked() already woke the waiters
        break;
    }
  }
  sync_write_state();
}

// Under the exclusive ReplStateLock: no write and no fetched batch can append meanwhile, so the
// no-op is the first entry of the term and nothing of an older term lands after it.
void ReplicationCoordinator::write_new_primary_noop() {
  Actions actions;
  {
    ReplStateLock::Exclusive exclusive(repl_state_lock_);
    int64_t term = 0;
    {
      std::lock_guard lock(mutex_);
      if (topology_->state() != MemberState::kPrimary || topology_->is_writable_primary()) return;
      term = topology_->term();
      exclusive.publish(WriteState{false, term});  // writes of an older term end here
    }
    OpTime optime;
    try {
      optime = storage_.append_noop("new primary", term);
    } catch (const std::exception& e) {
      log_event(Severity::kWarning, "REPL", 21331, "replication",
                "Cannot write the new primary's no-op",
                bson::Document{{"error", bson::V(std::string(e.what()))}});
      return;
    }
    OpTime durable = storage_.last_durable();
    std::lock_guard lock(mutex_);
    if (topology_->term() != term || topology_->state() != MemberState::kPrimary) return;
    topology_->on_my_optimes(now_ms(), optime, durable);
    topology_->on_new_primary_noop_written(now_ms(), optime);
    reported_applied_ = optime;
    actions = drain_locked();
    exclusive.publish(desired_write_state_locked());
    mirror_state_locked();
  }
  perform(std::move(actions));
}

void ReplicationCoordinator::note_local_optimes() {
  OpTime applied = storage_.last_applied();
  OpTime durable = storage_.last_durable();
  Actions actions;
  {
    std::lock_guard lock(mutex_);
    if (!topology_ || topology_->state() == MemberState::kRollback) return;
    if (!(reported_applied_ < applied) && !(reported_durable_ < durable)) return;
    reported_applied_ = std::max(reported_applied_, applied);
    reported_durable_ = std::max(reported_durable_, durable);
    topology_->on_my_optimes(now_ms(), applied, durable);
    actions = drain_locked();
  }
  perform(std::move(actions));
}

void ReplicationCoordinator::spawn_send(std::function<void()> send) {
  {
    std::lock_guard lock(mutex_);
    // Too many peers not answering: this message is dropped, which the protocol treats as
    // silence, exactly like a lost packet.
    if (stopping_ || sends_in_flight_ >= kMaxSendsInFlight) return;
    ++sends_in_flight_;
  }
  std::thread([this, send = std::move(send)] {
    send();
    std::lock_guard lock(mutex_);
    --sends_in_flight_;
    changed_.notify_all();
  }).detach();
}

void ReplicationCoordinator::send_step_up(int target) {
  std::string host;
  {
    std::lock_guard lock(mutex_);
    host = topology_->config().members[static_cast<size_t>(target)].host;
  }
  // The outcome shows up in heartbeats; a lost handoff just leaves the election timer to act.
  member_command(
      host, bson::Document{{"replSetStepUp", bson::V(int32_t{1})}, {"skipDryRun", bson::V(true)}},
      kMemberCommandTimeoutMs);
}

bool ReplicationCoordinator::sleep_ms(int64_t duration_ms) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, std::chrono::milliseconds(duration_ms), [this] { return stopping_; });
  return !stopping_;
}

// The next tick comes after kTickIntervalMs or when an election timer runs out, whichever is
// first (topology.h, next_timer_ms).
int64_t tick_sleep_ms(int64_t now_ms, int64_t next_timer_ms, int64_t tick_interval_ms) {
  assert(tick_interval_ms >= 1);
  if (next_timer_ms <= now_ms) return 1;
  // next > now, so the difference fits in 64 unsigned bits (INT64_MAX, no timer, included).
  const uint64_t gap_ms = static_cast<uint64_t>(next_timer_ms) - static_cast<uint64_t>(now_ms);
  return gap_ms >= static_cast<uint64_t>(tick_interval_ms) ? tick_interval_ms
                                                            : static_cast<int64_t>(gap_ms);
}

int64_t ReplicationCoordinator::next_tick_in_ms() {
  std::lock_guard lock(mutex_);
  if (!topology_) return kTickIntervalMs;
  return tick_sleep_ms(now_ms(), topology_->next_timer_ms(), kTickIntervalMs);
}

void ReplicationCoordinator::tick_loop() {
  while (sleep_ms(next_tick_in_ms())) {
    if (!ensure_topology()) {
      persist_one_member_config();
      continue;
    }
    note_local_optimes();
    Actions actions;
    {
      std::lock_guard lock(mutex_);
      topology_->tick(now_ms());
      actions = drain_locked();
    }
    perform(std::move(actions));
  }
}

std::optional<bson::Document> ReplicationCoordinator::wait_for_write_concern(
    const WriteConcern& wc, const std::optional<OpTime>& optime) {
  if (wc.mode == WriteConcern::Mode::kTag) {
    return write_concern_error(
        code::kUnknownReplWriteConcern,
        "No write concern mode named '" + wc.tag + "' found in replica set configuration", wc);
  }
  if (!optime || (wc.mode == WriteConcern::Mode::kNumber && wc.w <= 1)) return std::nullopt;
  note_local_optimes();
  int64_t wait_ms = wc.wtimeout_ms > 0 ? wc.wtimeout_ms : kMaxWriteConcernWaitMs;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  std::unique_lock lock(mutex_);
  if (!topology_) return std::nullopt;
  const repl::ReplSetConfig& config = topology_->config();
  int data_bearing = 0;
  for (const auto& m : config.members) data_bearing += m.is_data_bearing() ? 1 : 0;
  if (wc.mode == WriteConcern::Mode::kNumber && wc.w > data_bearing) {
    return write_concern_error(code::kUnsatisfiableWriteConcern, "Not enough data-bearing nodes",
                               wc);
  }
  // The write's own term: once the member has moved past it, the write may be rolled back.
  int64_t term = optime->term;
  auto satisfied = [&] {
    if (wc.mode == WriteConcern::Mode::kMajority) return *optime <= topology_->last_committed();
    int count = 0;
    for (int i = 0; i < config.member_count(); ++i) {
      OpTime applied =
          i == topology_->self_index() ? topology_->applied() : topology_->member(i).applied;
      if (*optime <= applied) ++count;
    }
    return count >= wc.w;
  };
  for (;;) {
    if (topology_->term() != term || !topology_->is_writable_primary()) {
      return write_concern_error(code::kPrimarySteppedDown,
                                 "Primary stepped down while waiting for replication", wc);
    }
    if (satisfied()) return std::nullopt;
    if (stopping_ || server_.shutting_down()) {
      return write_concern_error(code::kInterruptedAtShutdown,
                                 "interrupted at shutdown while waiting for replication", wc);
    }
    auto slice = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTickIntervalMs);
    changed_.wait_until(lock, std::min(slice, deadline));
    if (std::chrono::steady_clock::now() >= deadline && !satisfied()) {
      return write_concern_error(code::kWriteConcernFailed, "waiting for replication timed out",
                                 wc);
    }
  }
}

void ReplicationCoordinator::refuse_without_topology(int32_t primary_code,
                                                     const std::string& primary_message) const {
  ReplicaSnapshot snap = server_.replica.snapshot();
  if (!snap.replication_enabled) {
    throw CommandError(code::kNoReplicationEnabled, "not running with --replSet");
  }
  if (!snap.config) {
    throw CommandError(code::kNotYetInitialized, "no replset config has been received");
  }
  // A one-member set: its only member is the primary and has nobody to hand over to.
  throw CommandError(primary_code, primary_message);
}

void ReplicationCoordinator::await_outcome(std::optional<repl::Action>& slot, int64_t wait_ms) {
  std::unique_lock lock(mutex_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  // In slices: shutdown does not notify changed_, and must end this wait as it ends every other
  // (the server joins its connection threads before replication stops).
  while (!slot && !stopping_ && std::chrono::steady_clock::now() < deadline) {
    if (server_.shutting_down())
      throw CommandError(code::kInterruptedAtShutdown, "interrupted at shutdown");
    auto slice = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTickIntervalMs);
    changed_.wait_until(lock, std::min(slice, deadline));
  }
  if (!slot) {
    throw CommandError(code::kExceededTimeLimit, "timed out waiting for the replica set");
  }
  repl::Action outcome = *slot;
  slot.reset();
  if (outcome.code != 0) throw CommandError(outcome.code, outcome.reason);
}

bson::Document ReplicationCoordinator::handle_step_down(const bson::Document& body) {
  repl::StepDownRequest request = repl::parse_step_down_request(body);
  if (!ensure_topology()) {
    refuse_without_topology(code::kExceededTimeLimit,
                            "No electable secondaries caught up as of the step-down deadline");
  }
  Actions actions;
  {
    // Writes stop here (interrupted), so the oplog's newest entry is final: the attempt compares
    // the secondaries with it, not with an applied optime that lags it by a tick.
    ReplStateLock::Exclusive exclusive(repl_state_lock_);
    OpTime last = storage_.last_applied();
    OpTime durable = storage_.last_durable();
    std::lock_guard lock(mutex_);
    if (step_down_running_) {
      throw CommandError(code::kConflictingOperationInProgress, "a step-down is already running");
    }
    if (topology_->state() == MemberState::kPrimary) {
      reported_applied_ = std::max(reported_applied_, last);
      reported_durable_ = std::max(reported_durable_, durable);
      topology_->on_my_optimes(now_ms(), last, durable);
    }
    step_down_outcome_.reset();
    topology_->step_down(now_ms(), request);  // throws 10107 when not primary
    step_down_running_ = true;
    actions = drain_locked();
    exclusive.publish(desired_write_state_locked());
    mirror_state_locked();
  }
  perform(std::move(actions));
  struct Done {
    ReplicationCoordinator& c;
    ~Done() {
      std::lock_guard lock(c.mutex_);
      c.step_down_running_ = false;
    }
  } done{*this};
  int64_t wait_ms = std::min<int64_t>(kMaxCommandWaitMs, request.catch_up_secs * 1000 + 5000);
  await_outcome(step_down_outcome_, wait_ms);
  return bson::Document{};
}

bson::Document ReplicationCoordinator::handle_freeze(const bson::Document& body) {
  int64_t secs = repl::parse_freeze_secs(body);
  if (!ensure_topology()) {
    refuse_without_topology(code::kNotSecondary,
                            "cannot freeze node when primary or running for election. state: "
                            "Primary");
  }
  bson::Document reply;
  Actions actions;
  {
    std::lock_guard lock(mutex_);
    reply = topology_->freeze(now_ms(), secs);
    actions = drain_locked();
  }
  perform(std::move(actions));
  return reply;
}

bson::Document ReplicationCoordinator::handle_step_up(const bson::Document& body) {
  bool skip_dry_run = repl::parse_step_up_skip_dry_run(body);
  if (!ensure_topology()) refuse_without_topology(code::kCommandFailed, "Already primary");
  Actions actions;
  int64_t wait_ms = 0;
  {
    std::lock_guard lock(mutex_);
    if (step_up_running_) {
      throw CommandError(code::kConflictingOperationInProgress, "a step-up is already running");
    }
    step_up_outcome_.reset();
    topology_->step_up(now_ms(), skip_dry_run);  // throws 125 when it cannot stand
    step_up_running_ = true;
    wait_ms = std::min<int64_t>(kMaxCommandWaitMs,
                                2 * topology_->config().settings.election_timeout_ms + 5000);
    actions = drain_locked();
  }
  perform(std::move(actions));
  struct Done {
    ReplicationCoordinator& c;
    ~Done() {
      std::lock_guard lock(c.mutex_);
      c.step_up_running_ = false;
    }
  } done{*this};
  await_outcome(step_up_outcome_, wait_ms);
  return bson::Document{};
}

void ReplicationCoordinator::register_commands() {
  auto add = [this](std::string name, CommandHandler handler) {
    CommandSpec spec;
    spec.name = std::move(name);
    spec.admin_only = true;
    spec.handler = [this, handler = std::move(handler)](CommandContext& ctx) {
      refuse_other_set(ctx.body);
      // Test-only: holds a command that names a set between the check above and its handler
      // (the handler's own check, require_topology_of_this_set(), is what a config installed
      // meanwhile meets). Shutdown ends the pause and the command with it, as it interrupts
      // any operation.
      if (ctx.body.has("replicaSetId") &&
          server_.failpoints.pause_while_set("hangAfterCheckingReplicaSetId",
                                             [this] { return server_.shutting_down(); }) &&
          server_.shutting_down()) {
        throw CommandError(code::kInterruptedAtShutdown, "interrupted at shutdown");
      }
      return handler(ctx);
    };
    spec.any_member_state = true;
    server_.registry.add(std::move(spec));
  };
  add("replSetHeartbeat", [this](CommandContext& ctx) { return handle_heartbeat(ctx.body); });
  add("replSetRequestVotes",
      [this](CommandContext& ctx) { return handle_request_votes(ctx.body); });
  add("replSetUpdatePosition",
      [this](CommandContext& ctx) { return handle_update_position(ctx.body); });
  add("replSetFetchOplog", [this](CommandContext& ctx) { return handle_fetch_oplog(ctx.body); });
  add("replSetRollbackOptimes",
      [this](CommandContext& ctx) { return handle_rollback_optimes(ctx.body); });
  add("replSetRollbackFetch",
      [this](CommandContext& ctx) { return handle_rollback_fetch(ctx.body); });
  add("replSetStepDown", [this](CommandContext& ctx) { return handle_step_down(ctx.body); });
  add("replSetFreeze", [this](CommandContext& ctx) { return handle_freeze(ctx.body); });
  add("replSetStepUp", [this](CommandContext& ctx) { return handle_step_up(ctx.body); });
  server_.write_concern_waiter = std::make_unique<TopologyWriteConcernWaiter>(*this);
  server_.attach_replication(*this);
}

void ReplicationCoordinator::start() {
  if (!server_.replica.replication_enabled()) return;
  tick_thread_ = std::thread([this] { tick_loop(); });
  fetch_thread_ = std::thread([this] { fetch_loop(); });
}

void ReplicationCoordinator::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (tick_thread_.joinable()) tick_thread_.join();
  if (fetch_thread_.joinable()) fetch_thread_.join();
  // Detached senders finish within their timeouts; wait for them before the members go away.
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, std::chrono::milliseconds(kStopWaitMs),
                    [this] { return sends_in_flight_ == 0; });
}

}  // namespace mongosim::server
