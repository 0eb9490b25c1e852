// The test-only clock offset (server/clock_offset.h): the --clockOffsetMillis flag, the
// mongosimSetClockOffset command, what $$NOW and $currentDate then report, and a forward jump
// on a secondary of a live three-member set.
#include "server/clock_offset.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "base/error_codes.h"
#include "bson/codec.h"
#include "checker/clock.h"
#include "server/options.h"
#include "server/tests/raw_client.h"
#include "server/tests/sim_set.h"

namespace mongosim::testing {
namespace {

using bson::Document;
using bson::V;

constexpr int64_t kHourMs = 3'600'000;

server::ParsedCommandLine parse(std::vector<const char*> args) {
  args.insert(args.begin(), "mongosim");
  return server::parse_command_line(static_cast<int>(args.size()), args.data());
}

// The server's "now" as $$NOW reports it, bracketed by this machine's clock read just before
// and just after the command: [before + offset, after + offset] must hold it exactly.
struct Bracketed {
  int64_t before_ms;
  int64_t server_ms;
  int64_t after_ms;
};

Bracketed server_now(RawClient& client) {
  Bracketed out{};
  out.before_ms = locklab::wall_now_ms();
  Document reply = client.command(
      Document{
          {"aggregate", V("clock")},
          {"pipeline", V(bson::Array{V(Document{{"$set", V(Document{{"now", V("$$NOW")}})}})})},
          {"cursor", V(Document{})}},
      "test");
  out.after_ms = locklab::wall_now_ms();
  const auto& batch = reply.get("cursor")->as_document().get("firstBatch")->as_array();
  if (batch.size() != 1) throw std::runtime_error("aggregate: " + bson::to_json(reply));
  out.server_ms = batch[0].as_document().get("now")->as_date_ms();
  return out;
}

void expect_offset(const Bracketed& b, int64_t offset_ms) {
  EXPECT_LE(b.before_ms + offset_ms, b.server_ms);
  EXPECT_GE(b.after_ms + offset_ms, b.server_ms);
}

// $$NOW is the server's clock when the command executes: a command held by failCommand's
// blockConnection for blockTimeMS reports a time at least that much after it was sent (the
// block sleeps at least that long), as mongod does. A lease started from an earlier $$NOW would
// end early by the delay. Model: one standalone member; the delay stands for any late execution.
TEST(ClockOffsetCommand, NowIsTakenWhenTheCommandExecutesAfterABlockConnectionDelay) {
  constexpr int32_t kBlockMs = 600;
  MongosimNode server;
  RawClient client(server.port());
  client.command(
      Document{{"insert", V("clock")}, {"documents", V(bson::Array{V(Document{{"_id", V(1)}})})}},
      "test");
  Document configured =
      client.command(Document{{"configureFailPoint", V("failCommand")},
                              {"mode", V(Document{{"times", V(int32_t{1})}})},
                              {"data", V(Document{{"failCommands", V(bson::Array{V("aggregate")})},
                                                  {"blockConnection", V(true)},
                                                  {"blockTimeMS", V(kBlockMs)}})}},
                     "admin");
  ASSERT_TRUE(configured.get("ok")->truthy()) << bson::to_json(configured);
  Bracketed held = server_now(client);
  EXPECT_GE(held.server_ms, held.before_ms + kBlockMs)
      << "$$NOW was taken before the delay: sent at " << held.before_ms << ", $$NOW "
      << held.server_ms;
  EXPECT_LE(held.server_ms, held.after_ms);
}

TEST(ClockOffsetFlag, ParsesIntegersWithinTenYears) {
  auto ahead = parse({"--clockOffsetMillis", "5000"});
  ASSERT_TRUE(ahead.options) << ahead.error;
  EXPECT_EQ(ahead.options->clock_offset_ms, 5000);
  auto behind = parse({"--clockOffsetMillis=-315360000000"});
  ASSERT_TRUE(behind.options) << behind.error;
  EXPECT_EQ(behind.options->clock_offset_ms, -server::kMaxClockOffsetMs);
  EXPECT_EQ(parse({}).options->clock_offset_ms, 0);
}

TEST(ClockOffsetFlag, RefusesNonIntegersAndOutOfRangeNamingTheFlag) {
  for (const char* bad :
       {"1.5", "abc", "", "315360000001", "-315360000001", "99999999999999999999"}) {
    auto parsed = parse({"--clockOffsetMillis", bad});
    EXPECT_FALSE(parsed.options) << bad;
    EXPECT_NE(parsed.error.find("--clockOffsetMillis"), std::string::npos) << parsed.error;
  }
  EXPECT_NE(server::usage_text().find("--clockOffsetMillis"), std::string::npos);
}

TEST(ClockOffsetFlag, NowAndCurrentDateRunAheadOfTheMachineClock) {
  MongosimNode server({.args = {"--clockOffsetMillis", std::to_string(kHourMs)}});
  RawClient client(server.port());
  client.command(Document{{"insert", V("clock")},
                          {"documents", V(bson::Array{V(Document{{"_id", V(int32_t{1})}})})}},
                 "test");
  expect_offset(server_now(client), kHourMs);

  int64_t before = locklab::wall_now_ms();
  client.command(
      Document{
          {"update", V("clock")},
          {"updates", V(bson::Array{V(Document{
                          {"q", V(Document{{"_id", V(int32_t{1})}})},
                          {"u", V(Document{{"$currentDate", V(Document{{"at", V(true)}})}})}})})}},
      "test");
  int64_t after = locklab::wall_now_ms();
  Document found = client.command(Document{{"find", V("clock")}}, "test");
  int64_t at = found.get("cursor")
                   ->as_document()
                   .get("firstBatch")
                   ->as_array()[0]
                   .as_document()
                   .get("at")
                   ->as_date_ms();
  EXPECT_LE(before + kHourMs, at);
  EXPECT_GE(after + kHourMs, at);
}

TEST(ClockOffsetCommand, SetsReportsThePreviousOffsetAndMovesNow) {
  MongosimNode server({.args = {"--clockOffsetMillis", "1000"}});
  RawClient client(server.port());
  client.command(Document{{"insert", V("clock")},
                          {"documents", V(bson::Array{V(Document{{"_id", V(int32_t{1})}})})}},
                 "test");
  Document reply = client.command(Document{{"mongosimSetClockOffset", V(int64_t{-kHourMs})}});
  ASSERT_TRUE(reply.get("ok")->truthy()) << bson::to_json(reply);
  EXPECT_EQ(reply.get("previousOffsetMillis")->type(), bson::Type::kInt64);
  EXPECT_EQ(reply.get("previousOffsetMillis")->as_int64(), 1000);
  EXPECT_EQ(reply.get("offsetMillis")->as_int64(), -kHourMs);
  expect_offset(server_now(client), -kHourMs);
  // A shell's whole-number double is accepted; the next call reports this one as previous.
  Document again = client.command(Document{{"mongosimSetClockOffset", V(250.0)}});
  EXPECT_EQ(again.get("previousOffsetMillis")->as_int64(), -kHourMs);
  EXPECT_EQ(again.get("offsetMillis")->as_int64(), 250);
  expect_offset(server_now(client), 250);
}

TEST(ClockOffsetCommand, RefusesBadValuesWithBadValueNamingTheField) {
  MongosimNode server;
  RawClient client(server.port());
  const bson::Value bad_values[] = {V(1.5), V("10"), V(true),
                                    V(int64_t{server::kMaxClockOffsetMs + 1}),
                                    V(int64_t{-server::kMaxClockOffsetMs - 1})};
  for (const auto& bad : bad_values) {
    SCOPED_TRACE(bson::to_json(Document{{"value", bad}}));
    Document reply = client.command(Document{{"mongosimSetClockOffset", bad}});
    EXPECT_FALSE(reply.get("ok")->truthy()) << bson::to_json(reply);
    EXPECT_EQ(reply.get("code")->number_as_double(), code::kBadValue) << bson::to_json(reply);
    EXPECT_NE(reply.get("errmsg")->as_string().find("mongosimSetClockOffset"), std::string::npos);
  }
  // A refused value leaves the clock alone; an int32 is accepted.
  Document reply = client.command(Document{{"mongosimSetClockOffset", V(int32_t{-20})}});
  EXPECT_EQ(reply.get("offsetMillis")->as_int64(), -20);
  EXPECT_EQ(reply.get("previousOffsetMillis")->as_int64(), 0);
  // Like the other test-only commands it runs only against admin.
  Document wrong_db = client.command(Document{{"mongosimSetClockOffset", V(int32_t{0})}}, "test");
  EXPECT_EQ(wrong_db.get("code")->number_as_double(), code::kUnauthorized);
}

// A forward jump far beyond electionTimeoutMillis on a secondary (see server/clock_offset.h):
// the secondary's view of the others goes stale at once, so it normally cannot see a majority and
// re-arms its election timer rather than standing; the first heartbeat replies bring the others
// back. (If a reply from the other secondary lands between the jump and the next 50 ms tick, it
// may instead stand and win one unnecessary election.) Either way the set keeps exactly one
// primary and keeps replicating to every member, which is what this test holds it to.
TEST(ClockOffsetReplicaSet, ForwardJumpOnASecondaryKeepsThePrimaryAndReplication) {
  SimSet set({.members = 3});
  int primary = set.primary();
  ASSERT_GE(primary, 0);
  int secondary = (primary + 1) % set.size();
  auto reply = set.command(secondary, Document{{"mongosimSetClockOffset", V(int64_t{kHourMs})}});
  ASSERT_TRUE(reply && is_ok(*reply)) << (reply ? bson::to_json(*reply) : "");

  // The jumped secondary reports its clock an hour ahead.
  int64_t before = locklab::wall_now_ms();
  auto status = set.command(secondary, Document{{"serverStatus", V(int32_t{1})}});
  int64_t after = locklab::wall_now_ms();
  ASSERT_TRUE(status);
  int64_t local = status->get("localTime")->as_date_ms();
  EXPECT_LE(before + kHourMs, local);
  EXPECT_GE(after + kHourMs, local);

  // Every member agrees on one primary again (the jumped one learns it from fresh heartbeats)...
  int now_primary = set.wait_for_primary(locklab::testkit::after(kConvergeTimeout));
  ASSERT_GE(now_primary, 0) << set.logs();
  // ...which acknowledges a write every member must have (w: 3).
  auto write = set.command(
      now_primary,
      Document{
          {"insert", V("c")},
          {"documents", V(bson::Array{V(Document{{"_id", V(int32_t{1})}})})},
          {"writeConcern", V(Document{{"w", V(int32_t{3})}, {"wtimeout", V(int32_t{20000})}})}},
      "test");
  ASSERT_TRUE(write);
  EXPECT_TRUE(is_ok(*write)) << bson::to_json(*write);
  EXPECT_FALSE(write->has("writeConcernError")) << bson::to_json(*write) << set.logs();
  EXPECT_TRUE(set.has_document(secondary, "test", "c", V(int32_t{1})));
}

}  // namespace
}  // namespace mongosim::testing
