// Rollback with real processes (reference §6.6): a primary cut off from its secondaries
// acknowledges a w:1 write, the others elect a new primary without it, and when the old primary
// comes back it rolls the write back: the document is gone from every member, it is in a
// rollback file under the old primary's dbpath, the log says so, and the set converges.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "server/tests/durable_set.h"

namespace mongosim::testing {
namespace {

namespace fs = std::filesystem;

const Document kMajority{{"w", V("majority")}, {"wtimeout", V(int32_t{20000})}};
const Document kW1Journaled{{"w", V(int32_t{1})}, {"j", V(true)}};

bool has_id(const std::optional<std::vector<std::string>>& ids, const std::string& id) {
  return ids && std::find(ids->begin(), ids->end(), id) != ids->end();
}

bool write_ok(const std::optional<Document>& reply) {
  return reply_is_ok(reply) && !reply->has("writeErrors") && !reply->has("writeConcernError");
}

// Every rollback file under the member's dbpath, decoded.
std::vector<Document> rollback_documents(const std::string& dbpath) {
  std::vector<Document> out;
  fs::path root = fs::path(dbpath) / "rollback";
  if (!fs::exists(root)) return out;
  for (const auto& f : fs::recursive_directory_iterator(root)) {
    if (!f.is_regular_file()) continue;
    std::string name = f.path().filename().string();
    EXPECT_EQ(name.rfind("removed.", 0), 0u) << f.path();
    EXPECT_EQ(f.path().extension(), ".bson") << f.path();
    for (auto& d : read_bson_file(f.path().string())) out.push_back(std::move(d));
  }
  return out;
}

// Leaves `old_primary` holding a write no other member has, then lets the others elect a new
// primary. Returns the new primary's index.
int diverge(DurableSet& set, int old_primary, const Document& lost_doc) {
  for (int i = 0; i < set.size(); ++i) {
    if (i != old_primary) set.pause(i);
  }
  // Written at once: the primary steps down electionTimeoutMillis after it last heard a majority.
  auto reply = set.insert(old_primary, lost_doc, kW1Journaled);
  EXPECT_TRUE(write_ok(reply)) << (reply ? bson::to_json(*reply) : "no reply") << set.logs();
  set.pause(old_primary);
  for (int i = 0; i < set.size(); ++i) {
    if (i != old_primary) set.resume(i);
  }
  int new_primary = -1;
  EXPECT_TRUE(set.wait_for([&] {
    new_primary = set.primary();
    return new_primary >= 0 && new_primary != old_primary;
  })) << set.logs();
  return new_primary;
}

TEST(Rollback, W1WriteOfAnIsolatedPrimaryIsRolledBackAndSavedToAFile) {
  DurableSet set(3);
  int old_primary = set.primary();
  ASSERT_GE(old_primary, 0);
  ASSERT_TRUE(write_ok(set.insert(old_primary, Document{{"_id", V("base")}}, kMajority)));

  int new_primary = diverge(set, old_primary, Document{{"_id", V("lost")}, {"v", V(300)}});
  ASSERT_GE(new_primary, 0);
  ASSERT_TRUE(write_ok(set.insert(new_primary, Document{{"_id", V("after")}}, kMajority)))
      << set.logs();

  set.resume(old_primary);
  // The set converges: every member has base and after, none has lost, the old primary is a
  // SECONDARY again.
  ASSERT_TRUE(set.wait_for([&] {
    for (int i = 0; i < set.size(); ++i) {
      auto ids = set.ids(i);
      if (!has_id(ids, "\"base\"") || !has_id(ids, "\"after\"") || has_id(ids, "\"lost\"")) {
        return false;
      }
    }
    return set.state(old_primary) == "SECONDARY" && set.primary() == new_primary;
  })) << set.logs();

  std::vector<Document> saved = rollback_documents(set.member(old_primary).dbpath());
  ASSERT_EQ(saved.size(), 1u) << set.logs();
  EXPECT_EQ(bson::to_json(saved[0]), bson::to_json(Document{{"_id", V("lost")}, {"v", V(300)}}));
  for (int i = 0; i < set.size(); ++i) {
    if (i != old_primary) {
      EXPECT_TRUE(rollback_documents(set.member(i).dbpath()).empty()) << "member " << i;
    }
  }
  std::string log = set.member(old_primary).log_text();
  EXPECT_NE(
      log.find(
          R"("c":"ROLLBACK","id":21593,"ctx":"BackgroundSync","msg":"Transition to ROLLBACK")"),
      std::string::npos);
  EXPECT_NE(log.find(R"("msg":"Rollback summary")"), std::string::npos);
  EXPECT_NE(log.find(R"("msg":"Wrote the removed documents to a rollback file")"),
            std::string::npos);
  EXPECT_NE(log.find(R"("oldState" : "ROLLBACK")"), std::string::npos);

  // The rollback is durable: after a restart the old primary does not resurrect the write.
  set.kill(old_primary);
  set.restart(old_primary);
  ASSERT_TRUE(set.wait_for([&] {
    return set.state(old_primary) == "SECONDARY" && has_id(set.ids(old_primary), "\"after\"");
  })) << set.logs();
  EXPECT_FALSE(has_id(set.ids(old_primary), "\"lost\""));
  EXPECT_EQ(rollback_documents(set.member(old_primary).dbpath()).size(), 1u);
}

// The same divergence, but the old primary is killed instead of paused: it restarts from its
// journal (which holds the w:1 write), rejoins, and rolls the write back.
TEST(Rollback, KilledPrimaryRestartsFromItsJournalAndRollsBackItsUncommittedWrite) {
  DurableSet set(3);
  int old_primary = set.primary();
  ASSERT_GE(old_primary, 0);
  ASSERT_TRUE(write_ok(set.insert(old_primary, Document{{"_id", V("base")}}, kMajority)));
  int new_primary = diverge(set, old_primary, Document{{"_id", V("lost")}});
  ASSERT_GE(new_primary, 0);
  set.kill(old_primary);
  ASSERT_TRUE(write_ok(set.insert(new_primary, Document{{"_id", V("after")}}, kMajority)))
      << set.logs();

  set.restart(old_primary);
  ASSERT_TRUE(set.wait_for([&] {
    auto ids = set.ids(old_primary);
    return set.state(old_primary) == "SECONDARY" && has_id(ids, "\"base\"") &&
           has_id(ids, "\"after\"") && !has_id(ids, "\"lost\"");
  })) << set.logs();
  std::string log = set.member(old_primary).log_text();
  EXPECT_NE(log.find(R"("msg":"Recovered from the journal")"), std::string::npos);
  EXPECT_NE(log.find(R"("msg":"Rollback summary")"), std::string::npos);
  std::vector<Document> saved = rollback_documents(set.member(old_primary).dbpath());
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(bson::to_json(saved[0]), bson::to_json(Document{{"_id", V("lost")}}));
}

}  // namespace
}  // namespace mongosim::testing
