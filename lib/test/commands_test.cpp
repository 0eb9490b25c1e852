// The command documents: the properties the algorithm depends on, checked on the BSON itself.
#include "commands.h"

#include <gtest/gtest.h>

#include "bson_ptr.h"

namespace mongolock::detail {
namespace {

const Owner kOwner{"host", 42, "test"};

HoldRequest request(std::string_view id = "0123456789abcdef0123456789abcdef") {
  return HoldRequest{"locks", "a.b$c", id, &kOwner, 5000, 65000};
}

size_t key_count(const bson_t& doc) {
  return bson_count_keys(&doc);
}

TEST(Commands, AcquireIsOneUpsertOnIdWithAServerClockPipeline) {
  Bson cmd = acquire_command(request());
  EXPECT_EQ(find_utf8(*cmd, "findAndModify"), "locks");
  EXPECT_EQ(find_utf8(*cmd, "query._id"), "a.b$c");  // the name is used verbatim
  auto query = find_document(*cmd, "query");
  ASSERT_TRUE(query);
  EXPECT_EQ(key_count(**query), 1u) << "an upsert query must be a pure _id equality";
  const std::string json = to_json(*cmd);
  EXPECT_NE(json.find("\"upsert\" : true"), std::string::npos) << json;
  EXPECT_NE(json.find("\"new\" : true"), std::string::npos) << json;
  EXPECT_NE(json.find("$$NOW"), std::string::npos) << json;
  EXPECT_EQ(find_utf8(*cmd, "update.0.$set.holder.$cond.1"), "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(find_utf8(*cmd, "update.0.$set.holder.$cond.2"), "$holder");
  EXPECT_EQ(find_int64(*cmd, "update.0.$set.expiresAt.$cond.1.$add.1"), 5000);
}

TEST(Commands, TokenNeverComesFromTheClientAndGrowsFromTheStoredOne) {
  Bson cmd = acquire_command(request());
  EXPECT_EQ(find_utf8(*cmd, "update.0.$set.token.$cond.1.$max.0.$add.0.$ifNull.0"), "$token");
  EXPECT_EQ(find_int64(*cmd, "update.0.$set.token.$cond.1.$max.0.$add.1"), 1);
  EXPECT_EQ(find_int64(*cmd, "update.0.$set.token.$cond.1.$max.1.$multiply.1"), kTokenTimeScale);
}

TEST(Commands, ExtendMatchesOwnIdAndAnUnexpiredLeaseOnly) {
  Bson cmd = extend_command(request("id1"));
  EXPECT_EQ(find_utf8(*cmd, "updates.0.q.holder"), "id1");
  EXPECT_EQ(find_utf8(*cmd, "updates.0.q.$expr.$gt.0"), "$expiresAt");
  EXPECT_EQ(find_utf8(*cmd, "updates.0.q.$expr.$gt.1"), "$$NOW");
}

TEST(Commands, ReleaseIsOwnerCheckedAndKeepsTheDocument) {
  Bson cmd = release_command(request("id2"));
  EXPECT_EQ(find_utf8(*cmd, "update"), "locks");
  EXPECT_EQ(find_utf8(*cmd, "updates.0.q.holder"), "id2");
  EXPECT_EQ(find_utf8(*cmd, "updates.0.q._id"), "a.b$c");
  EXPECT_TRUE(find_is_null_or_missing(*cmd, "delete"));
  EXPECT_TRUE(find_document(*cmd, "updates.0.u.0.$set").has_value());
}

// A notify holder's release: the same owner check, as a findAndModify that returns only what
// names the hand-over (never an upsert: a release of nothing writes nothing).
TEST(Commands, AHandOverReleaseIsOwnerCheckedAndReturnsWhomItHandedTo) {
  HoldRequest req = request("id5");
  req.hand_over = true;
  Bson cmd = release_command(req);
  EXPECT_EQ(find_utf8(*cmd, "findAndModify"), "locks");
  EXPECT_EQ(find_utf8(*cmd, "query._id"), "a.b$c");
  EXPECT_EQ(find_utf8(*cmd, "query.holder"), "id5");
  const std::string json = to_json(*cmd);
  EXPECT_FALSE(has_path(*cmd, "upsert")) << json;
  EXPECT_NE(json.find("\"new\" : true"), std::string::npos) << json;
  for (const char* field : {"fields.holder", "fields.token", "fields.grantW", "fields.grantP"}) {
    EXPECT_EQ(find_int64(*cmd, field), 1) << field;
  }
  EXPECT_EQ(find_int64(*cmd, "fields._id"), 0);
  EXPECT_TRUE(find_document(*cmd, "update.0.$set").has_value());
}

// Reading a release's reply. Must pass: a returned document, n = 1. Must fail: value null,
// n = 0, nothing.
TEST(Commands, AReleaseReplyOfEitherFormSaysWhetherItRemovedTheHold) {
  EXPECT_TRUE(release_removed_hold(*Bson(BCON_NEW("value", "{", "holder", BCON_NULL, "}"))));
  EXPECT_TRUE(release_removed_hold(*Bson(BCON_NEW("n", BCON_INT32(1)))));
  EXPECT_FALSE(release_removed_hold(*Bson(BCON_NEW("value", BCON_NULL))));
  EXPECT_FALSE(release_removed_hold(*Bson(BCON_NEW("n", BCON_INT32(0)))));
  EXPECT_FALSE(release_removed_hold(*make_bson()));
}

// The hand-over a release's reply shows to its own Provider: only a document held by its
// grantW, for this Provider, with a token. Each must-fail case differs from the passing one in
// one field.
TEST(Commands, AReleaseReplyShowsAHandOverOnlyToItsGranteesProvider) {
  const auto reply = [](const char* holder, const char* provider, bool with_token) {
    Bson value(BCON_NEW("holder", BCON_UTF8(holder), "grantW", BCON_UTF8("w1"), "grantP",
                        BCON_UTF8(provider)));
    if (with_token) bson_append_int64(value.get(), "token", -1, 77);
    Bson out = make_bson();
    bson_append_document(out.get(), "value", -1, value.get());
    return out;
  };
  std::optional<HandOverSeen> seen = hand_over_in_release(*reply("w1", "P", true), "P");
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->waiter, "w1");
  EXPECT_EQ(seen->token, 77);
  EXPECT_FALSE(hand_over_in_release(*reply("w1", "Q", true), "P")) << "another Provider's";
  EXPECT_FALSE(hand_over_in_release(*reply("w2", "P", true), "P")) << "held by another";
  EXPECT_FALSE(hand_over_in_release(*reply("w1", "P", false), "P")) << "no token";
  EXPECT_FALSE(hand_over_in_release(*Bson(BCON_NEW("value", BCON_NULL)), "P")) << "no document";
  EXPECT_FALSE(hand_over_in_release(*Bson(BCON_NEW("n", BCON_INT32(1))), "P")) << "an update's";
}

TEST(Commands, SharedExtendAndReleaseAreOwnerChecked) {
  Bson extend = rw_extend_command(request("id3"), /*exclusive=*/false);
  const std::string json = to_json(*extend);
  EXPECT_NE(json.find("\"$$this.id\", \"id3\""), std::string::npos) << json;
  Bson release = rw_release_command(request("id3"), false);
  EXPECT_EQ(find_utf8(*release, "updates.0.q.shared\\.id"), std::nullopt);
  const std::string release_json = to_json(*release);
  EXPECT_NE(release_json.find("\"shared.id\" : \"id3\""), std::string::npos) << release_json;
}

TEST(Commands, TtlIndexUsesTheConfiguredGrace) {
  Bson cmd = index_command("locks", "reapAt", kReapIndexName, 60);
  EXPECT_EQ(find_utf8(*cmd, "createIndexes"), "locks");
  EXPECT_EQ(find_int64(*cmd, "indexes.0.key.reapAt"), 1);
  EXPECT_EQ(find_utf8(*cmd, "indexes.0.name"), kReapIndexName);
  EXPECT_EQ(find_int64(*cmd, "indexes.0.expireAfterSeconds"), 60);
}

// Issue 16 item 3: release and force_release set expiresAt to NOW; the document's reap time
// (reapAt) must only ever be raised by grants and extensions, never by a release.
TEST(Commands, ReleaseNeverMovesTheReapTimeAndGrantsRaiseIt) {
  for (const Bson& cmd :
       {release_command(request("id4")), rw_release_command(request("id4"), true),
        rw_release_command(request("id4"), false), force_release_command("locks", "n", false),
        force_release_command("locks", "n", true)}) {
    const std::string json = to_json(*cmd);
    EXPECT_EQ(json.find("reapAt"), std::string::npos) << json;
  }
  EXPECT_EQ(find_utf8(*acquire_command(request()), "update.0.$set.reapAt.$cond.1.$max.0.$ifNull.0"),
            "$reapAt");
  EXPECT_EQ(find_utf8(*extend_command(request()), "updates.0.u.0.$set.reapAt.$max.0.$ifNull.0"),
            "$reapAt");
}

// Issue 16 item 1: the acquire grants only if its id carries no tombstone (new `tombstones`
// entries or the `abandoned` ids of earlier versions), and the resolution is one update of two
// statements: an upsert that frees a hold with that id, and a second that records the
// tombstone only while the list has room (kTombstonesMax), with no eviction.
TEST(Commands, AcquireHonoursTombstonesAndResolutionWritesOne) {
  const std::string id = "0123456789abcdef0123456789abcdef";
  for (const std::string& acquire : {to_json(*acquire_command(request(id))),
                                     to_json(*rw_acquire_command(request(id), false, 0))}) {
    EXPECT_NE(acquire.find("\"$tombstones\""), std::string::npos) << acquire;
    EXPECT_NE(acquire.find("\"$abandoned\""), std::string::npos) << acquire;
  }
  for (bool is_rw : {false, true}) {
    Bson resolve = resolve_command(request(id), is_rw);
    EXPECT_EQ(find_utf8(*resolve, "updates.0.q._id"), "a.b$c");
    EXPECT_EQ(key_count(**find_document(*resolve, "updates.0.q")), 1u) << "must not filter";
    EXPECT_EQ(find_utf8(*resolve, "updates.1.q._id"), "a.b$c");
    const std::string json = to_json(*resolve);
    EXPECT_NE(json.find("\"upsert\" : true"), std::string::npos) << json;
    EXPECT_NE(json.find("\"tombstones\" : { \"$cond\""), std::string::npos) << json;
    EXPECT_EQ(find_int64(*resolve, "updates.1.q.$expr.$or.1.$lt.1"), kTombstonesMax) << json;
    EXPECT_EQ(json.find("\"abandoned\" :"), std::string::npos) << "never written any more";
  }
}

}  // namespace
}  // namespace mongolock::detail
