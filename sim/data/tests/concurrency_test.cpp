#include <atomic>
#include <thread>
#include <vector>

#include "data/tests/store_fixture.h"

namespace mongosim::data::testing {
namespace {

using ConcurrencyTest = StoreFixture;

constexpr int kThreads = 8;
constexpr int kRoundsPerThread = 50;

// Upserts whose filter is an equality on _id never surface 11000; exactly one inserts
// (docs/mongodb-behaviour.md, Duplicate keys).
TEST_F(ConcurrencyTest, IdEqualityUpsertsFromManyThreadsInsertOnce) {
  std::atomic<int> duplicate_errors{0}, inserted{0}, other_errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRoundsPerThread; ++i) {
        try {
          Document r = run(J(R"({"findAndModify": "locks", "query": {"_id": "L"},
                                 "update": {"$inc": {"n": 1}}, "upsert": true, "new": true})"));
          if (r.get("lastErrorObject")->as_document().has("upserted")) ++inserted;
        } catch (const CommandError& e) {
          (e.code() == code::kDuplicateKey ? duplicate_errors : other_errors)++;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(duplicate_errors.load(), 0);
  EXPECT_EQ(other_errors.load(), 0);
  EXPECT_EQ(inserted.load(), 1);
  bson::Array docs = all("locks");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0].as_document().get("n")->as_int32(), kThreads * kRoundsPerThread);
}

// The update command's upsert under contention behaves the same way.
TEST_F(ConcurrencyTest, UpdateUpsertsFromManyThreadsInsertOnce) {
  std::atomic<int> upserted{0}, write_errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRoundsPerThread; ++i) {
        Document r = run(J(R"({"update": "locks", "updates": [{"q": {"_id": "L"},
                              "u": {"$inc": {"n": 1}}, "upsert": true}]})"));
        if (r.has("upserted")) ++upserted;
        if (r.has("writeErrors")) ++write_errors;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(upserted.load(), 1);
  EXPECT_EQ(write_errors.load(), 0);
  EXPECT_EQ(all("locks")[0].as_document().get("n")->as_int32(), kThreads * kRoundsPerThread);
}

// While the lock document is held, an "acquire if expired" upsert collides on _id: 11000.
TEST_F(ConcurrencyTest, ConditionalUpsertOnHeldLockIsDuplicateKey) {
  int64_t far_future = clock_.now_ms() + 3'600'000;
  run(Document{
      {"insert", bson::V("locks")},
      {"documents", bson::V(bson::Array{bson::V(Document{
                        {"_id", bson::V("L")}, {"expiresAt", bson::Value::date(far_future)}})})}});
  CommandError e = fail(R"({"findAndModify": "locks",
                            "query": {"_id": "L", "expiresAt": {"$lt": {"$date": "2000-01-01T00:00:00Z"}}},
                            "update": {"$set": {"owner": "me"}}, "upsert": true})");
  EXPECT_EQ(e.code(), code::kDuplicateKey);
}

}  // namespace
}  // namespace mongosim::data::testing
