// Rollback with real processes (docs/mongodb-behaviour.md, Oplog and rollback): a primary whose
// secondaries have stopped replicating acknowledges a w:1 write, the others elect a new primary
// without it, and when the old primary comes back it rolls the write back: the document is gone
// from every member, it is in a rollback file under the old primary's dbpath, the log says so,
// and the set converges.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "server/tests/sim_set.h"

namespace mongosim::testing {
namespace {

namespace fs = std::filesystem;

const Document kMajority{{"w", V("majority")}, {"wtimeout", V(int32_t{20000})}};
const Document kW1Journaled{{"w", V(int32_t{1})}, {"j", V(true)}};

bool has_id(const std::optional<std::vector<std::string>>& ids, const std::string& id) {
  return ids && std::find(ids->begin(), ids->end(), id) != ids->end();
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

struct Divergence {
  int old_primary = -1;
  int new_primary = -1;
  Document lost;  // the w:1 write only the old primary has
};

// Stops every member's oplog fetcher but the primary's, writes `doc` (w:1, j:true) on the
// primary, pauses it and lets the others elect a new primary. Returns the new primary, or -1.
// The others keep answering heartbeats while the write is taken (their fetchers are stopped,
// not the processes), so the primary keeps its majority however slowly the write is served.
int isolate_and_replace_primary(SimSet& set, int old_primary, const Document& doc) {
  for (int i = 0; i < set.size(); ++i) {
    if (i != old_primary) stop_fetcher(set, i);
  }
  auto reply = set.insert(old_primary, doc, kW1Journaled);
  EXPECT_TRUE(write_ok(reply)) << (reply ? bson::to_json(*reply) : "no reply") << set.logs();
  set.pause(old_primary);
  for (int i = 0; i < set.size(); ++i) {
    if (i != old_primary) fail_point(set, i, "stopReplProducer", V("off"));
  }
  int new_primary = -1;
  EXPECT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    new_primary = set.primary();
    return new_primary >= 0 && new_primary != old_primary;
  })) << set.logs();
  return new_primary;
}

// Leaves the current primary holding a write no other member has, paused, while the others
// elect a new primary. Should the write still reach another member (stop_fetcher returns only
// once no earlier fetch can deliver, so it should not), it is legitimately in the new primary's
// log: the old primary is resumed and the attempt repeated with a new _id (at most kAttempts).
Divergence diverge(SimSet& set, const Document& fields) {
  constexpr int kAttempts = 3;
  Divergence d;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    d.old_primary = set.primary();
    EXPECT_GE(d.old_primary, 0) << set.logs();
    if (d.old_primary < 0) return d;
    d.lost = Document{{"_id", V("lost" + std::to_string(attempt))}};
    for (const auto& [k, v] : fields) d.lost.append(k, v);
    d.new_primary = isolate_and_replace_primary(set, d.old_primary, d.lost);
    if (d.new_primary < 0) return d;
    std::string id = bson::to_json(*d.lost.get("_id"));
    if (!has_id(set.ids(d.new_primary), id)) return d;  // diverged
    set.resume(d.old_primary);
    EXPECT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
      return set.state(d.old_primary) == "SECONDARY";
    })) << set.logs();
  }
  ADD_FAILURE() << "the w:1 write reached another member in every attempt";
  d.new_primary = -1;
  return d;
}

TEST(Rollback, W1WriteOfAnIsolatedPrimaryIsRolledBackAndSavedToAFile) {
  SimSet set(durable_set(3));
  ASSERT_GE(set.primary(), 0);
  ASSERT_TRUE(write_ok(set.insert(set.primary(), Document{{"_id", V("base")}}, kMajority)));

  Divergence d = diverge(set, Document{{"v", V(300)}});
  ASSERT_GE(d.new_primary, 0);
  int old_primary = d.old_primary;
  int new_primary = d.new_primary;
  std::string lost = bson::to_json(*d.lost.get("_id"));
  ASSERT_TRUE(write_ok(set.insert(new_primary, Document{{"_id", V("after")}}, kMajority)))
      << set.logs();

  set.resume(old_primary);
  // The set converges: every member has base and after, none has lost, the old primary is a
  // SECONDARY again.
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    for (int i = 0; i < set.size(); ++i) {
      auto ids = set.ids(i);
      if (!has_id(ids, "\"base\"") || !has_id(ids, "\"after\"") || has_id(ids, lost)) {
        return false;
      }
    }
    return set.state(old_primary) == "SECONDARY" && set.primary() == new_primary;
  })) << set.logs();

  std::vector<Document> saved = rollback_documents(set.member(old_primary).dbpath());
  ASSERT_EQ(saved.size(), 1u) << set.logs();
  EXPECT_EQ(bson::to_json(saved[0]), bson::to_json(d.lost));
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
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    return set.state(old_primary) == "SECONDARY" && has_id(set.ids(old_primary), "\"after\"");
  })) << set.logs();
  EXPECT_FALSE(has_id(set.ids(old_primary), lost));
  EXPECT_EQ(rollback_documents(set.member(old_primary).dbpath()).size(), 1u);
}

// The same divergence, but the old primary is killed instead of paused: it restarts from its
// journal (which holds the w:1 write), rejoins, and rolls the write back.
TEST(Rollback, KilledPrimaryRestartsFromItsJournalAndRollsBackItsUncommittedWrite) {
  SimSet set(durable_set(3));
  ASSERT_GE(set.primary(), 0);
  ASSERT_TRUE(write_ok(set.insert(set.primary(), Document{{"_id", V("base")}}, kMajority)));
  Divergence d = diverge(set, Document{});
  ASSERT_GE(d.new_primary, 0);
  int old_primary = d.old_primary;
  int new_primary = d.new_primary;
  std::string lost = bson::to_json(*d.lost.get("_id"));
  set.kill(old_primary);
  ASSERT_TRUE(write_ok(set.insert(new_primary, Document{{"_id", V("after")}}, kMajority)))
      << set.logs();

  set.restart(old_primary);
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    auto ids = set.ids(old_primary);
    return set.state(old_primary) == "SECONDARY" && has_id(ids, "\"base\"") &&
           has_id(ids, "\"after\"") && !has_id(ids, lost);
  })) << set.logs();
  std::string log = set.member(old_primary).log_text();
  EXPECT_NE(log.find(R"("msg":"Recovered from the journal")"), std::string::npos);
  EXPECT_NE(log.find(R"("msg":"Rollback summary")"), std::string::npos);
  std::vector<Document> saved = rollback_documents(set.member(old_primary).dbpath());
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(bson::to_json(saved[0]), bson::to_json(d.lost));
}

}  // namespace
}  // namespace mongosim::testing
