// plan_notify_wait: the sleep a refused notify waiter takes, read from the lock document its
// attempt returned. Pure: documents are built here as the acquire pipeline leaves them.
// Model: single documents; left out: what the server does (queue_test.cpp), the clock rate
// between server and client (a wake-up time only, never a safety decision).
#include "notify_plan.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "bson_ptr.h"

namespace mongolock::detail {
namespace {

constexpr int64_t kNowMs = 1'700'000'000'000;
constexpr int64_t kKeepMs = 10'000;
constexpr int64_t kGraceMs = 800;
constexpr int64_t kMinMs = 5;

struct Entry {
  std::string waiter;
  int64_t until_ms;
};

// Appends array `key` of `count` documents to `doc`, each filled by fill(entry, i).
template <typename Fill>
void append_documents(bson_t* doc, const char* key, size_t count, Fill&& fill) {
  bson_t array;
  bson_append_array_begin(doc, key, -1, &array);
  for (size_t i = 0; i < count; ++i) {
    bson_t entry;
    const std::string index = std::to_string(i);
    bson_append_document_begin(&array, index.c_str(), -1, &entry);
    fill(&entry, i);
    bson_append_document_end(&array, &entry);
  }
  bson_append_array_end(doc, &array);
}

// {holder, expiresAt, queue: [{w, p, until}], tombstones: [{id, until}]}; holder empty = null.
Bson lock_document(const std::string& holder, int64_t expires_ms, const std::vector<Entry>& entries,
                   const std::vector<std::string>& tombstoned = {}) {
  Bson doc = make_bson();
  if (holder.empty()) {
    bson_append_null(doc.get(), "holder", -1);
  } else {
    bson_append_utf8(doc.get(), "holder", -1, holder.c_str(), -1);
  }
  bson_append_date_time(doc.get(), "expiresAt", -1, expires_ms);
  append_documents(doc.get(), "queue", entries.size(), [&](bson_t* entry, size_t i) {
    bson_append_utf8(entry, "w", -1, entries[i].waiter.c_str(), -1);
    bson_append_utf8(entry, "p", -1, "provider", -1);
    bson_append_date_time(entry, "until", -1, entries[i].until_ms);
  });
  append_documents(doc.get(), "tombstones", tombstoned.size(), [&](bson_t* entry, size_t i) {
    bson_append_utf8(entry, "id", -1, tombstoned[i].c_str(), -1);
    bson_append_date_time(entry, "until", -1, kNowMs + kKeepMs);
  });
  return doc;
}

QueueTicket ticket(const char* waiter) {
  return QueueTicket{waiter, "provider", kKeepMs, kGraceMs};
}

// The waiter's own entry as its attempt at server time kNowMs left it.
Entry own(const std::string& waiter) {
  return {waiter, kNowMs + kKeepMs};
}

TEST(NotifyPlan, TheFirstWaiterOfAHeldLockSleepsUntilTheLeaseEnds) {
  Bson doc = lock_document("holder", kNowMs + 3000, {own("me"), {"other", kNowMs + 5000}});
  NotifyPlan plan = plan_notify_wait(*doc, ticket("me"), kMinMs);
  EXPECT_TRUE(plan.queued);
  EXPECT_EQ(plan.sleep_ms, 3000);
}

TEST(NotifyPlan, ALaterWaiterGivesTheFirstItsGraceAfterTheLeaseEnds) {
  Bson doc = lock_document("holder", kNowMs + 3000, {{"other", kNowMs + 5000}, own("me")});
  EXPECT_EQ(plan_notify_wait(*doc, ticket("me"), kMinMs).sleep_ms, 3000 + kGraceMs);
}

TEST(NotifyPlan, AFreeLockWhoseHeadIsAnotherWaitsOutTheGrace) {
  Bson doc = lock_document("", kNowMs - 100, {{"other", kNowMs + 5000}, own("me")});
  EXPECT_EQ(plan_notify_wait(*doc, ticket("me"), kMinMs).sleep_ms, kGraceMs - 100);
}

TEST(NotifyPlan, ALapsedHeadDoesNotCount) {
  // The other entry's until passed at this attempt (a dead waiter): "me" is first.
  Bson doc = lock_document("holder", kNowMs + 2000, {{"other", kNowMs - 1}, own("me")});
  EXPECT_EQ(plan_notify_wait(*doc, ticket("me"), kMinMs).sleep_ms, 2000);
}

// A live entry whose waiter is tombstoned (its leave was lost and its id resolved) is not the
// head, as in the acquire's pipeline: "me" is first and is not made to wait out a grace for it.
// (ALaterWaiterGivesTheFirstItsGraceAfterTheLeaseEnds is the same document without the
// tombstone.)
TEST(NotifyPlan, ATombstonedHeadDoesNotCount) {
  Bson doc =
      lock_document("holder", kNowMs + 3000, {{"other", kNowMs + 5000}, own("me")}, {"other"});
  EXPECT_EQ(plan_notify_wait(*doc, ticket("me"), kMinMs).sleep_ms, 3000);
  Bson free = lock_document("", kNowMs - 100, {{"other", kNowMs + 5000}, own("me")}, {"other"});
  EXPECT_EQ(plan_notify_wait(*free, ticket("me"), kMinMs).sleep_ms, kMinMs);
}

TEST(NotifyPlan, AnExpiredLeaseIsAFreeLock) {
  Bson doc = lock_document("holder", kNowMs - 5000, {{"other", kNowMs + 5000}, own("me")});
  EXPECT_EQ(plan_notify_wait(*doc, ticket("me"), kMinMs).sleep_ms, kMinMs);
}

TEST(NotifyPlan, AWaiterTheQueueDoesNotListPolls) {
  Bson doc = lock_document("holder", kNowMs + 3000, {{"other", kNowMs + 5000}});
  NotifyPlan plan = plan_notify_wait(*doc, ticket("me"), kMinMs);
  EXPECT_FALSE(plan.queued);
  EXPECT_FALSE(plan.sleep_ms.has_value());
}

TEST(NotifyPlan, ALongLeaseIsCappedSoTheEntryIsRefreshedInTime) {
  Bson doc = lock_document("holder", kNowMs + 600'000, {own("me")});
  EXPECT_EQ(plan_notify_wait(*doc, ticket("me"), kMinMs).sleep_ms, kKeepMs / 2);
}

// Whatever the document says, a queued waiter sleeps at least min_ms and refreshes its entry
// at least twice per keep time.
RC_GTEST_PROP(NotifyPlan, EverySleepIsWithinMinAndHalfTheKeepTime, ()) {
  const int64_t lease_offset_ms = *rc::gen::inRange<int64_t>(-100'000, 100'000);
  const bool held = *rc::gen::arbitrary<bool>();
  const int position = *rc::gen::inRange(0, 4);
  std::vector<Entry> entries;
  for (int i = 0; i < 4; ++i) {
    if (i == position) {
      entries.push_back(own("me"));
    } else {
      entries.push_back(
          {"w" + std::to_string(i), kNowMs + *rc::gen::inRange<int64_t>(-kKeepMs, kKeepMs)});
    }
  }
  Bson doc = lock_document(held ? "holder" : "", kNowMs + lease_offset_ms, entries);
  NotifyPlan plan = plan_notify_wait(*doc, ticket("me"), kMinMs);
  RC_ASSERT(plan.queued);
  RC_ASSERT(plan.sleep_ms.has_value());
  RC_ASSERT(*plan.sleep_ms >= kMinMs);
  RC_ASSERT(*plan.sleep_ms <= kKeepMs / 2);
}

}  // namespace
}  // namespace mongolock::detail
