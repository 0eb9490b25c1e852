// Restarts on the same --dbpath with real processes: what a member acknowledged with j:true or
// w:"majority" survives SIGKILL, the member restores its term, vote and config, rejoins its set
// without a new replSetInitiate, and catches up.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "base/error_codes.h"
#include "server/tests/sim_set.h"

namespace mongosim::testing {
namespace {

const Document kMajority{{"w", V("majority")}, {"wtimeout", V(int32_t{20000})}};

std::string id_json(int i) {
  return bson::to_json(V(int32_t{i}));
}

bool has_ids(const std::optional<std::vector<std::string>>& ids, int from, int to) {
  if (!ids) return false;
  std::set<std::string> present(ids->begin(), ids->end());
  for (int i = from; i < to; ++i) {
    if (!present.contains(id_json(i))) return false;
  }
  return true;
}

int64_t term_of(SimSet& set, int i) {
  auto status = set.command(i, Document{{"replSetGetStatus", V(1)}});
  if (!reply_is_ok(status)) return -1;
  return status->get("term")->as_int64();
}

using locklab::testkit::TempDir;

// A standalone member on dir/db, logging to dir/<log>.
locklab::testkit::NodeOptions standalone(const TempDir& dir, const std::string& log = "log") {
  return {.dbpath = dir.file("db"), .log_path = dir.file(log)};
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(Restart, StandaloneKeepsJournaledWritesAndIndexesAcrossSigkill) {
  TempDir dir("mongosim-standalone");
  MongosimNode member(standalone(dir));
  auto created =
      command(member,
              Document{{"createIndexes", V("c")},
                       {"indexes", V(bson::Array{V(Document{{"key", V(Document{{"k", V(1)}})},
                                                            {"name", V("k_1")},
                                                            {"unique", V(true)}})})}},
              "db");
  ASSERT_TRUE(reply_is_ok(created));
  constexpr int kDocs = 50;
  for (int i = 0; i < kDocs; ++i) {
    auto reply =
        command(member,
                Document{{"insert", V("c")},
                         {"documents", V(bson::Array{V(Document{{"_id", V(i)}, {"k", V(i)}})})},
                         {"writeConcern", V(Document{{"w", V(1)}, {"j", V(true)}})}},
                "db");
    ASSERT_TRUE(write_ok(reply)) << (reply ? bson::to_json(*reply) : "no reply");
  }
  member.kill();
  member.restart();
  auto found = command(member, Document{{"find", V("c")}, {"batchSize", V(int32_t{1000})}}, "db");
  ASSERT_TRUE(reply_is_ok(found)) << member.log_text();
  EXPECT_EQ(found->get("cursor")->as_document().get("firstBatch")->as_array().size(),
            static_cast<size_t>(kDocs));
  auto dup =
      command(member,
              Document{{"insert", V("c")},
                       {"documents", V(bson::Array{V(Document{{"_id", V(kDocs)}, {"k", V(3)}})})}},
              "db");
  ASSERT_TRUE(dup && dup->has("writeErrors")) << (dup ? bson::to_json(*dup) : "no reply");
  EXPECT_EQ(dup->get("writeErrors")->as_array()[0].as_document().get("code")->as_int32(),
            code::kDuplicateKey);
  EXPECT_NE(member.log_text().find(R"("msg":"Recovered from the journal")"), std::string::npos);
}

// Inserts `count` documents with j:true on a running standalone member, then SIGKILLs it.
void write_journaled_then_kill(MongosimNode& member, int count) {
  for (int i = 0; i < count; ++i) {
    auto reply = command(member,
                         Document{{"insert", V("c")},
                                  {"documents", V(bson::Array{V(Document{{"_id", V(i)}})})},
                                  {"writeConcern", V(Document{{"j", V(true)}})}},
                         "db");
    ASSERT_TRUE(write_ok(reply));
  }
  member.kill();
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

std::string journal_path(const MongosimNode& member) {
  return member.dbpath() + "/journal/oplog.journal";
}

TEST(Restart, TornJournalTailIsDroppedWithALogLine) {
  TempDir dir("mongosim-standalone");
  MongosimNode member(standalone(dir));
  write_journaled_then_kill(member, 5);
  // A record cut short, as if the process died in the middle of its write.
  auto size = std::filesystem::file_size(journal_path(member));
  std::filesystem::resize_file(journal_path(member), size - 3);
  member.restart();
  auto found = command(member, Document{{"find", V("c")}}, "db");
  ASSERT_TRUE(reply_is_ok(found)) << member.log_text();
  EXPECT_EQ(found->get("cursor")->as_document().get("firstBatch")->as_array().size(), 4u);
  EXPECT_NE(member.log_text().find(R"("msg":"Dropping the torn tail of the journal")"),
            std::string::npos)
      << member.log_text();
  // New writes follow the intact prefix: a second restart reads a clean journal.
  auto reply = command(member,
                       Document{{"insert", V("c")},
                                {"documents", V(bson::Array{V(Document{{"_id", V(99)}})})},
                                {"writeConcern", V(Document{{"j", V(true)}})}},
                       "db");
  ASSERT_TRUE(write_ok(reply));
  member.kill();
  size_t torn_lines_before = count_of(member.log_text(), "Dropping the torn tail");
  member.restart();
  auto again = command(member, Document{{"find", V("c")}}, "db");
  ASSERT_TRUE(reply_is_ok(again));
  EXPECT_EQ(again->get("cursor")->as_document().get("firstBatch")->as_array().size(), 5u);
  EXPECT_EQ(count_of(member.log_text(), "Dropping the torn tail"), torn_lines_before);
}

TEST(Restart, CorruptJournalStopsStartupNamingFileAndOffset) {
  TempDir dir("mongosim-standalone");
  MongosimNode member(standalone(dir));
  write_journaled_then_kill(member, 5);
  {
    std::fstream f(journal_path(member), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);  // inside the first record's payload; more records follow
    f.put('\x7f');
  }
  EXPECT_THROW(member.restart(), std::runtime_error);
  std::string log = member.log_text();
  EXPECT_NE(log.find("journal " + journal_path(member) + " is corrupt at byte offset 0"),
            std::string::npos)
      << log;
}

TEST(Restart, SecondDbPathUserIsRefused) {
  TempDir dir("mongosim-standalone");
  MongosimNode first(standalone(dir, "log1"));
  EXPECT_THROW(MongosimNode second(standalone(dir, "log2")), std::runtime_error);
  const std::string log = file_text(dir.file("log2"));
  EXPECT_NE(log.find("Another mongosim instance is already running"), std::string::npos) << log;
}

TEST(Restart, KilledSecondaryRejoinsAndCatchesUp) {
  SimSet set(durable_set(3));
  int primary = set.primary();
  ASSERT_GE(primary, 0);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(write_ok(set.insert(primary, Document{{"_id", V(i)}}, kMajority)));
  }
  int secondary = (primary + 1) % set.size();
  set.kill(secondary);
  for (int i = 10; i < 20; ++i) {
    ASSERT_TRUE(write_ok(set.insert(primary, Document{{"_id", V(i)}}, kMajority)));
  }
  set.restart(secondary);
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    return set.state(secondary) == "SECONDARY" && has_ids(set.ids(secondary), 0, 20);
  })) << set.logs();
  EXPECT_EQ(set.primary(), primary);
  EXPECT_NE(set.member(secondary).log_text().find(R"("msg":"Restored the replica-set state)"),
            std::string::npos);
  const std::optional<bson::ObjectId> id = replica_set_id_of(set.member(primary));
  ASSERT_TRUE(id);
  EXPECT_EQ(replica_set_id_of(set.member(secondary)), id) << "the restarted member's set id";
}

// replSetInitiate of a one-member set answers once the config is on the dbpath: a SIGKILL right
// after the answer, before any replication tick could have written it, still finds it there.
TEST(Restart, OneMemberSetKilledRightAfterItsInitiateKeepsItsConfig) {
  TempDir dir;
  MongosimNode node({.args = {"--replSet", "rs-initiate-kill"}, .dbpath = dir.file("db")});
  Document member{{"_id", V(int32_t{0})}, {"host", V(node.host())}};
  auto init = command(
      node, Document{{"replSetInitiate", V(Document{{"_id", V("rs-initiate-kill")},
                                                    {"members", V(bson::Array{V(member)})}})}});
  ASSERT_TRUE(reply_is_ok(init)) << show(init);
  node.kill();
  node.restart();
  EXPECT_TRUE(replica_set_id_of(node)) << "restarted without its config:\n" << node.log_text();
}

// A one-member set runs no topology: its restart adopts the persisted config again, as it was
// (the id included: a fresh initiate would refuse one, or make a new one), and is primary.
TEST(Restart, OneMemberSetKeepsItsConfigAndIdAcrossSigkill) {
  SimSet set(durable_set(1));
  const std::optional<bson::ObjectId> before = replica_set_id_of(set.member(0));
  ASSERT_TRUE(before) << "replSetGetConfig shows no settings.replicaSetId";
  set.kill(0);
  set.restart(0);
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] { return set.state(0) == "PRIMARY"; }))
      << set.logs();
  EXPECT_EQ(replica_set_id_of(set.member(0)), before) << set.logs();
}

// A restarted one-member set adopts its config again with a new initiation optime, newer than
// every entry in its journal. A write that changes nothing under w:"majority" (no wtimeout) waits
// for the newest entry, already durable, and is acknowledged at once; it used to wait 60 s for
// the initiation optime to reach the journal and answer writeConcernError 64 (RawClient gives up
// after 10 s, so such a wait fails here with no reply).
TEST(Restart, OneMemberSetAcknowledgesAWriteThatChangedNothingAfterARestart) {
  SimSet set(durable_set(1));
  ASSERT_TRUE(write_ok(set.insert(0, Document{{"_id", V(1)}}, kMajority)));
  set.kill(0);
  wait_for_next_second();  // the restart's initiation optime is then above every entry
  set.restart(0);
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] { return set.state(0) == "PRIMARY"; }))
      << set.logs();
  auto reply = set.command(
      0,
      Document{
          {"update", V("c")},
          {"updates",
           V(bson::Array{V(Document{{"q", V(Document{{"_id", V("none")}})},
                                    {"u", V(Document{{"$set", V(Document{{"v", V(2)}})}})}})})},
          {"writeConcern", V(Document{{"w", V("majority")}})}},
      "db");
  EXPECT_TRUE(write_ok(reply)) << show(reply) << set.logs();
}

TEST(Restart, KilledPrimaryRejoinsAsSecondaryAfterAnElection) {
  SimSet set(durable_set(3));
  int old_primary = set.primary();
  ASSERT_GE(old_primary, 0);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(write_ok(set.insert(old_primary, Document{{"_id", V(i)}}, kMajority)));
  }
  int64_t term_before = term_of(set, old_primary);
  set.kill(old_primary);
  int new_primary = -1;
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    new_primary = set.primary();
    return new_primary >= 0;
  })) << set.logs();
  ASSERT_NE(new_primary, old_primary);
  ASSERT_TRUE(has_ids(set.ids(new_primary), 0, 10));  // a new primary has every majority write
  for (int i = 10; i < 20; ++i) {
    ASSERT_TRUE(write_ok(set.insert(new_primary, Document{{"_id", V(i)}}, kMajority)));
  }
  set.restart(old_primary);
  ASSERT_TRUE(has_ids(set.ids(old_primary), 0, 10)) << "journaled majority writes lost";
  EXPECT_GE(term_of(set, old_primary), term_before);  // the term came back from the dbpath
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    return set.state(old_primary) == "SECONDARY" && has_ids(set.ids(old_primary), 0, 20);
  })) << set.logs();
}

TEST(Restart, WholeSetKilledAtOnceKeepsEveryMajorityWrite) {
  SimSet set(durable_set(3));
  int primary = set.primary();
  ASSERT_GE(primary, 0);
  constexpr int kDocs = 30;
  for (int i = 0; i < kDocs; ++i) {
    ASSERT_TRUE(write_ok(set.insert(primary, Document{{"_id", V(i)}}, kMajority)));
  }
  int64_t term_before = term_of(set, primary);
  for (int i = 0; i < set.size(); ++i) set.kill(i);
  for (int i = 0; i < set.size(); ++i) set.restart(i);
  int new_primary = -1;
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    new_primary = set.primary();
    return new_primary >= 0;
  })) << set.logs();
  EXPECT_GT(term_of(set, new_primary), term_before);  // terms never go back after a restart
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    for (int i = 0; i < set.size(); ++i) {
      if (!has_ids(set.ids(i), 0, kDocs)) return false;
    }
    return true;
  })) << set.logs();
}

}  // namespace
}  // namespace mongosim::testing
