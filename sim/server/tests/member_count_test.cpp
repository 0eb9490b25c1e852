// Replica sets of 2, 5 and 7 real mongosim processes (docs/mongodb-behaviour.md, Replica sets): who
// can be primary, what w:"majority" needs, and that larger sets elect, replicate, step down and
// converge.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>

#include "base/error_codes.h"
#include "bson/codec.h"
#include "server/tests/sim_set.h"

namespace mongosim::testing {
namespace {

using bson::Document;
using bson::V;

std::optional<Document> insert(const SimSet& set, int member, int32_t id,
                               const Document& write_concern) {
  return set.command(member,
                     Document{{"insert", V("c")},
                              {"documents", V(bson::Array{V(Document{{"_id", V(id)}})})},
                              {"writeConcern", V(write_concern)}},
                     "test");
}

// A command sent to the member that is primary when it is sent, and that member's reply.
struct PrimaryReply {
  int member = -1;
  std::optional<Document> reply;
};

// Whether a reply is mongod's answer to an election that overtook the command: refused before
// anything was done (NotWritablePrimary), or applied but then interrupted while it waited for
// its write concern (writeConcernError PrimarySteppedDown or InterruptedDueToReplStateChange).
bool overtaken_by_election(const Document& reply) {
  const auto is_election_code = [](const bson::Value* code) {
    if (code == nullptr) return false;
    const double c = code->number_as_double();
    return c == code::kNotWritablePrimary || c == code::kPrimarySteppedDown ||
           c == code::kInterruptedDueToReplStateChange;
  };
  const bson::Value* wce = reply.get("writeConcernError");
  return is_election_code(reply.get("code")) ||
         (wce != nullptr && is_election_code(wce->as_document().get("code")));
}

// On a slow or loaded build (seven sanitized processes on shared cores: heartbeats late, elections
// one after another) an election can come between finding the primary and sending it a command,
// or during the command; the command then goes again to the member primary now (bounded by the
// converge deadline), so commands sent through here must be idempotent. Any other answer is
// returned as it is. What this leaves out: whether an interrupted write survived (the retry
// writes it again either way).
PrimaryReply on_primary(const SimSet& set,
                        const std::function<std::optional<Document>(int)>& command) {
  PrimaryReply out;
  poll_until(after(kConvergeTimeout), [&] {
    out.member = set.primary();
    if (out.member < 0) return false;
    out.reply = command(out.member);
    return out.reply && !overtaken_by_election(*out.reply);
  });
  return out;
}

// An idempotent write of document `id` (an upsert that sets `attempt`, so every retry writes and
// waits for its write concern again).
std::optional<Document> upsert(const SimSet& set, int member, int32_t id, int32_t attempt,
                               const Document& write_concern) {
  return set.command(
      member,
      Document{{"update", V("c")},
               {"updates", V(bson::Array{V(Document{
                               {"q", V(Document{{"_id", V(id)}})},
                               {"u", V(Document{{"$set", V(Document{{"attempt", V(attempt)}})}})},
                               {"upsert", V(true)}})})},
               {"writeConcern", V(write_concern)}},
      "test");
}

// Acknowledged by every member: w equal to the member count, sent to the primary of the moment.
void expect_write_reaches_all(const SimSet& set, int32_t id) {
  Document everyone{{"w", V(int32_t{set.size()})}, {"wtimeout", V(int32_t{20000})}};
  int32_t attempt = 0;
  auto written =
      on_primary(set, [&](int member) { return upsert(set, member, id, ++attempt, everyone); });
  ASSERT_TRUE(written.reply) << set.logs();
  EXPECT_TRUE(is_ok(*written.reply)) << bson::to_json(*written.reply);
  EXPECT_FALSE(written.reply->has("writeConcernError"))
      << bson::to_json(*written.reply) << set.logs();
}

int32_t status_int(const SimSet& set, int member, const char* field) {
  auto status = set.command(member, Document{{"replSetGetStatus", V(int32_t{1})}});
  return status && is_ok(*status) ? static_cast<int32_t>(status->get(field)->number_as_double())
                                  : -1;
}

// True once `observer` reports member `subject` as unreachable (health 0).
bool sees_down(const SimSet& set, int observer, int subject) {
  auto status = set.command(observer, Document{{"replSetGetStatus", V(int32_t{1})}});
  if (!status || !is_ok(*status)) return false;
  const auto& m = status->get("members")->as_array()[static_cast<size_t>(subject)].as_document();
  return m.get("health")->number_as_double() == 0;
}

TEST(TwoMemberSet, MajorityNeedsBothMembers) {
  SimSet set({.members = 2});
  int primary = set.primary();
  ASSERT_GE(primary, 0);
  EXPECT_EQ(status_int(set, primary, "majorityVoteCount"), 2);
  EXPECT_EQ(status_int(set, primary, "writeMajorityCount"), 2);
  auto both =
      insert(set, primary, 1, Document{{"w", V("majority")}, {"wtimeout", V(int32_t{20000})}});
  ASSERT_TRUE(both);
  EXPECT_FALSE(both->has("writeConcernError")) << bson::to_json(*both);

  // The secondary's fetcher is stopped, not its process: it answers heartbeats, so the primary
  // keeps its majority of voters however slowly the insert is served (a paused secondary would
  // have it step down after electionTimeoutMillis and a slow run's insert get 10107), but the
  // write never reaches a second member.
  stop_fetcher(set, 1 - primary);
  auto alone =
      insert(set, primary, 2, Document{{"w", V("majority")}, {"wtimeout", V(int32_t{200})}});
  ASSERT_TRUE(alone);
  EXPECT_TRUE(is_ok(*alone)) << bson::to_json(*alone);
  EXPECT_EQ(alone->get("n")->number_as_double(), 1);  // applied locally all the same
  const bson::Value* wce = alone->get("writeConcernError");
  ASSERT_NE(wce, nullptr) << "acknowledged at majority with one of two members' data: "
                          << bson::to_json(*alone) << "\n"
                          << set.logs();
  EXPECT_EQ(wce->as_document().get("code")->number_as_double(), code::kWriteConcernFailed)
      << bson::to_json(*alone);
  fail_point(set, 1 - primary, "stopReplProducer", V("off"));
}

TEST(TwoMemberSet, OneVoterDownLeavesNoPrimary) {
  SimSet set({.members = 2});
  int primary = set.primary();
  ASSERT_GE(primary, 0);
  int secondary = 1 - primary;
  // The secondary going away: the primary cannot see a majority and steps down
  // (docs/mongodb-behaviour.md, Losing the majority).
  set.pause(secondary);
  ASSERT_TRUE(poll_until(after(kConvergeTimeout), [&] {
    auto h = set.hello(primary);
    return h && !h->get("isWritablePrimary")->truthy();
  })) << set.logs();
  auto refused = insert(set, primary, 1, Document{{"w", V(int32_t{1})}});
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->get("code")->number_as_double(), code::kNotWritablePrimary);

  // The former primary itself killed: the survivor, once it has marked it down, still cannot
  // stand (CannotSeeMajority) and stays SECONDARY, refusing writes.
  set.resume(secondary);
  int again = set.wait_for_primary(after(kConvergeTimeout));
  ASSERT_GE(again, 0) << set.logs();
  int survivor = 1 - again;
  set.kill(again);
  ASSERT_TRUE(poll_until(after(kConvergeTimeout), [&] { return sees_down(set, survivor, again); }))
      << set.logs();
  EXPECT_EQ(status_int(set, survivor, "myState"), 2);
  auto h = set.hello(survivor);
  ASSERT_TRUE(h);
  EXPECT_FALSE(h->get("isWritablePrimary")->truthy());
  auto no_primary = insert(set, survivor, 2, Document{{"w", V(int32_t{1})}});
  ASSERT_TRUE(no_primary);
  EXPECT_EQ(no_primary->get("code")->number_as_double(), code::kNotWritablePrimary);
}

// Elect, replicate to every member, step the primary down, and converge on a new primary that
// again replicates to every member. Five and seven members are the most processes a test here
// starts: with the kit's 1 s election timeout and 200 ms heartbeats, a run where every process
// is 10-20 times slower (a sanitizer build, both sets at once on two cores) answered heartbeats
// later than the timeout and the members kept electing; a 4 s timeout and 500 ms heartbeats hold
// there and cost a normal run a few seconds.
void elect_replicate_step_down_converge(int members) {
  SimSet set({.members = members, .election_timeout_ms = 4000, .heartbeat_interval_ms = 500});
  int primary = set.primary();
  ASSERT_GE(primary, 0);
  EXPECT_EQ(status_int(set, primary, "majorityVoteCount"), members / 2 + 1);
  expect_write_reaches_all(set, 1);
  const Document majority_wc{{"w", V("majority")}, {"wtimeout", V(int32_t{20000})}};
  int32_t attempt = 0;
  auto majority =
      on_primary(set, [&](int member) { return upsert(set, member, 2, ++attempt, majority_wc); });
  ASSERT_TRUE(majority.reply) << set.logs();
  EXPECT_FALSE(majority.reply->has("writeConcernError")) << bson::to_json(*majority.reply);

  auto step_down = on_primary(set, [&](int member) {
    return set.command(member, Document{{"replSetStepDown", V(int32_t{30})},
                                        {"secondaryCatchUpPeriodSecs", V(int32_t{10})}});
  });
  ASSERT_TRUE(step_down.reply) << set.logs();
  EXPECT_TRUE(is_ok(*step_down.reply)) << bson::to_json(*step_down.reply);
  primary = step_down.member;
  int next = set.wait_for_primary(after(kConvergeTimeout), primary);
  ASSERT_GE(next, 0) << set.logs();
  EXPECT_NE(next, primary);
  int64_t term = set.term(next);
  ASSERT_TRUE(poll_until(after(kConvergeTimeout),
                         [&] {
                           for (int i = 0; i < set.size(); ++i) {
                             if (set.term(i) != term) return false;
                           }
                           return true;
                         }))
      << "members never agreed on term " << term;
  expect_write_reaches_all(set, 3);
}

TEST(FiveMemberSet, ElectsReplicatesStepsDownAndConverges) {
  elect_replicate_step_down_converge(5);
}

TEST(SevenMemberSet, ElectsReplicatesStepsDownAndConverges) {
  elect_replicate_step_down_converge(7);
}

}  // namespace
}  // namespace mongosim::testing
