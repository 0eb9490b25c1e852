// Topology's election side (docs/mongodb-behaviour.md, Replica sets): timers, heartbeats, votes,
// elections, catch-up, step-down, freeze and step-up. The oplog side is in topology_oplog.cpp.
#include "repl/topology.h"

#include <algorithm>
#include <cassert>
#include <ctime>
#include <limits>

#include "base/command_error.h"
#include "base/error_codes.h"

namespace mongosim::repl {

namespace {

// mongod's replElectionTimeoutOffsetLimitFraction (docs/mongodb-behaviour.md, Member states and
// configuration).
constexpr double kElectionJitterFraction = 0.15;

std::string optime_string(OpTime t) {
  return "{ ts: Timestamp(" + std::to_string(t.ts.seconds) + ", " + std::to_string(t.ts.increment) +
         "), t: " + std::to_string(t.term) + " }";
}

std::string iso_date(int64_t ms) {
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms % 1000));
  return out;
}

}  // namespace

Topology::Topology(ReplSetConfig config, const Options& options)
    : config_(std::move(config)),
      self_(options.self_index),
      rng_state_(options.seed),
      persisted_(options.persisted),
      applied_(options.applied),
      durable_(options.durable) {
  assert(self_ >= 0 && self_ < config_.member_count());
  size_t n = config_.members.size();
  members_.resize(n);
  next_heartbeat_ms_.assign(n, options.now_ms);
  election_.granted.assign(n, false);
  state_ = config_.members[static_cast<size_t>(self_)].arbiter_only ? MemberState::kArbiter
                                                                    : MemberState::kSecondary;
  arm_election_timer(options.now_ms);
}

// --- plumbing ---------------------------------------------------------------------------------

void Topology::emit(Action action) {
  assert(actions_.size() < kMaxPendingActions && "take_actions() must be drained after events");
  actions_.push_back(std::move(action));
}

void Topology::note_election(std::string what) {
  emit(Action{.kind = ActionKind::kElectionProgress, .reason = std::move(what)});
}

std::vector<Action> Topology::take_actions() {
  std::vector<Action> out;
  out.swap(actions_);
  return out;
}

void Topology::persist() {
  emit(Action{.kind = ActionKind::kPersistState});
}

// splitmix64: tiny, seedable and identical on every platform, unlike <random>'s distributions.
int64_t Topology::jitter_ms(int64_t max_ms) {
  rng_state_ += 0x9E3779B97F4A7C15ull;
  uint64_t z = rng_state_;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  if (max_ms <= 0) return 0;
  return static_cast<int64_t>(z % static_cast<uint64_t>(max_ms + 1));
}

void Topology::arm_election_timer(int64_t now_ms) {
  int64_t timeout = config_.settings.election_timeout_ms;
  int64_t max_jitter = static_cast<int64_t>(static_cast<double>(timeout) * kElectionJitterFraction);
  election_deadline_ms_ = now_ms + timeout + jitter_ms(max_jitter);
}

void Topology::adopt_term(int64_t now_ms, int64_t term) {
  if (term <= persisted_.term) return;
  persisted_.term = term;
  persist();
  primary_ = -1;
  priority_takeover_ms_ = -1;
  if (election_.phase != ElectionPhase::kNone) end_election(now_ms, false, "saw a higher term");
  if (state_ == MemberState::kPrimary) {
    step_down_now(now_ms, "Stepping down from primary, because a new term has begun: " +
                              std::to_string(term));
  }
}

// --- queries ----------------------------------------------------------------------------------

bool Topology::member_is_up(int64_t now_ms, int index) const {
  if (index == self_) return true;
  const MemberView& m = members_[static_cast<size_t>(index)];
  return m.ever_heard && now_ms - m.last_heartbeat_ms < config_.settings.election_timeout_ms;
}

bool Topology::sees_majority(int64_t now_ms) const {
  int votes = 0;
  for (int i = 0; i < config_.member_count(); ++i) {
    if (config_.members[static_cast<size_t>(i)].is_voter() && member_is_up(now_ms, i)) ++votes;
  }
  return votes >= config_.majority_vote_count();
}

// mongod's _getMyUnelectableReason (docs/mongodb-behaviour.md, Elections), checked in the same
// order.
std::string Topology::unelectable_reason(int64_t now_ms) const {
  const MemberConfig& me = config_.members[static_cast<size_t>(self_)];
  if (me.arbiter_only) return "ArbiterIAm";
  if (me.priority <= 0) return "NoPriority";
  if (!me.is_voter()) return "NotVoter";
  if (state_ != MemberState::kSecondary) return "NotSecondary";
  if (applied_ < min_valid_) return "NotCaughtUpToMinValid";
  if (frozen_until_ms_ > now_ms) return "StepDownPeriodActive";
  if (!sees_majority(now_ms)) return "CannotSeeMajority";
  return "";
}

// --- time -------------------------------------------------------------------------------------

int64_t Topology::next_timer_ms() const {
  int64_t next = std::numeric_limits<int64_t>::max();
  if (is_candidate()) next = std::min(next, election_.deadline_ms);
  if (state_ == MemberState::kSecondary && !is_candidate()) {
    next = std::min(next, election_deadline_ms_);
  }
  if (priority_takeover_ms_ >= 0) next = std::min(next, priority_takeover_ms_);
  return next;
}

void Topology::tick(int64_t now_ms) {
  send_due_heartbeats(now_ms);
  check_election_deadline(now_ms);
  check_primary_majority(now_ms);
  check_step_down_attempt(now_ms);
  check_catch_up(now_ms);
  check_priority_takeover(now_ms);
  check_election_timer(now_ms);
  choose_sync_source(now_ms);
  if (primary_ >= 0 && primary_ != self_ && !member_is_up(now_ms, primary_)) primary_ = -1;
}

void Topology::send_due_heartbeats(int64_t now_ms) {
  for (int i = 0; i < config_.member_count(); ++i) {
    if (i == self_ || next_heartbeat_ms_[static_cast<size_t>(i)] > now_ms) continue;
    next_heartbeat_ms_[static_cast<size_t>(i)] = now_ms + config_.settings.heartbeat_interval_ms;
    emit(Action{.kind = ActionKind::kSendHeartbeat, .target = i});
  }
}

void Topology::check_election_timer(int64_t now_ms) {
  if (state_ != MemberState::kSecondary || is_candidate()) return;
  // A set with a single voter elects itself at once (mongod's "singleNodePromptElection";
  // docs/mongodb-behaviour.md, Elections).
  bool alone =
      config_.voting_members_count() == 1 && config_.members[static_cast<size_t>(self_)].is_voter();
  if (alone && unelectable_reason(now_ms).empty()) {
    start_election(now_ms, "singleNodePromptElection", false);
    return;
  }
  if (now_ms < election_deadline_ms_) return;
  const std::string unelectable = unelectable_reason(now_ms);
  if (unelectable.empty()) {
    not_standing_logged_.clear();
    start_election(now_ms, "electionTimeout", false);
    return;
  }
  // Once per reason: an isolated or priority-0 member meets its timer every electionTimeout.
  if (unelectable != not_standing_logged_) {
    note_election("not standing for election after the election timeout: " + unelectable);
    not_standing_logged_ = unelectable;
  }
  arm_election_timer(now_ms);
}

// Priority takeover (docs/mongodb-behaviour.md, Elections): a caught-up secondary of higher
// priority than the primary calls an election after (rank + 1) * electionTimeoutMillis + jitter,
// rank = number of members with higher priority than it.
void Topology::check_priority_takeover(int64_t now_ms) {
  bool applies = state_ == MemberState::kSecondary && !is_candidate() && primary_ >= 0 &&
                 primary_ != self_ && unelectable_reason(now_ms).empty();
  if (applies) {
    const MemberConfig& me = config_.members[static_cast<size_t>(self_)];
    const MemberView& p = members_[static_cast<size_t>(primary_)];
    bool higher = me.priority > config_.members[static_cast<size_t>(primary_)].priority;
    bool fresh = static_cast<int64_t>(applied_.ts.seconds) + kPriorityTakeoverFreshnessSecs >=
                 static_cast<int64_t>(p.applied.ts.seconds);
    applies = higher && fresh;
  }
  if (!applies) {
    priority_takeover_ms_ = -1;
    return;
  }
  if (priority_takeover_ms_ < 0) {
    double my_priority = config_.members[static_cast<size_t>(self_)].priority;
    int64_t rank = std::count_if(config_.members.begin(), config_.members.end(),
                                 [&](const MemberConfig& m) { return m.priority > my_priority; });
    int64_t timeout = config_.settings.election_timeout_ms;
    int64_t max_jitter =
        static_cast<int64_t>(static_cast<double>(timeout) * kElectionJitterFraction);
    priority_takeover_ms_ = now_ms + (rank + 1) * timeout + jitter_ms(max_jitter);
    return;
  }
  if (now_ms >= priority_takeover_ms_) {
    priority_takeover_ms_ = -1;
    start_election(now_ms, "priorityTakeover", false);
  }
}

// A primary that has not heard from a majority of voters within electionTimeoutMillis relinquishes
// (docs/mongodb-behaviour.md, Losing the majority).
void Topology::check_primary_majority(int64_t now_ms) {
  if (state_ != MemberState::kPrimary || sees_majority(now_ms)) return;
  step_down_now(now_ms, "can't see a majority of the set, relinquishing primary");
}

void Topology::check_election_deadline(int64_t now_ms) {
  if (is_candidate() && now_ms >= election_.deadline_ms) {
    end_election(now_ms, false, "election timed out waiting for votes");
  }
}

// --- heartbeats -------------------------------------------------------------------------------

HeartbeatRequest Topology::make_heartbeat_request() const {
  return HeartbeatRequest{.set_name = config_.set_name,
                          .from_index = self_,
                          .term = persisted_.term,
                          .config_version = config_.version};
}

HeartbeatResponse Topology::on_heartbeat_request(int64_t now_ms, const HeartbeatRequest& request) {
  if (request.set_name == config_.set_name) adopt_term(now_ms, request.term);
  return HeartbeatResponse{.set_name = config_.set_name,
                           .term = persisted_.term,
                           .state = state_,
                           .applied = applied_,
                           .durable = durable_,
                           .last_committed = committed_,
                           .config_version = config_.version,
                           .primary_index = primary_,
                           .sync_source_index = sync_source_,
                           .priority = config_.members[static_cast<size_t>(self_)].priority,
                           .replica_set_id = config_.settings.replica_set_id};
}

bool Topology::is_other_set(const std::optional<bson::ObjectId>& replica_set_id) const {
  const std::optional<bson::ObjectId>& ours = config_.settings.replica_set_id;
  return ours && replica_set_id && !(*ours == *replica_set_id);
}

void Topology::on_heartbeat_response(int64_t now_ms, int from, const HeartbeatResponse& response) {
  if (from < 0 || from >= config_.member_count() || from == self_) return;
  if (response.set_name != config_.set_name || is_other_set(response.replica_set_id)) return;
  MemberView& m = members_[static_cast<size_t>(from)];
  m.ever_heard = true;
  m.last_heartbeat_ms = now_ms;
  m.state = response.state;
  m.term = response.term;
  // The latest report wins, even if lower: a member that rolled back really is behind now.
  m.applied = response.applied;
  m.durable = response.durable;
  adopt_term(now_ms, response.term);
  update_primary_from(from, response);
  learn_commit_point(response.last_committed);
  if (state_ == MemberState::kPrimary) update_commit_point_as_primary();
}

void Topology::update_primary_from(int from, const HeartbeatResponse& response) {
  if (response.state == MemberState::kPrimary && response.term == persisted_.term) {
    if (state_ != MemberState::kPrimary) primary_ = from;
    // Hearing from the current primary re-arms the election timer (docs/mongodb-behaviour.md,
    // Elections).
    if (state_ == MemberState::kSecondary && !is_candidate()) {
      arm_election_timer(members_[static_cast<size_t>(from)].last_heartbeat_ms);
      not_standing_logged_.clear();
    }
  } else if (primary_ == from) {
    primary_ = -1;
  }
}

// --- votes ------------------------------------------------------------------------------------

// The voter's checks from mongod's processReplSetRequestVotes, in its order and wording.
std::string Topology::voter_refusal(const VoteRequest& request) const {
  if (request.set_name != config_.set_name) {
    return "candidate's set name (" + request.set_name + ") differs from mine (" +
           config_.set_name + ")";
  }
  if (request.term < persisted_.term) {
    return "candidate's term (" + std::to_string(request.term) + ") is lower than mine (" +
           std::to_string(persisted_.term) + ")";
  }
  if (request.config_version < config_.version) {
    return "candidate's config version (" + std::to_string(request.config_version) +
           ") is lower than mine (" + std::to_string(config_.version) + ")";
  }
  if (request.candidate_index < 0 || request.candidate_index >= config_.member_count()) {
    return "candidate index " + std::to_string(request.candidate_index) + " is not in my config";
  }
  if (!request.dry_run && persisted_.last_vote_term == request.term) {
    // The vote's index is from the persisted state, which a later config (or a changed dbpath
    // file) need not match: named by host only when the config has it.
    const int voted = persisted_.last_vote_candidate;
    const std::string whom = voted >= 0 && voted < config_.member_count()
                                 ? config_.members[static_cast<size_t>(voted)].host
                                 : "member index " + std::to_string(voted);
    return "already voted for another candidate (" + whom + ") this term (" +
           std::to_string(request.term) + ")";
  }
  if (request.last_written < applied_) {
    return "candidate's data is staler than mine. candidate's last applied OpTime: " +
           optime_string(request.last_written) +
           ", my last applied OpTime: " + optime_string(applied_);
  }
  return "";
}

VoteResponse Topology::on_vote_request(int64_t now_ms, const VoteRequest& request) {
  // A real request's term is adopted before voting, even if the vote is refused; a dry run changes
  // nothing (docs/mongodb-behaviour.md, Elections).
  if (!request.dry_run && request.set_name == config_.set_name) adopt_term(now_ms, request.term);
  std::string refusal = voter_refusal(request);
  VoteResponse response{
      .term = persisted_.term, .vote_granted = refusal.empty(), .reason = refusal};
  if (response.vote_granted && !request.dry_run) {
    assert(persisted_.last_vote_term < request.term && "one vote per term");
    persisted_.last_vote_term = request.term;
    persisted_.last_vote_candidate = request.candidate_index;
    persist();
    if (state_ == MemberState::kSecondary) arm_election_timer(now_ms);
  }
  return response;
}

void Topology::on_vote_response(int64_t now_ms, int from, const VoteRequest& sent,
                                const VoteResponse& response) {
  if (from < 0 || from >= config_.member_count()) return;
  const auto is_current = [&] {
    return ((election_.phase == ElectionPhase::kDryRun && sent.dry_run) ||
            (election_.phase == ElectionPhase::kReal && !sent.dry_run)) &&
           sent.term == election_.request_term &&
           config_.members[static_cast<size_t>(from)].is_voter();
  };
  // Logged before the voter's term is adopted: a refusal from a newer term ends the election.
  if (is_current()) {
    note_election(std::string(sent.dry_run ? "dry-run vote" : "vote") + " for term " +
                  std::to_string(sent.term) + " from " +
                  config_.members[static_cast<size_t>(from)].host +
                  (response.vote_granted ? ": granted" : ": refused: " + response.reason) +
                  (response.term > persisted_.term
                       ? " (the voter is in term " + std::to_string(response.term) + ")"
                       : ""));
  }
  adopt_term(now_ms, response.term);
  if (!is_current()) return;
  election_.answered[static_cast<size_t>(from)] = true;
  if (response.vote_granted) election_.granted[static_cast<size_t>(from)] = true;
  if (granted_votes() < config_.majority_vote_count()) {
    // As mongod's vote requester: once every voter has answered without a majority the
    // election is lost at once, not at its deadline (a lingering candidate refuses
    // replSetStepUp and ignores its election timer).
    if (every_voter_answered()) end_election(now_ms, false, "received insufficient votes");
    return;
  }
  if (election_.phase == ElectionPhase::kDryRun) {
    start_real_election(now_ms);
  } else {
    end_election(now_ms, true, "");
  }
}

// --- elections --------------------------------------------------------------------------------

void Topology::start_election(int64_t now_ms, const std::string& reason, bool skip_dry_run) {
  assert(!is_candidate());
  election_.reason = reason;
  reset_votes();
  election_.deadline_ms = now_ms + config_.settings.election_timeout_ms;
  if (skip_dry_run) {
    start_real_election(now_ms);
    return;
  }
  election_.phase = ElectionPhase::kDryRun;
  election_.request_term = persisted_.term;
  note_election("conducting a dry run election to see if we could be elected (" + reason +
                "), current term " + std::to_string(persisted_.term));
  if (granted_votes() >= config_.majority_vote_count()) {
    start_real_election(now_ms);
    return;
  }
  send_vote_requests(true);
}

void Topology::start_real_election(int64_t now_ms) {
  // term += 1, vote for self, persist, then ask for real votes (docs/mongodb-behaviour.md,
  // Elections).
  election_.phase = ElectionPhase::kReal;
  reset_votes();
  persisted_.term += 1;
  persisted_.last_vote_term = persisted_.term;
  persisted_.last_vote_candidate = self_;
  election_.request_term = persisted_.term;
  primary_ = -1;
  persist();
  note_election("running for election in term " + std::to_string(persisted_.term) + " (" +
                election_.reason + ")");
  if (granted_votes() >= config_.majority_vote_count()) {
    end_election(now_ms, true, "");
    return;
  }
  send_vote_requests(false);
}

void Topology::send_vote_requests(bool dry_run) {
  VoteRequest request{.set_name = config_.set_name,
                      .dry_run = dry_run,
                      .term = election_.request_term,
                      .candidate_index = self_,
                      .config_version = config_.version,
                      .config_term = config_.term,
                      .last_written = applied_};
  for (int i = 0; i < config_.member_count(); ++i) {
    if (i == self_ || !config_.members[static_cast<size_t>(i)].is_voter()) continue;
    emit(Action{.kind = ActionKind::kSendVoteRequest, .target = i, .vote_request = request});
  }
}

void Topology::reset_votes() {
  election_.granted.assign(config_.members.size(), false);
  election_.answered.assign(config_.members.size(), false);
  election_.granted[static_cast<size_t>(self_)] = true;
  election_.answered[static_cast<size_t>(self_)] = true;
}

bool Topology::every_voter_answered() const {
  for (int i = 0; i < config_.member_count(); ++i) {
    if (config_.members[static_cast<size_t>(i)].is_voter() &&
        !election_.answered[static_cast<size_t>(i)]) {
      return false;
    }
  }
  return true;
}

int Topology::granted_votes() const {
  int n = 0;
  for (bool g : election_.granted) n += g ? 1 : 0;
  return n;
}

void Topology::end_election(int64_t now_ms, bool won, const std::string& why) {
  std::string reason = election_.reason;
  const bool dry_run = election_.phase == ElectionPhase::kDryRun;
  election_.phase = ElectionPhase::kNone;
  if (step_up_pending_) {
    step_up_pending_ = false;
    emit(Action{.kind = ActionKind::kStepUpFinished,
                .code = won ? 0 : code::kCommandFailed,
                .reason = won ? "" : "Election failed: " + why});
  }
  if (won) {
    last_election_reason_ = reason;
    become_primary(now_ms);
  } else {
    note_election(std::string(dry_run ? "dry run in term " : "election for term ") +
                  std::to_string(election_.request_term) + " lost (" + reason + "): " + why + "; " +
                  std::to_string(granted_votes()) + " votes, " +
                  std::to_string(config_.majority_vote_count()) + " needed");
    arm_election_timer(now_ms);
  }
}

void Topology::become_primary(int64_t now_ms) {
  assert(state_ == MemberState::kSecondary);
  state_ = MemberState::kPrimary;
  primary_ = self_;
  writable_ = false;
  noop_requested_ = false;
  priority_takeover_ms_ = -1;
  emit(Action{.kind = ActionKind::kBecomePrimary,
              .reason = "election succeeded, term " + std::to_string(persisted_.term)});
  // Catch-up (docs/mongodb-behaviour.md, Elections): fetch what reachable members have beyond our
  // log before taking writes.
  catch_up_ = CatchUp{};
  if (config_.settings.catch_up_timeout_ms != 0) {
    for (int i = 0; i < config_.member_count(); ++i) {
      if (i == self_ || !member_is_up(now_ms, i)) continue;
      const MemberView& m = members_[static_cast<size_t>(i)];
      if (m.applied > applied_ && m.applied > catch_up_.target) {
        catch_up_.target = m.applied;
        catch_up_.target_index = i;
      }
    }
  }
  if (catch_up_.target_index < 0) {
    finish_catch_up();
    return;
  }
  catch_up_.active = true;
  int64_t limit = config_.settings.catch_up_timeout_ms;
  catch_up_.deadline_ms = limit < 0 ? -1 : now_ms + limit;
  sync_source_ = catch_up_.target_index;
  emit(Action{.kind = ActionKind::kChangeSyncSource, .target = sync_source_});
}

void Topology::check_catch_up(int64_t now_ms) {
  if (!catch_up_.active) return;
  bool reached = applied_ >= catch_up_.target;
  bool timed_out = catch_up_.deadline_ms >= 0 && now_ms >= catch_up_.deadline_ms;
  // With no time limit, losing the member we catch up from would stall the set forever.
  bool target_lost = !member_is_up(now_ms, catch_up_.target_index);
  if (reached || timed_out || target_lost) finish_catch_up();
}

void Topology::finish_catch_up() {
  catch_up_.active = false;
  if (sync_source_ != -1) {
    sync_source_ = -1;
    emit(Action{.kind = ActionKind::kChangeSyncSource, .target = -1});
  }
  if (!noop_requested_) {
    noop_requested_ = true;
    emit(Action{.kind = ActionKind::kWriteNewPrimaryNoop});
  }
}

void Topology::on_new_primary_noop_written(int64_t now_ms, OpTime optime) {
  if (state_ != MemberState::kPrimary || !noop_requested_) return;
  assert(optime.term == persisted_.term);
  on_my_optimes(now_ms, optime, std::max(durable_, optime));
  if (!step_down_.active) writable_ = true;
}

void Topology::step_down_now(int64_t now_ms, const std::string& reason) {
  assert(state_ == MemberState::kPrimary);
  state_ = MemberState::kSecondary;
  writable_ = false;
  noop_requested_ = false;
  primary_ = -1;
  catch_up_ = CatchUp{};
  if (step_down_.active) {
    step_down_.active = false;
    emit(Action{.kind = ActionKind::kStepDownFinished, .code = 0, .reason = reason});
  }
  emit(Action{.kind = ActionKind::kStepDown, .reason = reason});
  arm_election_timer(now_ms);
}

// --- replSetStepDown / replSetFreeze / replSetStepUp ---------------------------------------------
// (docs/mongodb-behaviour.md, Step-down commands)

void Topology::step_down(int64_t now_ms, const StepDownRequest& request) {
  if (state_ != MemberState::kPrimary || step_down_.active) {
    throw CommandError(code::kNotWritablePrimary, "not primary so can't step down");
  }
  assert(request.step_down_secs > 0 && request.catch_up_secs >= 0);
  step_down_ = StepDownAttempt{
      .active = true, .request = request, .deadline_ms = now_ms + request.catch_up_secs * 1000};
  writable_ = false;
  emit(Action{.kind = ActionKind::kStepDownAttemptStarted});
  check_step_down_attempt(now_ms);
}

int Topology::majority_applied_count() const {
  int n = 0;
  for (int i = 0; i < config_.member_count(); ++i) {
    const MemberConfig& m = config_.members[static_cast<size_t>(i)];
    if (!m.is_voter()) continue;
    OpTime their = i == self_ ? applied_ : members_[static_cast<size_t>(i)].applied;
    if (their >= applied_) ++n;
  }
  return n;
}

int Topology::caught_up_electable_secondary(int64_t now_ms) const {
  int best = -1;
  for (int i = 0; i < config_.member_count(); ++i) {
    const MemberConfig& m = config_.members[static_cast<size_t>(i)];
    const MemberView& v = members_[static_cast<size_t>(i)];
    if (i == self_ || !m.is_electable() || !m.is_voter() || !member_is_up(now_ms, i)) continue;
    if (v.state != MemberState::kSecondary || v.applied < applied_) continue;
    if (best < 0 || m.priority > config_.members[static_cast<size_t>(best)].priority) best = i;
  }
  return best;
}

void Topology::check_step_down_attempt(int64_t now_ms) {
  if (!step_down_.active) return;
  int successor = caught_up_electable_secondary(now_ms);
  bool caught_up = successor >= 0 && majority_applied_count() >= config_.majority_vote_count();
  bool expired = now_ms >= step_down_.deadline_ms;
  if (caught_up || (expired && step_down_.request.force)) {
    frozen_until_ms_ = now_ms + step_down_.request.step_down_secs * 1000;
    bool handoff = caught_up && !step_down_.request.force;
    step_down_now(now_ms, "Stepping down from primary in response to replSetStepDown");
    if (handoff) emit(Action{.kind = ActionKind::kSendStepUp, .target = successor});
    return;
  }
  if (expired) {
    step_down_.active = false;
    writable_ = noop_requested_ && !catch_up_.active;
    emit(Action{.kind = ActionKind::kStepDownFinished,
                .code = code::kExceededTimeLimit,
                .reason = "No electable secondaries caught up as of " + iso_date(now_ms) +
                          ". Please use the replSetStepDown command with the argument {force: "
                          "true} to force node to step down."});
  }
}

bson::Document Topology::freeze(int64_t now_ms, int64_t secs) {
  if (state_ == MemberState::kPrimary || is_candidate()) {
    std::string state = state_ == MemberState::kPrimary ? "Primary" : "Running-Election";
    throw CommandError(code::kNotSecondary,
                       "cannot freeze node when primary or running for election. state: " + state);
  }
  if (secs < 0) throw CommandError(code::kBadValue, "freeze period must not be negative");
  if (secs == 0) {
    frozen_until_ms_ = 0;
    return bson::Document{{"info", bson::V("unfreezing")}};
  }
  frozen_until_ms_ = now_ms + secs * 1000;
  if (secs == 1)
    return bson::Document{{"warning", bson::V("you really want to freeze for only 1 second?")}};
  return {};
}

void Topology::step_up(int64_t now_ms, bool skip_dry_run) {
  std::string reason = unelectable_reason(now_ms);
  if (reason.empty() && is_candidate()) reason = "already running for election";
  if (!reason.empty()) throw CommandError(code::kCommandFailed, "Election failed: " + reason);
  step_up_pending_ = true;
  start_election(now_ms, skip_dry_run ? "stepUpRequestSkipDryRun" : "stepUpRequest", skip_dry_run);
}

}  // namespace mongosim::repl
