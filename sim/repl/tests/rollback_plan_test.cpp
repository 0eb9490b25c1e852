#include "repl/rollback_plan.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <stdexcept>
#include <vector>

namespace mongosim::repl {
namespace {

OpTime ot(int64_t term, uint32_t secs) {
  return OpTime{bson::Timestamp{secs, 1}, term};
}

RollbackEntry insert(OpTime t, int64_t id) {
  return RollbackEntry{t, 'i', "db.c", bson::V(id)};
}
RollbackEntry update(OpTime t, int64_t id) {
  return RollbackEntry{t, 'u', "db.c", bson::V(id)};
}
RollbackEntry noop(OpTime t) {
  return RollbackEntry{t, 'n', "", bson::Value()};
}

TEST(RollbackPlan, UndoesTheDivergedTailNewestFirst) {
  std::vector<RollbackEntry> local{noop(ot(0, 1)), insert(ot(1, 2), 1), insert(ot(1, 3), 2),
                                   update(ot(1, 4), 1), noop(ot(1, 5))};
  std::vector<OpTime> remote{ot(0, 1), ot(1, 2), ot(2, 3), ot(2, 4)};
  RollbackPlan plan = plan_rollback(local, remote);
  ASSERT_FALSE(plan.needs_resync);
  EXPECT_EQ(plan.common_point, ot(1, 2));
  ASSERT_EQ(plan.to_undo.size(), 3u);
  EXPECT_EQ(plan.to_undo[0].optime, ot(1, 5));
  EXPECT_EQ(plan.to_undo[2].optime, ot(1, 3));
  // Document 1 (updated) and 2 (inserted), each once, no-ops excluded.
  ASSERT_EQ(plan.documents.size(), 2u);
  EXPECT_EQ(plan.documents[0].id.as_int64(), 1);
  EXPECT_EQ(plan.documents[1].id.as_int64(), 2);
  EXPECT_EQ(plan.documents[0].ns, "db.c");
}

TEST(RollbackPlan, NothingToUndoWhenTheSourceHasOurNewestEntry) {
  std::vector<RollbackEntry> local{noop(ot(0, 1)), insert(ot(1, 2), 1)};
  RollbackPlan plan = plan_rollback(local, {ot(0, 1), ot(1, 2), ot(1, 3)});
  EXPECT_FALSE(plan.needs_resync);
  EXPECT_EQ(plan.common_point, ot(1, 2));
  EXPECT_TRUE(plan.to_undo.empty());
}

TEST(RollbackPlan, NoCommonPointNeedsResync) {
  std::vector<RollbackEntry> local{insert(ot(1, 2), 1), insert(ot(1, 3), 2)};
  RollbackPlan plan = plan_rollback(local, {ot(0, 1), ot(2, 3)});
  EXPECT_TRUE(plan.needs_resync);
  EXPECT_NE(plan.resync_reason.find("no common point"), std::string::npos);
  // The source's oplog no longer reaches back to anything we share.
  RollbackPlan truncated = plan_rollback(local, {ot(2, 5), ot(2, 6)});
  EXPECT_TRUE(truncated.needs_resync);
}

TEST(RollbackPlan, RefusesUnorderedInputNamingTheSide) {
  std::vector<RollbackEntry> local{insert(ot(1, 3), 1), insert(ot(1, 2), 2)};
  try {
    plan_rollback(local, {});
    ADD_FAILURE() << "accepted an unordered local oplog";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("local oplog is not in ascending optime order at index 1"),
              std::string::npos);
  }
  EXPECT_THROW(plan_rollback({}, {ot(1, 2), ot(1, 2)}), std::invalid_argument);
}

// For any shared prefix and any two diverging tails, the plan keeps exactly the prefix.
RC_GTEST_PROP(RollbackPlan, CommonPointIsTheEndOfTheSharedPrefix, ()) {
  auto prefix_len = *rc::gen::inRange<uint32_t>(1, 30);
  auto local_tail = *rc::gen::inRange<uint32_t>(0, 20);
  auto remote_tail = *rc::gen::inRange<uint32_t>(0, 20);
  std::vector<RollbackEntry> local;
  std::vector<OpTime> remote;
  for (uint32_t i = 1; i <= prefix_len; ++i) {
    local.push_back(insert(ot(1, i), i));
    remote.push_back(ot(1, i));
  }
  // The local tail is from term 2 (an isolated primary), the remote's from term 3.
  for (uint32_t i = 1; i <= local_tail; ++i)
    local.push_back(insert(ot(2, prefix_len + i), 1000 + i));
  for (uint32_t i = 1; i <= remote_tail; ++i) remote.push_back(ot(3, prefix_len + i));
  RollbackPlan plan = plan_rollback(local, remote);
  RC_ASSERT(!plan.needs_resync);
  RC_ASSERT(plan.common_point == ot(1, prefix_len));
  RC_ASSERT(plan.to_undo.size() == local_tail);
  RC_ASSERT(plan.documents.size() == local_tail);
}

}  // namespace
}  // namespace mongosim::repl
