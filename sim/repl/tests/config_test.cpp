#include "repl/config.h"

#include <gtest/gtest.h>

#include <string>

#include "base/command_error.h"
#include "base/error_codes.h"
#include "bson/codec.h"

namespace mongosim::repl {
namespace {

ReplSetConfig parse_json(const std::string& json) {
  return parse_repl_set_config(bson::from_json(json));
}

// Expects InvalidReplicaSetConfig with a message containing `fragment`.
void expect_invalid(const std::string& json, const std::string& fragment) {
  try {
    parse_json(json);
    ADD_FAILURE() << "accepted: " << json;
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), code::kInvalidReplicaSetConfig) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message '" << e.what() << "' lacks '" << fragment << "'";
  }
}

std::string three_members(const std::string& extra_for_member2 = "") {
  return R"({"_id": "rs0", "version": 1, "members": [
      {"_id": 0, "host": "a:1"}, {"_id": 1, "host": "b:1"}, {"_id": 2, "host": "c:1")" +
         extra_for_member2 + "}]}";
}

TEST(ReplConfig, ParsesMongodDefaults) {
  ReplSetConfig c = parse_json(three_members());
  EXPECT_EQ(c.set_name, "rs0");
  ASSERT_EQ(c.member_count(), 3);
  EXPECT_EQ(c.members[1].host, "b:1");
  EXPECT_EQ(c.members[1].priority, 1);
  EXPECT_EQ(c.members[1].votes, 1);
  EXPECT_EQ(c.settings.election_timeout_ms, 10000);
  EXPECT_EQ(c.settings.heartbeat_interval_ms, 2000);
  EXPECT_EQ(c.settings.heartbeat_timeout_secs, 10);
  EXPECT_EQ(c.settings.catch_up_timeout_ms, -1);
  EXPECT_EQ(c.settings.catch_up_takeover_delay_ms, 30000);
  EXPECT_TRUE(c.settings.chaining_allowed);
  EXPECT_EQ(c.majority_vote_count(), 2);
  EXPECT_EQ(c.write_majority_count(), 2);
}

TEST(ReplConfig, ParsesSettingsAndMemberOptions) {
  ReplSetConfig c = parse_json(R"({"_id": "rs1", "version": 3, "protocolVersion": 1,
      "members": [{"_id": 5, "host": "a:1", "priority": 2.5},
                  {"_id": 6, "host": "b:1", "priority": 0, "votes": 0, "hidden": true},
                  {"_id": 7, "host": "c:1", "arbiterOnly": true}],
      "settings": {"electionTimeoutMillis": 500, "heartbeatIntervalMillis": 100,
                   "catchUpTimeoutMillis": 0, "chainingAllowed": false}})");
  EXPECT_EQ(c.version, 3);
  EXPECT_EQ(c.members[0].priority, 2.5);
  EXPECT_FALSE(c.members[1].is_voter());
  EXPECT_TRUE(c.members[2].arbiter_only);
  EXPECT_EQ(c.members[2].priority, 0);  // arbiters default to priority 0
  EXPECT_EQ(c.settings.election_timeout_ms, 500);
  EXPECT_EQ(c.settings.catch_up_timeout_ms, 0);
  EXPECT_FALSE(c.settings.chaining_allowed);
  EXPECT_EQ(c.index_of_id(6), 1);
  EXPECT_EQ(c.index_of_host("c:1"), 2);
  EXPECT_EQ(c.index_of_host("z:1"), -1);
  // Two voters: majority 2; only one of them holds data.
  EXPECT_EQ(c.voting_members_count(), 2);
  EXPECT_EQ(c.majority_vote_count(), 2);
  EXPECT_EQ(c.write_majority_count(), 1);
}

TEST(ReplConfig, MajoritiesForOddAndEvenSets) {
  std::string members;
  for (int i = 0; i < 7; ++i) {
    if (i) members += ",";
    members +=
        R"({"_id": )" + std::to_string(i) + R"(, "host": "h)" + std::to_string(i) + R"(:1"})";
  }
  ReplSetConfig seven = parse_json(R"({"_id": "rs0", "members": [)" + members + "]}");
  EXPECT_EQ(seven.majority_vote_count(), 4);
  ReplSetConfig four = parse_json(R"({"_id": "rs0", "members": [{"_id": 0, "host": "a:1"},
      {"_id": 1, "host": "b:1"}, {"_id": 2, "host": "c:1"}, {"_id": 3, "host": "d:1"}]})");
  EXPECT_EQ(four.majority_vote_count(), 3);
}

TEST(ReplConfig, RoundTripsThroughItsDocument) {
  ReplSetConfig c = parse_json(three_members(R"(, "priority": 0, "votes": 0)"));
  bson::Document doc = c.to_document();
  EXPECT_EQ(doc.get("protocolVersion")->as_int64(), 1);
  ReplSetConfig again = parse_repl_set_config(doc);
  EXPECT_EQ(again.set_name, c.set_name);
  ASSERT_EQ(again.member_count(), 3);
  EXPECT_EQ(again.members[2].votes, 0);
  EXPECT_EQ(again.members[2].priority, 0);
  EXPECT_EQ(again.settings.election_timeout_ms, c.settings.election_timeout_ms);
}

TEST(ReplConfig, RefusesWhatMongodRefuses) {
  expect_invalid(R"({"version": 1, "members": [{"_id": 0, "host": "a:1"}]})", "\"_id\"");
  expect_invalid(R"({"_id": "rs0", "version": 1})", "members");
  expect_invalid(R"({"_id": "rs0", "members": []})", "at least 1");
  expect_invalid(
      R"({"_id": "rs0", "members": [{"_id": 0, "host": "a:1"}, {"_id": 0, "host": "b:1"}]})",
      "same _id field, members.0._id == members.1._id == 0");
  expect_invalid(
      R"({"_id": "rs0", "members": [{"_id": 0, "host": "a:1"}, {"_id": 1, "host": "a:1"}]})",
      "same host field");
  expect_invalid(three_members(R"(, "votes": 2)"), "must be 0 or 1");
  expect_invalid(three_members(R"(, "votes": 0)"), "priority must be 0 when non-voting");
  expect_invalid(three_members(R"(, "hidden": true)"), "priority must be 0 when hidden");
  expect_invalid(three_members(R"(, "priority": -1)"), "members.2.priority");
  expect_invalid(three_members(R"(, "arbiterOnly": true, "votes": 0)"), "Arbiter must vote");
  expect_invalid(three_members(R"(, "colour": "red")"), "MemberConfig.colour");
  expect_invalid(three_members(R"(, "host": 5)"), "members.2.host field must be a string");
  expect_invalid(R"({"_id": "rs0", "members": [{"host": "a:1"}]})",
                 "members.0._id field is missing");
  expect_invalid(R"({"_id": "rs0", "protocolVersion": 0, "members": [{"_id": 0, "host": "a:1"}]})",
                 "protocolVersion");
  expect_invalid(R"({"_id": "rs0", "members": [{"_id": 0, "host": "a:1", "priority": 0}]})",
                 "priority > 0");
  expect_invalid(R"({"_id": "rs0", "members": [{"_id": 0, "host": "a:1"}],
                    "settings": {"electionTimeoutMillis": 0}})",
                 "election timeout");
  expect_invalid(R"({"_id": "rs0", "members": [{"_id": 0, "host": "a:1"}],
                    "settings": {"catchUpTimeoutMillis": -2}})",
                 "catch-up timeout");
  expect_invalid(R"({"_id": "rs0", "members": [{"_id": 0, "host": "a:1"}], "bogus": 1})",
                 "ReplSetConfig.bogus");
}

TEST(ReplConfig, RefusesMoreThanSevenVotersOrFiftyMembers) {
  std::string members;
  for (int i = 0; i < 8; ++i) {
    if (i) members += ",";
    members +=
        R"({"_id": )" + std::to_string(i) + R"(, "host": "h)" + std::to_string(i) + R"(:1"})";
  }
  expect_invalid(R"({"_id": "rs0", "members": [)" + members + "]}", "8 voting members");
  members.clear();
  for (int i = 0; i < 51; ++i) {
    if (i) members += ",";
    members += R"({"_id": )" + std::to_string(i) + R"(, "host": "h)" + std::to_string(i) +
               R"(:1", "votes": 0, "priority": 0})";
  }
  members += R"(, {"_id": 100, "host": "voter:1"})";
  expect_invalid(R"({"_id": "rs0", "members": [)" + members + "]}", "52 members");
}

}  // namespace
// The config stores its version and periods as ints: past 32 bits is refused at initiate, not
// written back cut (electionTimeoutMillis 2^31 came back negative and the member, restarted on its
// dbpath, refused its own config).
TEST(ReplConfig, NumbersPast32BitsAreRefusedNotCut) {
  for (const char* config : {
           R"({"_id": "rs", "version": {"$numberLong": "4294967298"},
               "members": [{"_id": 0, "host": "h:1"}]})",
           R"({"_id": "rs", "members": [{"_id": 0, "host": "h:1"}],
               "settings": {"electionTimeoutMillis": {"$numberLong": "2147483648"}}})"}) {
    EXPECT_THROW(parse_repl_set_config(bson::from_json(config)), CommandError) << config;
  }
  const ReplSetConfig c = parse_repl_set_config(bson::from_json(
      R"({"_id": "rs", "term": {"$numberLong": "4294967298"}, "members": [{"_id": 0, "host": "h:1"}]})"));
  EXPECT_EQ(parse_repl_set_config(c.to_document()).term, 4294967298);
}

}  // namespace mongosim::repl
