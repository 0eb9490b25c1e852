// The glue's election timers (replication.h): the seed it gives each member's Topology
// (election_timer_seed), so that two members that learn the config and hear the primary at the
// same instants do not stand together, which splits the vote; and how long its tick thread
// sleeps (tick_sleep_ms), so that a timer fires at its deadline, not at the next regular tick.
//
// What the model omits: the network and real clocks. Both topologies run in this one process,
// so they share a pid and a clock, which is exactly the situation of members in their own PID
// namespaces (every one is the same pid) started together: the old seed, pid ^ now_ms, was the
// same on every member there, and this test fails with it.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "repl/topology.h"
#include "server/replication.h"

namespace mongosim::server {
namespace {

using repl::ActionKind;
using repl::MemberState;
using repl::Topology;

constexpr int64_t kT0 = 1'700'000'000'000;
constexpr int64_t kHeartbeatIntervalMs = 250;
constexpr int64_t kPrimaryHeardUntilMs = 2'000;
constexpr int64_t kLookMs = 10'000;

repl::ReplSetConfig three_members() {
  repl::ReplSetConfig c;
  c.set_name = "rs0";
  c.settings.election_timeout_ms = 1'000;
  for (int i = 0; i < 3; ++i) {
    repl::MemberConfig m;
    m.id = i;
    m.host = "10.77.0." + std::to_string(i + 1) + ":27017";
    c.members.push_back(m);
  }
  return c;
}

repl::HeartbeatResponse heartbeat_from(int from, MemberState state) {
  const OpTime applied{bson::Timestamp{1, 1}, 1};
  return repl::HeartbeatResponse{.set_name = "rs0",
                                 .term = 1,
                                 .state = state,
                                 .applied = applied,
                                 .durable = applied,
                                 .last_committed = {},
                                 .config_version = 1,
                                 .primary_index = state == MemberState::kPrimary ? from : -1,
                                 .sync_source_index = -1,
                                 .priority = 1,
                                 .replica_set_id = {}};
}

// Members 1 and 2 with the glue's seeds hear member 0 as primary until kPrimaryHeardUntilMs and
// each other throughout, with the same events at the same instants; returns the millisecond
// offset at which each starts its first election (sends its first vote request), -1 if none.
std::vector<int64_t> first_election_offsets_ms() {
  const repl::ReplSetConfig config = three_members();
  const OpTime applied{bson::Timestamp{1, 1}, 1};
  std::vector<Topology> members;
  for (int self = 1; self <= 2; ++self) {
    members.emplace_back(
        config, Topology::Options{
                    .self_index = self,
                    .seed = election_timer_seed(config.members[static_cast<size_t>(self)].host),
                    .persisted = {.term = 1, .last_vote_term = -1, .last_vote_candidate = -1},
                    .applied = applied,
                    .durable = applied,
                    .now_ms = kT0});
  }
  std::vector<int64_t> started(2, -1);
  for (int64_t t = 0; t <= kLookMs; ++t) {
    for (size_t i = 0; i < members.size(); ++i) {
      Topology& me = members[i];
      if (t % kHeartbeatIntervalMs == 0) {
        if (t <= kPrimaryHeardUntilMs) {
          me.on_heartbeat_response(kT0 + t, 0, heartbeat_from(0, MemberState::kPrimary));
        }
        me.on_heartbeat_response(kT0 + t, i == 0 ? 2 : 1,
                                 heartbeat_from(i == 0 ? 2 : 1, MemberState::kSecondary));
      }
      me.tick(kT0 + t);
      for (const repl::Action& a : me.take_actions()) {
        if (a.kind == ActionKind::kSendVoteRequest && started[i] < 0) started[i] = t;
      }
    }
  }
  return started;
}

TEST(ElectionTimerSeed, MembersHearingTheSameEventsDoNotStandAtTheSameInstant) {
  // Each trial has fresh seeds; the jitter is 0-150 ms, so two honest seeds give the same first
  // deadline in about one trial in 150 and in all three about once in 3.4 million runs.
  int trials_apart = 0;
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<int64_t> started = first_election_offsets_ms();
    ASSERT_GE(started[0], kPrimaryHeardUntilMs) << "member 1 never stood for election";
    ASSERT_GE(started[1], kPrimaryHeardUntilMs) << "member 2 never stood for election";
    if (started[0] != started[1]) ++trials_apart;
  }
  EXPECT_GT(trials_apart, 0) << "both members stood for election at the same millisecond in "
                                "every trial: their election timers draw the same jitter";
}

TEST(ElectionTimerSeed, DiffersBetweenCallsAndHosts) {
  const uint64_t a = election_timer_seed("10.77.0.2:27017");
  const uint64_t b = election_timer_seed("10.77.0.2:27017");
  const uint64_t c = election_timer_seed("10.77.0.3:27017");
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(b, c);
}

// The sleep is the tick interval unless a timer runs out sooner; never 0 or negative (a deadline
// already passed is met by the next tick, not by spinning). What the model omits: the thread
// itself (tick_loop only calls this between ticks).
TEST(TickSleep, IsTheIntervalOrTheTimeToTheNextTimer) {
  constexpr int64_t kNow = 1'000'000;
  constexpr int64_t kTickMs = 50;
  EXPECT_EQ(tick_sleep_ms(kNow, std::numeric_limits<int64_t>::max(), kTickMs), kTickMs);
  EXPECT_EQ(tick_sleep_ms(kNow, kNow + 1'000, kTickMs), kTickMs);
  EXPECT_EQ(tick_sleep_ms(kNow, kNow + kTickMs, kTickMs), kTickMs);
  EXPECT_EQ(tick_sleep_ms(kNow, kNow + 17, kTickMs), 17);
  EXPECT_EQ(tick_sleep_ms(kNow, kNow + 1, kTickMs), 1);
  EXPECT_EQ(tick_sleep_ms(kNow, kNow, kTickMs), 1);
  EXPECT_EQ(tick_sleep_ms(kNow, kNow - 5'000, kTickMs), 1);
  EXPECT_EQ(tick_sleep_ms(kNow, std::numeric_limits<int64_t>::min(), kTickMs), 1);
  EXPECT_EQ(tick_sleep_ms(-kNow, std::numeric_limits<int64_t>::max(), kTickMs), kTickMs);
}

}  // namespace
}  // namespace mongosim::server
