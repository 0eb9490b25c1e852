// One member's view of its replica set and the protocol-version-1 rules it acts on
// (docs/mongodb-behaviour.md, Replica sets): state, term, vote, election timer, elections with dry
// run, catch-up, priority takeover, stepping down, freeze, step-up, sync-source choice and the
// majority commit point. Like mongod's TopologyCoordinator it does no I/O and reads no clock: every
// input is an event carrying `now_ms`, every output is an Action the caller performs. Given the
// same config, seed and events it makes the same decisions, which is what lets a simulation test
// drive N of them.
//
// How to drive it (the server's replication threads; a simulation does the same):
// - Call tick(now) often (every ~50 ms): heartbeats, election timer, majority check, step-down
//   deadlines and catch-up deadlines all fire from there. Call it also at next_timer_ms(): the
//   election timers fire at their deadline, not at the next regular tick (members whose ticks
//   run in step would otherwise stand in the same tick whenever their jittered deadlines fall
//   in one tick interval, and split the vote).
// - kSendHeartbeat(target): send make_heartbeat_request() to the target (replSetHeartbeat);
//   feed the reply to on_heartbeat_response(), nothing on failure (silence marks it down
//   after electionTimeoutMillis; docs/mongodb-behaviour.md, Losing the majority). The target
//   answers with on_heartbeat_request().
// - kSendVoteRequest(target, request): send replSetRequestVotes; feed the reply to
//   on_vote_response() together with the request that was sent. Voters answer with
//   on_vote_request().
// - kPersistState: write persistent_state() (term and LastVote, mongod's
//   local.replset.election) durably. Perform it BEFORE any message produced by the same call
//   leaves the process, including the reply returned by on_vote_request().
// - kBecomePrimary: state is PRIMARY but not writable; update hello (electionId from term()).
// - kWriteNewPrimaryNoop: catch-up is over; append {op:"n", o:{msg:"new primary"}} in term(),
//   then call on_new_primary_noop_written(); from then on is_writable_primary() is true.
// - kStepDownAttemptStarted: a replSetStepDown began; refuse new writes and kill running
//   writes with 11602 (docs/mongodb-behaviour.md, Step-down commands). kStepDownFinished(code,
//   reason) answers that command: code 0 is {ok:1}, otherwise the CommandError to return (262); on
//   262 the node is writable again.
// - kStepDown(reason): no longer primary; fail write-concern waiters with 189, writes get 10107.
// - kSendStepUp(target): election handoff, send {replSetStepUp:1, skipDryRun:true}.
// - kStepUpFinished(code, reason): answers a replSetStepUp (0: won, else 125 CommandFailed).
// - kChangeSyncSource(target or -1): point the oplog fetcher there. The fetcher reports what it
//   applies through on_my_optimes(), what the source knows through on_sync_source_progress(),
//   and a divergence (OplogStartMissing) through on_oplog_diverged().
// - kStartRollback(target): run the rollback against target (see rollback_plan.h), then call
//   on_rollback_complete() with the truncated log's optimes.
// - kCommitPointAdvanced(optime): wake w:"majority" waiters and majority reads.
// - kElectionProgress(reason): log it. An election's steps as this member takes them (dry run
//   started, real election started, each vote answered, the election lost and why): a set that
//   fails to elect says why in its members' logs.
// A primary learns secondaries' progress from heartbeats and from on_position_update()
// (replSetUpdatePosition, and the position an oplog fetch carries), which must be given the
// reporter's term; it reports its own writes through on_my_optimes().
//
// Invariants (asserted): the term never decreases; at most one vote per term; the commit point
// never moves backwards and only advances on a primary to an optime of its own term; only a
// PRIMARY is writable.
//
// Thread rules: not synchronised; the server guards each member's Topology with one mutex.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/optime.h"
#include "bson/value.h"
#include "repl/config.h"
#include "repl/member_state.h"
#include "repl/messages.h"

namespace mongosim::repl {

// What must survive a restart (mongod keeps it in local.replset.election).
struct PersistentState {
  int64_t term = 0;
  int64_t last_vote_term = -1;   // the term of the last vote this member cast
  int last_vote_candidate = -1;  // config index it voted for
};

enum class ActionKind {
  kPersistState,
  kSendHeartbeat,
  kSendVoteRequest,
  kBecomePrimary,
  kWriteNewPrimaryNoop,
  kStepDownAttemptStarted,
  kStepDownFinished,
  kStepDown,
  kSendStepUp,
  kStepUpFinished,
  kChangeSyncSource,
  kStartRollback,
  kCommitPointAdvanced,
  kElectionProgress,
};

struct Action {
  ActionKind kind;
  int target = -1;                // member index for sends, sync source, rollback source
  VoteRequest vote_request = {};  // kSendVoteRequest
  int32_t code = 0;               // kStepDownFinished, kStepUpFinished: 0 or the error code
  std::string reason = {};        // human-readable, mongod's log wording where it has one
                                  // (kElectionProgress: what happened)
  OpTime optime = {};             // kCommitPointAdvanced
};

struct StepDownRequest {
  int64_t step_down_secs = 60;
  int64_t catch_up_secs = 10;
  bool force = false;
};

// What this member last heard from another (replSetGetStatus members[], sync and commit logic).
struct MemberView {
  bool ever_heard = false;
  int64_t last_heartbeat_ms = 0;  // when its last heartbeat reply arrived
  MemberState state = MemberState::kUnknown;
  int64_t term = -1;
  OpTime applied;
  OpTime durable;
};

class Topology {
 public:
  // Upper bound on queued actions: the caller must drain take_actions() after every event.
  static constexpr size_t kMaxPendingActions = 256;
  // A secondary this close (seconds) to the primary's optime may take over by priority
  // (docs/mongodb-behaviour.md, Elections).
  static constexpr int64_t kPriorityTakeoverFreshnessSecs = 2;

  struct Options {
    int self_index = 0;
    uint64_t seed = 1;  // for election-timer jitter
    PersistentState persisted;
    OpTime applied;
    OpTime durable;
    int64_t now_ms = 0;
  };
  Topology(ReplSetConfig config, const Options& options);

  // Time passing: sends due heartbeats, fires timers, checks the primary still sees a majority.
  void tick(int64_t now_ms);

  HeartbeatRequest make_heartbeat_request() const;
  HeartbeatResponse on_heartbeat_request(int64_t now_ms, const HeartbeatRequest& request);
  // A response from a member of another set (another replicaSetId under the same name, e.g. on a
  // port a dead member of ours left free) is ignored, as silence: it says nothing about ours.
  void on_heartbeat_response(int64_t now_ms, int from, const HeartbeatResponse& response);
  // Whether a message naming this replicaSetId comes from another set than this member's: both
  // configs have an id and they differ (an id missing on either side proves nothing).
  bool is_other_set(const std::optional<bson::ObjectId>& replica_set_id) const;

  VoteResponse on_vote_request(int64_t now_ms, const VoteRequest& request);
  void on_vote_response(int64_t now_ms, int from, const VoteRequest& sent,
                        const VoteResponse& response);

  // This member's oplog changed (a write on the primary, a batch applied on a secondary).
  // Optimes only move forward here; rollback uses on_rollback_complete().
  void on_my_optimes(int64_t now_ms, OpTime applied, OpTime durable);
  // replSetUpdatePosition (or the position an oplog fetch carries) from another member, with
  // the term the sender was in when it sent the report. A report from a newer term is not
  // counted: the sender may have voted for a candidate that lacks what it reports, so counting
  // it could commit entries the new primary will roll back. It makes this member adopt that
  // term, stepping down if primary (docs/mongodb-behaviour.md, Elections).
  void on_position_update(int64_t now_ms, int from, int64_t sender_term, OpTime applied,
                          OpTime durable);
  // The same without the sender's term, for callers whose reports do not carry it yet. Unsafe
  // on a primary whenever the sender may already be in a newer term: pass the term.
  void on_position_update(int64_t now_ms, int from, OpTime applied, OpTime durable);
  // The sync source's term and commit point, as oplog fetch replies carry them.
  void on_sync_source_progress(int64_t now_ms, int64_t source_term, OpTime source_committed);
  void on_new_primary_noop_written(int64_t now_ms, OpTime optime);
  // The fetcher found that the sync source does not have our newest entry
  // (docs/mongodb-behaviour.md, Oplog and rollback).
  void on_oplog_diverged(int64_t now_ms, int source);
  void on_rollback_complete(int64_t now_ms, OpTime applied, OpTime durable);

  // minValid: after a rollback refetched documents, this member's data is consistent only once it
  // has applied through `optime` (the sync source's newest entry at refetch time); until then it
  // does not stand for election (NotCaughtUpToMinValid).
  void set_min_valid(OpTime optime) { min_valid_ = optime; }
  OpTime min_valid() const { return min_valid_; }

  // replSetStepDown after argument parsing. Throws CommandError 10107 when not primary; the outcome
  // arrives later as kStepDownFinished.
  void step_down(int64_t now_ms, const StepDownRequest& request);
  // replSetFreeze: returns the reply fields. Throws 95 on a primary or a candidate.
  bson::Document freeze(int64_t now_ms, int64_t secs);
  // replSetStepUp: starts an election now. Throws 125 if this member cannot stand; the outcome
  // arrives as kStepUpFinished.
  void step_up(int64_t now_ms, bool skip_dry_run);

  std::vector<Action> take_actions();

  // The earliest instant at which an election timer of this member runs out: the election
  // timeout (a secondary), the candidate's vote deadline, a scheduled priority takeover.
  // INT64_MAX when none is running.
  int64_t next_timer_ms() const;

  const ReplSetConfig& config() const { return config_; }
  int self_index() const { return self_; }
  MemberState state() const { return state_; }
  int64_t term() const { return persisted_.term; }
  const PersistentState& persistent_state() const { return persisted_; }
  bool is_writable_primary() const { return state_ == MemberState::kPrimary && writable_; }
  bool is_candidate() const { return election_.phase != ElectionPhase::kNone; }
  int primary_index() const { return primary_; }
  int sync_source() const { return sync_source_; }
  OpTime applied() const { return applied_; }
  OpTime durable() const { return durable_; }
  OpTime last_committed() const { return committed_; }
  const MemberView& member(int index) const { return members_[static_cast<size_t>(index)]; }
  bool member_is_up(int64_t now_ms, int index) const;
  bool sees_majority(int64_t now_ms) const;
  // Empty when this member could stand for election now; otherwise mongod's reason.
  std::string unelectable_reason(int64_t now_ms) const;
  const std::string& last_election_reason() const { return last_election_reason_; }

 private:
  enum class ElectionPhase { kNone, kDryRun, kReal };
  struct Election {
    ElectionPhase phase = ElectionPhase::kNone;
    int64_t request_term = 0;
    std::vector<bool> granted;   // per member index
    std::vector<bool> answered;  // per member index: a response for this phase arrived
    int64_t deadline_ms = 0;
    std::string reason;
  };
  struct StepDownAttempt {
    bool active = false;
    StepDownRequest request;
    int64_t deadline_ms = 0;
  };
  struct CatchUp {
    bool active = false;
    OpTime target;
    int target_index = -1;
    int64_t deadline_ms = -1;  // -1: no limit
  };

  void emit(Action action);
  void note_election(std::string what);
  void persist();
  void adopt_term(int64_t now_ms, int64_t term);
  void arm_election_timer(int64_t now_ms);
  int64_t jitter_ms(int64_t max_ms);

  void send_due_heartbeats(int64_t now_ms);
  void check_election_timer(int64_t now_ms);
  void check_priority_takeover(int64_t now_ms);
  void check_primary_majority(int64_t now_ms);
  void check_election_deadline(int64_t now_ms);

  void start_election(int64_t now_ms, const std::string& reason, bool skip_dry_run);
  void start_real_election(int64_t now_ms);
  void send_vote_requests(bool dry_run);
  int granted_votes() const;
  void reset_votes();
  bool every_voter_answered() const;
  void end_election(int64_t now_ms, bool won, const std::string& why);
  void become_primary(int64_t now_ms);
  void finish_catch_up();
  void check_catch_up(int64_t now_ms);
  void step_down_now(int64_t now_ms, const std::string& reason);

  void check_step_down_attempt(int64_t now_ms);
  int caught_up_electable_secondary(int64_t now_ms) const;
  int majority_applied_count() const;

  void update_commit_point_as_primary();
  void learn_commit_point(OpTime committed);
  void update_primary_from(int from, const HeartbeatResponse& response);
  void choose_sync_source(int64_t now_ms);
  bool is_usable_sync_source(int64_t now_ms, int index) const;
  bool is_good_sync_source(int64_t now_ms, int index) const;

  std::string voter_refusal(const VoteRequest& request) const;

  ReplSetConfig config_;
  int self_;
  uint64_t rng_state_;
  PersistentState persisted_;
  MemberState state_ = MemberState::kSecondary;
  bool writable_ = false;
  bool noop_requested_ = false;
  int primary_ = -1;
  int sync_source_ = -1;
  OpTime applied_;
  OpTime durable_;
  OpTime committed_;
  OpTime min_valid_;
  std::vector<MemberView> members_;
  std::vector<int64_t> next_heartbeat_ms_;
  int64_t election_deadline_ms_ = 0;
  int64_t priority_takeover_ms_ = -1;  // -1: not scheduled
  int64_t frozen_until_ms_ = 0;        // replSetFreeze and the stepdown window
  Election election_;
  StepDownAttempt step_down_;
  CatchUp catch_up_;
  bool step_up_pending_ = false;
  std::string last_election_reason_;
  std::string not_standing_logged_;  // the unelectable reason last logged at the timer
  std::vector<Action> actions_;
};

}  // namespace mongosim::repl
