// The FIFO queue of notify waiters on the server: the acquire pipeline with a ticket grants in
// queue order, lets another waiter take a lock its head left free for the grace time, skips a
// lapsed entry, and leave_queue_command gives a place up; a notify holder's release hands the
// lock over to the first entry that may have it. The commands are sent as built
// (commands.h) by the test, one at a time: what the queue decides, not how waiters are woken.
//
// Model: one mongosim member, one client, each command at a point the test chooses. Left out:
// concurrent attempts (the server runs each findAndModify atomically), failover, clock steps
// (keep and grace are measured on the server clock alone).
#include <gtest/gtest.h>
#include <mongoc/mongoc.h>

#include <string>
#include <vector>

#include "bson_ptr.h"
#include "commands.h"
#include "test_server.h"

namespace mongolock::test {
namespace {

using detail::Bson;
using detail::HoldRequest;
using detail::QueueTicket;

constexpr int64_t kExpiryMs = 60'000;
constexpr int64_t kLongMs = 600'000;  // keep and grace that cannot pass during a test
const Owner kOwner{"host", 1, "queue test"};

class QueueTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (IsSkipped()) return;
    client_ = mongoc_client_new(server_->uri().c_str());
    ASSERT_NE(client_, nullptr);
    db_ = fresh_database();
  }
  void TearDown() override {
    if (client_ != nullptr) mongoc_client_destroy(client_);
  }

  // The reply of one command; fails the test when the server refuses it.
  Bson run(const Bson& command) {
    detail::BsonReply reply;
    bson_error_t error;
    const bool ok = mongoc_client_command_simple(client_, db_.c_str(), command.get(), nullptr,
                                                 reply.out(), &error);
    EXPECT_TRUE(ok) << error.message << " for " << detail::to_json(*command);
    return reply.copy();
  }

  // One queued attempt by waiter `waiter` (acquisition id = waiter + "-id"); true if granted.
  bool attempt(const std::string& waiter, int64_t keep_ms = kLongMs, int64_t grace_ms = kLongMs) {
    const std::string id = waiter + "-id";
    const Owner owner{"host-" + waiter, 7, waiter};
    const std::string provider = "provider-" + waiter;  // the ticket views it
    const QueueTicket ticket{waiter, provider, keep_ms, grace_ms, kExpiryMs, &owner};
    HoldRequest request{"locks", "L", id, &kOwner, kExpiryMs, kExpiryMs + 60'000};
    request.ticket = &ticket;
    Bson reply = run(detail::acquire_command(request));
    return detail::find_utf8(*reply, "value.holder") == id;
  }
  // A notify holder's release of hold `id`: hands the lock over.
  void hand_over(const std::string& id) {
    HoldRequest request{"locks", "L", id, &kOwner, kExpiryMs, 0};
    request.hand_over = true;
    Bson reply = run(detail::release_command(request));
    ASSERT_TRUE(detail::release_removed_hold(*reply)) << id << " did not hold the lock";
  }
  // Tombstones `id` as an unknown outcome's resolution does.
  void tombstone(const std::string& id) {
    HoldRequest request{"locks", "L", id, &kOwner, kExpiryMs, kLongMs};
    Bson reply = run(detail::resolve_command(request, /*rw=*/false));
    ASSERT_EQ(detail::find_int64(*reply, "n"), detail::kResolveStatements);
  }
  Bson document() {
    Bson reply =
        run(Bson(BCON_NEW("find", BCON_UTF8("locks"), "filter", "{", "_id", BCON_UTF8("L"), "}")));
    auto doc = detail::find_document(*reply, "cursor.firstBatch.0");
    EXPECT_TRUE(doc.has_value()) << "no lock document";
    return doc ? std::move(*doc) : detail::make_bson();
  }
  // A plain acquire that ignores the queue.
  bool attempt_unqueued(const std::string& id) {
    HoldRequest request{"locks", "L", id, &kOwner, kExpiryMs, kExpiryMs + 60'000};
    Bson reply = run(detail::acquire_command(request));
    return detail::find_utf8(*reply, "value.holder") == id;
  }
  void release(const std::string& waiter) {
    const std::string id = waiter + "-id";
    HoldRequest request{"locks", "L", id, &kOwner, kExpiryMs, 0};
    Bson reply = run(detail::release_command(request));
    ASSERT_EQ(detail::find_int64(*reply, "n"), 1) << waiter << " did not hold the lock";
  }
  void leave(const std::string& waiter) { run(detail::leave_queue_command("locks", "L", waiter)); }
  // The waiters of the lock document's queue, in order.
  std::vector<std::string> queue() {
    Bson reply =
        run(Bson(BCON_NEW("find", BCON_UTF8("locks"), "filter", "{", "_id", BCON_UTF8("L"), "}")));
    std::vector<std::string> waiters;
    auto doc = detail::find_document(*reply, "cursor.firstBatch.0");
    if (!doc) return waiters;
    detail::for_each_document(**doc, "queue", [&](const bson_t& entry) {
      waiters.push_back(detail::find_utf8(entry, "w").value_or("?"));
      return true;
    });
    return waiters;
  }

  mongoc_client_t* client_ = nullptr;
  std::string db_;
};

using Waiters = std::vector<std::string>;

TEST_F(QueueTest, QueuedWaitersAreGrantedInArrivalOrder) {
  ASSERT_TRUE(attempt("a"));
  EXPECT_FALSE(attempt("b"));
  EXPECT_FALSE(attempt("c"));
  EXPECT_EQ(queue(), (Waiters{"b", "c"}));
  release("a");
  EXPECT_FALSE(attempt("c")) << "c came before its turn";
  EXPECT_EQ(queue(), (Waiters{"b", "c"})) << "a refused attempt refreshes its entry in place";
  EXPECT_TRUE(attempt("b"));
  EXPECT_EQ(queue(), (Waiters{"c"}));
  release("b");
  EXPECT_TRUE(attempt("c"));
  EXPECT_EQ(queue(), (Waiters{}));
}

TEST_F(QueueTest, AFreeLockItsHeadLeftAloneGoesToAnotherAfterTheGrace) {
  ASSERT_TRUE(attempt("a"));
  EXPECT_FALSE(attempt("b"));
  release("a");
  // c's own grace is 1 ms: once the lock has been free that long, c's attempt takes it and
  // drops b, the head that did not come.
  ASSERT_TRUE(poll_until(after(kEventually), [&] { return attempt("c", kLongMs, 1); }));
  EXPECT_EQ(queue(), (Waiters{})) << "the head that missed its turn stays queued";
}

TEST_F(QueueTest, ALapsedEntryLosesItsPlace) {
  ASSERT_TRUE(attempt("a"));
  EXPECT_FALSE(attempt("b", /*keep_ms=*/200));
  EXPECT_FALSE(attempt("c"));
  release("a");
  // b never attempts again: its entry lapses 200 ms after its attempt and c is first.
  ASSERT_TRUE(poll_until(after(kEventually), [&] { return attempt("c"); }));
  EXPECT_EQ(queue(), (Waiters{})) << "the grant keeps a lapsed entry";
}

TEST_F(QueueTest, ALeavingWaiterGivesItsPlaceUp) {
  ASSERT_TRUE(attempt("a"));
  EXPECT_FALSE(attempt("b"));
  EXPECT_FALSE(attempt("c"));
  leave("b");
  EXPECT_EQ(queue(), (Waiters{"c"}));
  release("a");
  EXPECT_TRUE(attempt("c"));
}

TEST_F(QueueTest, AFullQueueTakesNoMoreWaiters) {
  ASSERT_TRUE(attempt("holder"));
  for (int64_t i = 0; i < detail::kQueueEntriesMax; ++i) {
    ASSERT_FALSE(attempt("w" + std::to_string(i)));
  }
  EXPECT_FALSE(attempt("late"));
  const Waiters waiters = queue();
  EXPECT_EQ(static_cast<int64_t>(waiters.size()), detail::kQueueEntriesMax);
  EXPECT_EQ(waiters.back(), "w" + std::to_string(detail::kQueueEntriesMax - 1));
}

TEST_F(QueueTest, AnAcquireWithoutATicketIgnoresTheQueue) {
  ASSERT_TRUE(attempt("a"));
  EXPECT_FALSE(attempt("b"));
  release("a");
  EXPECT_TRUE(attempt_unqueued("plain")) << "only notify waiters keep the queue's order";
  EXPECT_EQ(queue(), (Waiters{"b"}));
}

TEST_F(QueueTest, ANotifyReleaseHandsTheLockToTheHeadWithItsOwnLeaseAndOwner) {
  ASSERT_TRUE(attempt("a"));
  const int64_t token_a = detail::find_int64(*document(), "token").value_or(0);
  EXPECT_FALSE(attempt("b"));
  EXPECT_FALSE(attempt("c"));
  hand_over("a-id");
  Bson doc = document();
  EXPECT_EQ(detail::find_utf8(*doc, "holder"), "b") << detail::to_json(*doc);
  EXPECT_EQ(detail::find_utf8(*doc, "grantW"), "b");
  EXPECT_EQ(detail::find_utf8(*doc, "grantP"), "provider-b");
  EXPECT_EQ(detail::find_utf8(*doc, "owner.host"), "host-b");
  EXPECT_GT(detail::find_int64(*doc, "token").value_or(0), token_a);
  const auto acquired = detail::find_date_ms(*doc, "acquiredAt");
  const auto expires = detail::find_date_ms(*doc, "expiresAt");
  ASSERT_TRUE(acquired && expires);
  EXPECT_EQ(*expires - *acquired, kExpiryMs) << "the lease is the entry's own";
  EXPECT_GE(detail::find_date_ms(*doc, "reapAt").value_or(0), *expires);
  EXPECT_EQ(queue(), (Waiters{"c"}));
  hand_over("b");
  EXPECT_EQ(detail::find_utf8(*document(), "holder"), "c");
  EXPECT_EQ(queue(), (Waiters{}));
  hand_over("c");
  EXPECT_EQ(detail::find_utf8(*document(), "holder"), std::nullopt) << "no queue: freed";
}

TEST_F(QueueTest, AHandOverPassesATombstonedWaiter) {
  ASSERT_TRUE(attempt("a"));
  EXPECT_FALSE(attempt("b"));
  EXPECT_FALSE(attempt("c"));
  tombstone("b");
  hand_over("a-id");
  EXPECT_EQ(detail::find_utf8(*document(), "holder"), "c");
}

TEST_F(QueueTest, AHandOverPassesALapsedEntry) {
  ASSERT_TRUE(attempt("a"));
  EXPECT_FALSE(attempt("b", /*keep_ms=*/200));
  EXPECT_FALSE(attempt("c"));
  // Until the server's NOW passes b's `until`.
  ASSERT_TRUE(poll_until(after(kEventually), [&] {
    Bson reply = run(detail::inspect_command("locks", "L"));
    const auto now = detail::find_date_ms(*reply, "cursor.firstBatch.0._now");
    const auto until = detail::find_date_ms(*reply, "cursor.firstBatch.0.queue.0.until");
    return now && until && *now >= *until;
  }));
  hand_over("a-id");
  EXPECT_EQ(detail::find_utf8(*document(), "holder"), "c");
}

TEST_F(QueueTest, ALeavingWaiterHandsItsHandOverOn) {
  ASSERT_TRUE(attempt("a"));
  EXPECT_FALSE(attempt("b"));
  EXPECT_FALSE(attempt("c"));
  hand_over("a-id");
  ASSERT_EQ(detail::find_utf8(*document(), "holder"), "b");
  leave("b");
  EXPECT_EQ(detail::find_utf8(*document(), "holder"), "c");
  EXPECT_EQ(queue(), (Waiters{}));
  leave("c");
  EXPECT_EQ(detail::find_utf8(*document(), "holder"), std::nullopt);
}

TEST_F(QueueTest, AnAttemptOfAWaiterHoldingByHandOverDoesNotQueueIt) {
  ASSERT_TRUE(attempt("a"));
  EXPECT_FALSE(attempt("b"));
  hand_over("a-id");
  EXPECT_FALSE(attempt("b")) << "a later attempt of b must not be granted over b's own hold";
  EXPECT_EQ(detail::find_utf8(*document(), "holder"), "b");
  EXPECT_EQ(queue(), (Waiters{})) << "b was queued behind itself";
}

TEST_F(QueueTest, ATombstonedAttemptThatRunsLateDoesNotQueueItsWaiter) {
  ASSERT_TRUE(attempt("a"));
  tombstone("late-id");
  EXPECT_FALSE(attempt("late"));
  EXPECT_EQ(queue(), (Waiters{}));
  hand_over("a-id");
  EXPECT_EQ(detail::find_utf8(*document(), "holder"), std::nullopt);
}

}  // namespace
}  // namespace mongolock::test
