#include "data/cursors.h"

#include <gtest/gtest.h>

#include "base/error_codes.h"
#include "command/command.h"

namespace mongosim::data {
namespace {

std::deque<bson::Document> docs(int n) {
  std::deque<bson::Document> out;
  for (int i = 0; i < n; ++i) out.push_back(bson::Document{{"_id", bson::V(i)}});
  return out;
}

int64_t id_of(const bson::Document& reply) {
  return reply.get("cursor")->as_document().get("id")->as_int64();
}

TEST(CursorManagerTest, IdleCursorsExpireAfterTenMinutes) {
  CursorManager m;
  int64_t id = id_of(m.open("db.c", docs(3), 1, false, 1'000));
  ASSERT_NE(id, 0);
  m.expire_idle(1'000 + CursorManager::kIdleTimeoutMs - 1);
  EXPECT_EQ(m.size(), 1u);
  m.expire_idle(1'000 + CursorManager::kIdleTimeoutMs);
  EXPECT_EQ(m.size(), 0u);
  try {
    m.get_more(id, "db.c", 1, 2'000);
    FAIL() << "expired cursor must be gone";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), code::kCursorNotFound);
  }
}

TEST(CursorManagerTest, DropClosesCursorsOfTheNamespace) {
  CursorManager m;
  m.open("db.c", docs(3), 1, false, 0);
  m.open("db.d", docs(3), 1, false, 0);
  m.kill_namespace_prefix("db.c");
  EXPECT_EQ(m.size(), 1u);
}

TEST(CursorManagerTest, ExhaustedFirstBatchOpensNoCursor) {
  CursorManager m;
  EXPECT_EQ(id_of(m.open("db.c", docs(2), 2, false, 0)), 0);
  EXPECT_EQ(m.size(), 0u);
}

}  // namespace
}  // namespace mongosim::data
