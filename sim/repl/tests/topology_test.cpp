// Unit tests of one member's protocol logic, driven by hand-written events
// (docs/mongodb-behaviour.md, Replica sets).
#include "repl/topology.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "base/command_error.h"
#include "base/error_codes.h"

namespace mongosim::repl {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000;

ReplSetConfig config_of(int members, std::vector<double> priorities = {}) {
  ReplSetConfig c;
  c.set_name = "rs0";
  for (int i = 0; i < members; ++i) {
    MemberConfig m;
    m.id = i;
    m.host = "h" + std::to_string(i) + ":1";
    if (!priorities.empty()) m.priority = priorities[static_cast<size_t>(i)];
    c.members.push_back(m);
  }
  return c;
}

OpTime ot(int64_t term, uint32_t secs) {
  return OpTime{bson::Timestamp{secs, 1}, term};
}

class Member {
 public:
  explicit Member(int self, ReplSetConfig config = config_of(3), OpTime applied = ot(0, 1))
      : topo(std::move(config), Topology::Options{.self_index = self,
                                                  .seed = 42,
                                                  .persisted = {},
                                                  .applied = applied,
                                                  .durable = applied,
                                                  .now_ms = kT0}) {}

  // A heartbeat reply from `from`, as a healthy member in `state` would send it.
  void hear(int from, MemberState state, int64_t term, OpTime applied,
            std::optional<bson::ObjectId> replica_set_id = std::nullopt) {
    HeartbeatResponse r{.set_name = "rs0",
                        .term = term,
                        .state = state,
                        .applied = applied,
                        .durable = applied,
                        .last_committed = {},
                        .config_version = 1,
                        .primary_index = state == MemberState::kPrimary ? from : -1,
                        .sync_source_index = -1,
                        .priority = 1,
                        .replica_set_id = replica_set_id};
    topo.on_heartbeat_response(now, from, r);
    collect();
  }
  void hear_all_secondaries(OpTime applied = ot(0, 1)) {
    for (int i = 0; i < topo.config().member_count(); ++i) {
      if (i != topo.self_index()) hear(i, MemberState::kSecondary, topo.term(), applied);
    }
  }
  void advance(int64_t ms) {
    for (int64_t end = now + ms; now < end;) {
      now += 10;
      topo.tick(now);
      collect();
    }
  }
  void collect() {
    auto a = topo.take_actions();
    actions.insert(actions.end(), a.begin(), a.end());
  }
  std::vector<Action> taken(ActionKind kind) {
    std::vector<Action> out;
    for (const Action& a : actions) {
      if (a.kind == kind) out.push_back(a);
    }
    return out;
  }
  // Sees every member, then replSetStepUp without a dry run: the real vote requests it sent.
  std::vector<Action> step_up_skipping_dry_run() {
    hear_all_secondaries();
    topo.step_up(now, true);
    collect();
    return taken(ActionKind::kSendVoteRequest);
  }
  // Drives a full election win with yes votes from every other member.
  void win_election() {
    for (int i = 0; i < 20 && taken(ActionKind::kSendVoteRequest).empty(); ++i) {
      hear_all_secondaries(topo.applied());
      advance(1'000);
    }
    for (const Action& a : taken(ActionKind::kSendVoteRequest)) {
      if (a.vote_request.dry_run) {
        topo.on_vote_response(now, a.target, a.vote_request, VoteResponse{topo.term(), true, ""});
      }
    }
    collect();
    for (const Action& a : taken(ActionKind::kSendVoteRequest)) {
      if (!a.vote_request.dry_run) {
        topo.on_vote_response(now, a.target, a.vote_request, VoteResponse{topo.term(), true, ""});
      }
    }
    collect();
  }

  Topology topo;
  int64_t now = kT0;
  std::vector<Action> actions;
};

VoteRequest vote_request(int candidate, int64_t term, OpTime last, bool dry_run = false) {
  return VoteRequest{.set_name = "rs0",
                     .dry_run = dry_run,
                     .term = term,
                     .candidate_index = candidate,
                     .config_version = 1,
                     .config_term = -1,
                     .last_written = last};
}

TEST(ReplTopology, VotesAtMostOncePerTermAndPersistsTheVote) {
  Member m(1);
  VoteResponse first = m.topo.on_vote_request(m.now, vote_request(0, 1, ot(0, 1)));
  m.collect();
  EXPECT_TRUE(first.vote_granted) << first.reason;
  EXPECT_EQ(m.topo.term(), 1);
  EXPECT_EQ(m.topo.persistent_state().last_vote_term, 1);
  EXPECT_EQ(m.topo.persistent_state().last_vote_candidate, 0);
  EXPECT_FALSE(m.taken(ActionKind::kPersistState).empty());
  VoteResponse second = m.topo.on_vote_request(m.now, vote_request(2, 1, ot(0, 1)));
  EXPECT_FALSE(second.vote_granted);
  EXPECT_NE(second.reason.find("already voted for another candidate (h0:1) this term (1)"),
            std::string::npos);
}

// A vote persisted for a member index the config does not have (a later, smaller config; a
// changed dbpath file) is named by its index: it indexed the config's members (out of range: a
// crash).
TEST(ReplTopology, AVoteForAMemberTheConfigLacksIsNamedByIndex) {
  Topology topo(config_of(3), Topology::Options{.self_index = 1,
                                                .seed = 42,
                                                .persisted = {.term = 1,
                                                              .last_vote_term = 1,
                                                              .last_vote_candidate = 100'000'000},
                                                .applied = ot(0, 1),
                                                .durable = ot(0, 1),
                                                .now_ms = kT0});
  VoteResponse r = topo.on_vote_request(kT0, vote_request(0, 1, ot(0, 1)));
  EXPECT_FALSE(r.vote_granted);
  EXPECT_NE(r.reason.find("already voted for another candidate (member index 100000000)"),
            std::string::npos)
      << r.reason;
}

TEST(ReplTopology, RefusesStaleLogsLowerTermsAndOtherSets) {
  Member m(1, config_of(3), ot(2, 50));
  m.topo.on_vote_request(m.now, vote_request(0, 3, ot(2, 40)));
  VoteResponse stale = m.topo.on_vote_request(m.now, vote_request(0, 4, ot(2, 40)));
  EXPECT_FALSE(stale.vote_granted);
  EXPECT_NE(stale.reason.find("candidate's data is staler than mine"), std::string::npos);
  EXPECT_EQ(m.topo.term(), 4);  // the real request's term is adopted even when refused
  VoteResponse low = m.topo.on_vote_request(m.now, vote_request(0, 3, ot(2, 60)));
  EXPECT_FALSE(low.vote_granted);
  EXPECT_NE(low.reason.find("candidate's term (3) is lower than mine (4)"), std::string::npos);
  VoteRequest other = vote_request(0, 5, ot(2, 60));
  other.set_name = "rs9";
  EXPECT_FALSE(m.topo.on_vote_request(m.now, other).vote_granted);
  EXPECT_EQ(m.topo.term(), 4);
}

TEST(ReplTopology, DryRunChangesNeitherTermNorVote) {
  Member m(1);
  VoteResponse r = m.topo.on_vote_request(m.now, vote_request(0, 0, ot(0, 1), true));
  EXPECT_TRUE(r.vote_granted);
  EXPECT_EQ(m.topo.term(), 0);
  EXPECT_EQ(m.topo.persistent_state().last_vote_term, -1);
}

TEST(ReplTopology, ElectionRunsDryRunThenRealVoteThenWaitsForTheNoop) {
  Member m(0);
  m.win_election();
  auto requests = m.taken(ActionKind::kSendVoteRequest);
  ASSERT_EQ(requests.size(), 4u);  // dry run and real, to members 1 and 2
  EXPECT_TRUE(requests[0].vote_request.dry_run);
  EXPECT_EQ(requests[0].vote_request.term, 0);
  EXPECT_FALSE(requests[2].vote_request.dry_run);
  EXPECT_EQ(requests[2].vote_request.term, 1);
  EXPECT_EQ(m.topo.state(), MemberState::kPrimary);
  EXPECT_EQ(m.topo.persistent_state().last_vote_candidate, 0);
  EXPECT_EQ(m.topo.last_election_reason(), "electionTimeout");
  EXPECT_FALSE(m.topo.is_writable_primary());
  ASSERT_EQ(m.taken(ActionKind::kWriteNewPrimaryNoop).size(), 1u);
  m.topo.on_new_primary_noop_written(m.now, ot(1, 2));
  EXPECT_TRUE(m.topo.is_writable_primary());
}

TEST(ReplTopology, ElectionTimerFiresWithinTimeoutPlusFifteenPercent) {
  Member m(0);
  m.hear_all_secondaries();
  int64_t start = m.now;
  while (m.taken(ActionKind::kSendVoteRequest).empty() && m.now - start < 20'000) {
    m.hear_all_secondaries();  // keep seeing the majority without re-arming (no primary)
    m.advance(10);
  }
  int64_t fired = m.now - start;
  EXPECT_GE(fired, 10'000);
  EXPECT_LE(fired, 11'510);
}

// next_timer_ms is the instant the election timer runs out: a tick one millisecond before it
// starts nothing, a tick at it starts the dry run; then it is the candidate's vote deadline.
// (The glue ticks at it, so members do not stand only on their regular ticks.)
TEST(ReplTopology, NextTimerIsTheElectionDeadlineThenTheVoteDeadline) {
  Member m(1);
  m.hear(0, MemberState::kPrimary, 0, ot(0, 1));
  m.hear(2, MemberState::kSecondary, 0, ot(0, 1));
  const int64_t deadline = m.topo.next_timer_ms();
  ASSERT_GE(deadline, m.now + 10'000);
  ASSERT_LE(deadline, m.now + 11'500);
  m.now = deadline - 1'000;
  m.hear(2, MemberState::kSecondary, 0, ot(0, 1));  // still sees the majority (not the primary)
  m.topo.tick(deadline - 1);
  m.collect();
  EXPECT_TRUE(m.taken(ActionKind::kSendVoteRequest).empty());
  EXPECT_EQ(m.topo.next_timer_ms(), deadline);
  m.topo.tick(deadline);
  m.collect();
  ASSERT_FALSE(m.taken(ActionKind::kSendVoteRequest).empty());
  EXPECT_TRUE(m.topo.is_candidate());
  EXPECT_EQ(m.topo.next_timer_ms(), deadline + m.topo.config().settings.election_timeout_ms);
}

TEST(ReplTopology, DoesNotStandWithoutSeeingAMajority) {
  Member m(0);
  m.advance(30'000);
  EXPECT_TRUE(m.taken(ActionKind::kSendVoteRequest).empty());
  EXPECT_EQ(m.topo.unelectable_reason(m.now), "CannotSeeMajority");
}

TEST(ReplTopology, HeartbeatsFromThePrimaryKeepTheTimerFromFiring) {
  Member m(1);
  for (int i = 0; i < 20; ++i) {
    m.hear(0, MemberState::kPrimary, 0, ot(0, 1));
    m.hear(2, MemberState::kSecondary, 0, ot(0, 1));
    m.advance(2'000);
  }
  EXPECT_TRUE(m.taken(ActionKind::kSendVoteRequest).empty());
  EXPECT_EQ(m.topo.primary_index(), 0);
}

TEST(ReplTopology, PrimaryThatLosesTheMajorityStepsDown) {
  Member m(0);
  m.win_election();
  m.topo.on_new_primary_noop_written(m.now, ot(1, 2));
  m.advance(12'000);  // nobody answers heartbeats
  EXPECT_EQ(m.topo.state(), MemberState::kSecondary);
  auto downs = m.taken(ActionKind::kStepDown);
  ASSERT_EQ(downs.size(), 1u);
  EXPECT_NE(downs[0].reason.find("can't see a majority"), std::string::npos);
}

TEST(ReplTopology, PrimaryStepsDownOnSeeingAHigherTerm) {
  Member m(0);
  m.win_election();
  m.hear(1, MemberState::kSecondary, 5, ot(0, 1));
  EXPECT_EQ(m.topo.state(), MemberState::kSecondary);
  EXPECT_EQ(m.topo.term(), 5);
  ASSERT_EQ(m.taken(ActionKind::kStepDown).size(), 1u);
  EXPECT_NE(m.taken(ActionKind::kStepDown)[0].reason.find("new term"), std::string::npos);
}

TEST(ReplTopology, CommitPointIsTheMajorityDurableOptimeOfTheCurrentTerm) {
  Member m(0, config_of(5));
  m.win_election();
  m.topo.on_new_primary_noop_written(m.now, ot(1, 2));
  m.topo.on_my_optimes(m.now, ot(1, 5), ot(1, 5));
  m.topo.on_position_update(m.now, 1, ot(1, 4), ot(1, 4));
  EXPECT_LT(m.topo.last_committed(), ot(1, 2));  // two of five is not a majority
  m.topo.on_position_update(m.now, 2, ot(1, 3), ot(1, 3));
  EXPECT_EQ(m.topo.last_committed(), ot(1, 3));  // third highest of {5, 4, 3, -, -}
  m.topo.on_position_update(m.now, 3, ot(1, 5), ot(1, 5));
  EXPECT_EQ(m.topo.last_committed(), ot(1, 4));
  m.collect();
  ASSERT_FALSE(m.taken(ActionKind::kCommitPointAdvanced).empty());
  EXPECT_EQ(m.taken(ActionKind::kCommitPointAdvanced).back().optime, ot(1, 4));
}

TEST(ReplTopology, PrimaryDoesNotCommitOlderTermEntriesByCounting) {
  Member m(0, config_of(3), ot(0, 1));
  m.win_election();
  // Before the new-term no-op only old-term optimes are replicated: nothing commits.
  m.topo.on_position_update(m.now, 1, ot(0, 1), ot(0, 1));
  EXPECT_TRUE(m.topo.last_committed().is_null());
  m.topo.on_new_primary_noop_written(m.now, ot(1, 2));
  m.topo.on_position_update(m.now, 1, ot(1, 2), ot(1, 2));
  EXPECT_EQ(m.topo.last_committed(), ot(1, 2));
}

// A voter of a newer term may keep fetching from the old primary and report entries the new
// primary lacks; counting them would commit (and acknowledge) writes that are then rolled back.
// The report's term makes the old primary step down instead (docs/mongodb-behaviour.md, Elections).
TEST(ReplTopology, PositionReportFromANewerTermIsNotCountedAndStepsThePrimaryDown) {
  Member m(0, config_of(5));
  m.win_election();
  ASSERT_EQ(m.topo.term(), 1);
  m.topo.on_new_primary_noop_written(m.now, ot(1, 2));
  m.topo.on_my_optimes(m.now, ot(1, 5), ot(1, 5));
  m.topo.on_position_update(m.now, 1, 1, ot(1, 5), ot(1, 5));
  EXPECT_LT(m.topo.last_committed(), ot(1, 2));  // two of five
  m.topo.on_position_update(m.now, 2, 2, ot(1, 5), ot(1, 5));
  EXPECT_LT(m.topo.last_committed(), ot(1, 2));  // the third report is from term 2
  EXPECT_EQ(m.topo.state(), MemberState::kSecondary);
  EXPECT_FALSE(m.topo.is_writable_primary());
  EXPECT_EQ(m.topo.term(), 2);
  m.collect();
  EXPECT_TRUE(m.taken(ActionKind::kCommitPointAdvanced).empty());
  EXPECT_EQ(m.taken(ActionKind::kStepDown).size(), 1u);
}

TEST(ReplTopology, PositionReportFromTheSameOrAnOlderTermCounts) {
  Member m(0, config_of(3));
  m.win_election();
  m.topo.on_new_primary_noop_written(m.now, ot(1, 2));
  m.topo.on_position_update(m.now, 1, 0, ot(1, 2), ot(1, 2));  // sender has not adopted term 1
  EXPECT_EQ(m.topo.last_committed(), ot(1, 2));
  m.topo.on_my_optimes(m.now, ot(1, 3), ot(1, 3));
  m.topo.on_position_update(m.now, 2, 1, ot(1, 3), ot(1, 3));
  EXPECT_EQ(m.topo.last_committed(), ot(1, 3));
  EXPECT_TRUE(m.topo.is_writable_primary());
}

// Two sets of one name: a heartbeat answered by a member of another set (another replicaSetId,
// e.g. on a port our dead member left free) counts for nothing, neither its optimes toward w:N
// and the commit point nor its state; an id missing on either side proves nothing.
TEST(ReplTopology, HeartbeatFromAnotherSetOfTheSameNameIsIgnored) {
  ReplSetConfig config = config_of(3);
  const bson::ObjectId ours = bson::ObjectId::generate();
  const bson::ObjectId theirs = bson::ObjectId::generate();
  ASSERT_FALSE(ours == theirs);
  config.settings.replica_set_id = ours;
  Member m(0, config);
  m.win_election();
  m.topo.on_new_primary_noop_written(m.now, ot(1, 2));
  m.topo.on_my_optimes(m.now, ot(1, 5), ot(1, 5));
  const OpTime before = m.topo.member(2).applied;
  m.hear(2, MemberState::kPrimary, m.topo.term(), ot(1, 9), theirs);
  EXPECT_EQ(m.topo.member(2).applied, before);
  EXPECT_TRUE(m.topo.is_writable_primary());  // another set's primary is not a rival
  EXPECT_TRUE(m.topo.is_other_set(theirs));
  EXPECT_FALSE(m.topo.is_other_set(ours));
  EXPECT_FALSE(m.topo.is_other_set(std::nullopt));
  m.hear(2, MemberState::kSecondary, m.topo.term(), ot(1, 4), ours);
  EXPECT_EQ(m.topo.member(2).applied, ot(1, 4));
  m.hear(2, MemberState::kSecondary, m.topo.term(), ot(1, 5));  // no id: an older peer
  EXPECT_EQ(m.topo.member(2).applied, ot(1, 5));
  Member without_id(0);
  EXPECT_FALSE(without_id.topo.is_other_set(theirs));
}

TEST(ReplTopology, SecondaryLearnsCommitPointOnlyWithinItsOwnBranch) {
  Member m(1, config_of(3), ot(1, 9));
  m.topo.on_sync_source_progress(m.now, 2, ot(2, 3));  // our tail is term 1: may be rolled back
  EXPECT_TRUE(m.topo.last_committed().is_null());
  m.topo.on_my_optimes(m.now, ot(2, 5), ot(2, 5));
  m.topo.on_sync_source_progress(m.now, 2, ot(2, 3));
  EXPECT_EQ(m.topo.last_committed(), ot(2, 3));
  m.topo.on_sync_source_progress(m.now, 2, ot(2, 1));
  EXPECT_EQ(m.topo.last_committed(), ot(2, 3));  // never backwards
}

TEST(ReplTopology, StepDownRefusedWhenNotPrimary) {
  Member m(1);
  try {
    m.topo.step_down(m.now, StepDownRequest{});
    ADD_FAILURE() << "a secondary accepted replSetStepDown";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), code::kNotWritablePrimary);
    EXPECT_STREQ(e.what(), "not primary so can't step down");
  }
}

TEST(ReplTopology, StepDownHandsOffToACaughtUpSecondaryAndStaysOutForStepDownSecs) {
  Member m(0);
  m.win_election();
  m.topo.on_new_primary_noop_written(m.now, ot(1, 2));
  m.hear(1, MemberState::kSecondary, 1, ot(1, 2));
  m.hear(2, MemberState::kSecondary, 1, ot(1, 1));
  m.topo.step_down(m.now,
                   StepDownRequest{.step_down_secs = 60, .catch_up_secs = 10, .force = false});
  m.collect();
  EXPECT_EQ(m.topo.state(), MemberState::kSecondary);
  ASSERT_EQ(m.taken(ActionKind::kStepDownFinished).size(), 1u);
  EXPECT_EQ(m.taken(ActionKind::kStepDownFinished)[0].code, 0);
  ASSERT_EQ(m.taken(ActionKind::kSendStepUp).size(), 1u);
  EXPECT_EQ(m.taken(ActionKind::kSendStepUp)[0].target, 1);
  m.hear_all_secondaries(ot(1, 2));
  EXPECT_EQ(m.topo.unelectable_reason(m.now), "StepDownPeriodActive");
  m.now += 61'000;
  m.hear_all_secondaries(ot(1, 2));
  EXPECT_EQ(m.topo.unelectable_reason(m.now), "");
}

TEST(ReplTopology, StepDownWithoutCaughtUpSecondaryFailsWith262AndWritesResume) {
  Member m(0);
  m.win_election();
  m.topo.on_new_primary_noop_written(m.now, ot(1, 2));
  m.topo.on_my_optimes(m.now, ot(1, 9), ot(1, 9));
  m.topo.step_down(m.now,
                   StepDownRequest{.step_down_secs = 60, .catch_up_secs = 5, .force = false});
  m.collect();
  EXPECT_FALSE(m.topo.is_writable_primary());
  ASSERT_EQ(m.taken(ActionKind::kStepDownAttemptStarted).size(), 1u);
  for (int i = 0; i < 3; ++i) {
    m.hear_all_secondaries(ot(1, 2));
    m.advance(2'000);
  }
  auto finished = m.taken(ActionKind::kStepDownFinished);
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].code, code::kExceededTimeLimit);
  EXPECT_NE(finished[0].reason.find("No electable secondaries caught up as of"), std::string::npos);
  EXPECT_EQ(m.topo.state(), MemberState::kPrimary);
  EXPECT_TRUE(m.topo.is_writable_primary());
}

TEST(ReplTopology, ForcedStepDownStepsDownAfterTheCatchUpPeriod) {
  Member m(0);
  m.win_election();
  m.topo.on_new_primary_noop_written(m.now, ot(1, 2));
  m.topo.on_my_optimes(m.now, ot(1, 9), ot(1, 9));
  m.topo.step_down(m.now, StepDownRequest{.step_down_secs = 60, .catch_up_secs = 0, .force = true});
  m.collect();
  EXPECT_EQ(m.topo.state(), MemberState::kSecondary);
  EXPECT_TRUE(m.taken(ActionKind::kSendStepUp).empty());  // no handoff when forced
}

TEST(ReplTopology, FreezeRulesFollowMongod) {
  Member primary(0);
  primary.win_election();
  try {
    primary.topo.freeze(primary.now, 10);
    ADD_FAILURE() << "a primary accepted replSetFreeze";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), code::kNotSecondary);
    EXPECT_NE(std::string(e.what()).find("state: Primary"), std::string::npos);
  }
  Member m(1);
  m.hear_all_secondaries();
  EXPECT_TRUE(m.topo.freeze(m.now, 30).empty());
  EXPECT_EQ(m.topo.unelectable_reason(m.now), "StepDownPeriodActive");
  bson::Document reply = m.topo.freeze(m.now, 0);
  EXPECT_EQ(reply.get("info")->as_string(), "unfreezing");
  EXPECT_EQ(m.topo.unelectable_reason(m.now), "");
}

TEST(ReplTopology, StepUpRefusedWhenUnelectableAndSkipsDryRunWhenAsked) {
  Member m(1);
  try {
    m.topo.step_up(m.now, true);
    ADD_FAILURE() << "stepped up without seeing a majority";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), code::kCommandFailed);
  }
  m.hear_all_secondaries();
  m.topo.step_up(m.now, true);
  m.collect();
  auto requests = m.taken(ActionKind::kSendVoteRequest);
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_FALSE(requests[0].vote_request.dry_run);
  EXPECT_EQ(requests[0].vote_request.term, 1);
}

// A candidate every voter refused has lost at once, as in mongod: it must not stay a candidate
// until its deadline, refusing replSetStepUp ("already running for election") and ignoring its
// election timer meanwhile. A member whose clock is stepped back keeps a deadline that far
// away, which is how the lingering showed (a step-up refused seconds after the refusals).
TEST(ReplTopology, CandidateRefusedByEveryVoterEndsItsElectionAtOnce) {
  Member m(1);
  auto requests = m.step_up_skipping_dry_run();
  ASSERT_EQ(requests.size(), 2u);
  m.topo.on_vote_response(m.now, requests[0].target, requests[0].vote_request,
                          VoteResponse{m.topo.term(), false, "already voted"});
  EXPECT_TRUE(m.topo.is_candidate()) << "one voter has not answered yet";
  m.topo.on_vote_response(m.now, requests[1].target, requests[1].vote_request,
                          VoteResponse{m.topo.term(), false, "already voted"});
  m.collect();
  EXPECT_FALSE(m.topo.is_candidate());
  auto finished = m.taken(ActionKind::kStepUpFinished);
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].code, code::kCommandFailed);
  EXPECT_NE(finished[0].reason.find("insufficient votes"), std::string::npos) << finished[0].reason;
  m.topo.step_up(m.now, true);  // no longer "already running for election"
  EXPECT_TRUE(m.topo.is_candidate());
}

// The election's steps are logged (kElectionProgress): each vote with its voter and reason, also
// a refusal from a newer term that ends the election before the vote is counted, and the loss.
TEST(ReplTopology, ElectionProgressNamesEveryVoteAndTheLoss) {
  Member m(1);
  auto requests = m.step_up_skipping_dry_run();
  ASSERT_EQ(requests.size(), 2u);
  const int64_t term = m.topo.term();
  m.topo.on_vote_response(m.now, requests[0].target, requests[0].vote_request,
                          VoteResponse{term + 3, false, "candidate's term is lower"});
  m.collect();
  std::string log;
  for (const Action& a : m.taken(ActionKind::kElectionProgress)) log += a.reason + "\n";
  EXPECT_NE(log.find("running for election in term " + std::to_string(term)), std::string::npos)
      << log;
  EXPECT_NE(log.find("vote for term " + std::to_string(term) + " from " +
                     m.topo.config().members[static_cast<size_t>(requests[0].target)].host +
                     ": refused: candidate's term is lower (the voter is in term " +
                     std::to_string(term + 3) + ")"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("lost (stepUpRequestSkipDryRun): saw a higher term"), std::string::npos)
      << log;
  EXPECT_FALSE(m.topo.is_candidate());
}

// A member that cannot stand says so when its timer runs out, once per reason, not at every
// timeout (an isolated or priority-0 member meets its timer every electionTimeout).
TEST(ReplTopology, NotStandingIsLoggedOncePerReason) {
  Member m(1);
  m.advance(60'000);  // nobody heard: CannotSeeMajority at every timeout
  auto notes = m.taken(ActionKind::kElectionProgress);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].reason,
            "not standing for election after the election timeout: CannotSeeMajority");
  m.hear(0, MemberState::kPrimary, 0, ot(0, 1));  // a primary again: the next loss is news
  m.advance(30'000);
  EXPECT_EQ(m.taken(ActionKind::kElectionProgress).size(), 2u);
}

TEST(ReplTopology, HigherPriorityCaughtUpSecondaryTakesOver) {
  Member m(0, config_of(3, {2, 1, 1}));
  int64_t start = m.now;
  while (m.taken(ActionKind::kSendVoteRequest).empty() && m.now - start < 30'000) {
    m.hear(1, MemberState::kPrimary, 0, ot(0, 1));
    m.hear(2, MemberState::kSecondary, 0, ot(0, 1));
    m.advance(500);
  }
  ASSERT_FALSE(m.taken(ActionKind::kSendVoteRequest).empty());
  EXPECT_GE(m.now - start, 10'000);  // rank 0: one election timeout
  EXPECT_LE(m.now - start, 12'000);
  // Win it and check the reason recorded for replSetGetStatus.
  for (const Action& a : m.taken(ActionKind::kSendVoteRequest)) {
    m.topo.on_vote_response(m.now, a.target, a.vote_request, VoteResponse{m.topo.term(), true, ""});
  }
  m.collect();
  for (const Action& a : m.taken(ActionKind::kSendVoteRequest)) {
    if (!a.vote_request.dry_run) {
      m.topo.on_vote_response(m.now, a.target, a.vote_request,
                              VoteResponse{m.topo.term(), true, ""});
    }
  }
  EXPECT_EQ(m.topo.state(), MemberState::kPrimary);
  EXPECT_EQ(m.topo.last_election_reason(), "priorityTakeover");
}

TEST(ReplTopology, SingleMemberSetElectsItselfPromptly) {
  Member m(0, config_of(1));
  m.advance(100);
  EXPECT_EQ(m.topo.state(), MemberState::kPrimary);
  EXPECT_EQ(m.topo.last_election_reason(), "singleNodePromptElection");
  EXPECT_EQ(m.topo.term(), 1);
}

TEST(ReplTopology, SyncSourcePrefersThePrimaryElseTheFreshestMember) {
  Member m(2, config_of(3), ot(1, 1));
  m.hear(0, MemberState::kSecondary, 1, ot(1, 5));
  m.hear(1, MemberState::kSecondary, 1, ot(1, 3));
  m.advance(10);
  EXPECT_EQ(m.topo.sync_source(), 0);
  m.hear(1, MemberState::kPrimary, 1, ot(1, 6));
  m.advance(10);
  EXPECT_EQ(m.topo.sync_source(), 1);
}

// Fetching makes us newer than the source's last heartbeat said it was; that is no reason to
// drop it (mongod keeps a sync source until it is unusable), or replication would pause until
// the next heartbeat.
TEST(ReplTopology, SyncSourceIsKeptAfterCatchingUpWithItAndDroppedWhenDown) {
  Member m(2, config_of(3), ot(1, 1));
  m.hear(0, MemberState::kPrimary, 1, ot(1, 5));
  m.hear(1, MemberState::kSecondary, 1, ot(1, 5));
  m.advance(10);
  ASSERT_EQ(m.topo.sync_source(), 0);
  m.topo.on_my_optimes(m.now, ot(1, 7), ot(1, 7));  // fetched beyond the heartbeat's (1, 5)
  m.advance(500);
  EXPECT_EQ(m.topo.sync_source(), 0);
  m.hear(1, MemberState::kSecondary, 1, ot(1, 7));
  m.advance(10'000);  // nothing from member 0 for electionTimeoutMillis: it is down
  EXPECT_NE(m.topo.sync_source(), 0);
}

TEST(ReplTopology, RollbackIsEnteredFromSecondaryAndLeftWithTheTruncatedLog) {
  Member m(2, config_of(3), ot(1, 9));
  m.topo.on_oplog_diverged(m.now, 0);
  m.collect();
  EXPECT_EQ(m.topo.state(), MemberState::kRollback);
  ASSERT_EQ(m.taken(ActionKind::kStartRollback).size(), 1u);
  EXPECT_EQ(m.taken(ActionKind::kStartRollback)[0].target, 0);
  m.topo.on_rollback_complete(m.now, ot(1, 4), ot(1, 4));
  EXPECT_EQ(m.topo.state(), MemberState::kSecondary);
  EXPECT_EQ(m.topo.applied(), ot(1, 4));
}

}  // namespace
}  // namespace mongosim::repl
