// ReleaseWatcher (lib/src/release_watcher.h) on its own: the two gaps a notify waiter could
// fall into, each made to happen on purpose, against a one-member mongosim and libmongoc's
// change stream.
//  - A release dispatched between a waiter's refused attempt and its registration: the test
//    plays the waiter (reads state(), lets the event arrive, then registers) so the gap is
//    certain, where a whole acquire only falls into it by chance.
//  - A stream whose member stops answering without closing the connection (SIGSTOP): a waiter
//    counting on it returns from its wait and polls. With one member the stream cannot move
//    elsewhere, so the silence is the stream's own.
// Model: the waiter's steps are this test's calls, not an acquire loop (NotifyWaiter makes the
// same calls in the same order: state() before its first attempt, then register_waiter() and
// missed_since()); a stop is a SIGSTOP of the whole member, not a network that drops packets
// (the driver sees the same silent socket).
#include "release_watcher.h"

#include <gtest/gtest.h>
#include <mongoc/mongoc.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>

#include "bson_ptr.h"
#include "context.h"
#include "test_server.h"

namespace mongolock::test {
namespace {

using detail::ReleaseWatcher;

constexpr const char* kCollection = "locks";
constexpr const char* kProvider = "provider-A";
constexpr int64_t kAwaitMs = 200;  // stale after 3 x 200 ms + 1 s

struct PoolDeleter {
  void operator()(mongoc_client_pool_t* pool) const { mongoc_client_pool_destroy(pool); }
};
using Pool = std::unique_ptr<mongoc_client_pool_t, PoolDeleter>;

Pool pool_for(const std::string& uri) {
  mongoc_init();
  mongoc_uri_t* parsed = mongoc_uri_new(uri.c_str());
  Pool pool(mongoc_client_pool_new(parsed));
  mongoc_uri_destroy(parsed);
  return pool;
}

ReleaseWatcher::Params params(mongoc_client_pool_t* pool, const std::string& db) {
  ReleaseWatcher::Params p;
  p.pool = pool;
  p.database = db;
  p.collection = kCollection;
  p.provider_id = kProvider;
  p.await_ms = kAwaitMs;
  p.reopen_pause_ms = 100;
  return p;
}

// A lock document with no holder whose queue starts with `waiter` of Provider `provider`: the
// shape a release leaves when that waiter is next.
void release_to(ReplicaSet& set, const std::string& db, const std::string& name,
                const std::string& provider, const std::string& waiter) {
  set.member(0).command(
      db, R"({"update": ")" + std::string(kCollection) + R"(", "updates": [{"q": {"_id": ")" +
              name + R"("}, "u": {"_id": ")" + name + R"(", "holder": null, "queue": [{"p": ")" +
              provider + R"(", "w": ")" + waiter + R"("}]}, "upsert": true}]})");
}

// An update that changes the token and names `waiter` of `provider` in grantW / grantP, held by
// `holder`: a hand-over when holder == waiter (the shape a notify release leaves).
void set_grant(ReplicaSet& set, const std::string& db, const std::string& name,
               const std::string& provider, const std::string& waiter, const std::string& holder,
               int64_t token) {
  set.member(0).command(db, R"({"update": ")" + std::string(kCollection) +
                                R"(", "updates": [{"q": {"_id": ")" + name +
                                R"("}, "u": {"$set": {"holder": ")" + holder + R"(", "grantW": ")" +
                                waiter + R"(", "grantP": ")" + provider + R"(", "token": )" +
                                std::to_string(token) + R"(}}}]})");
}

// The same, as a replacement of the whole document (how a pipeline update that rewrote most of a
// small document is logged and streamed).
void replace_with_grant(ReplicaSet& set, const std::string& db, const std::string& name,
                        const std::string& provider, const std::string& waiter, int64_t token) {
  set.member(0).command(db, R"({"update": ")" + std::string(kCollection) +
                                R"(", "updates": [{"q": {"_id": ")" + name +
                                R"("}, "u": {"_id": ")" + name + R"(", "holder": ")" + waiter +
                                R"(", "grantW": ")" + waiter + R"(", "grantP": ")" + provider +
                                R"(", "token": )" + std::to_string(token) + R"(}}]})");
}

// An update of the document that grants nothing (an attempt refreshing its queue entry).
void touch(ReplicaSet& set, const std::string& db, const std::string& name, int n) {
  set.member(0).command(
      db, R"({"update": ")" + std::string(kCollection) + R"(", "updates": [{"q": {"_id": ")" +
              name + R"("}, "u": {"$set": {"touched": )" + std::to_string(n) + R"(}}}]})");
}

// The member's operationTime now, as a ClusterTime: what a Provider knows after a reply.
detail::ClusterTime cluster_time_now(ReplicaSet& set) {
  const nlohmann::json reply = set.member(0).command("admin", R"({"ping": 1})");
  const nlohmann::json& time = reply.at("operationTime").at("$timestamp");
  return (time.at("t").get<detail::ClusterTime>() << 32) | time.at("i").get<detail::ClusterTime>();
}

bool thread_named(const std::string& name) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string line;
    if (std::getline(comm, line) && line == name) return true;
  }
  return false;
}

class ReleaseWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = start_server();
    if (server_ == nullptr) GTEST_SKIP() << "mongosim is not part of this build (MONGOSIM_PATH)";
    pool_ = pool_for(server_->uri());
  }
  // Registers `waiter` and waits until the stream is open.
  std::unique_ptr<ReleaseWatcher::Registration> register_streaming(ReleaseWatcher& watcher,
                                                                   const std::string& waiter) {
    auto registration = watcher.register_waiter(waiter);
    EXPECT_NE(registration, nullptr);
    EXPECT_TRUE(poll_until(after(kEventually), [&] { return registration->streaming(); }))
        << "the stream never opened";
    return registration;
  }
  std::unique_ptr<ReplicaSet> server_;
  Pool pool_;
  std::string db_ = fresh_database();
};

TEST_F(ReleaseWatcherTest, AReleaseBeforeTheWaiterRegisteredMakesItAttemptAgainAtOnce) {
  ReleaseWatcher watcher(params(pool_.get(), db_));
  auto early = register_streaming(watcher, "early");
  EXPECT_TRUE(thread_named("mongolock-watch"));
  // "late" reads the state, its attempt is refused (not modelled), and before it registers the
  // lock is released to it.
  const ReleaseWatcher::State before = watcher.state();
  ASSERT_TRUE(before.streaming);
  EXPECT_FALSE(watcher.missed_since(before));
  release_to(*server_, db_, "L", kProvider, "late");
  ASSERT_TRUE(poll_until(after(kEventually), [&] {
    return watcher.state().unclaimed > before.unclaimed;
  })) << "the release to a waiter not registered here was never counted";
  auto late = watcher.register_waiter("late");
  ASSERT_NE(late, nullptr);
  EXPECT_TRUE(watcher.missed_since(before)) << "the waiter would sleep out its turn";
  EXPECT_EQ(late->wakes(), 0U);

  // A release to a registered waiter wakes that waiter and is nobody's missed event.
  const ReleaseWatcher::State quiet = watcher.state();
  const uint64_t seen = early->wakes();
  release_to(*server_, db_, "M", kProvider, "early");
  ASSERT_TRUE(poll_until(after(kEventually), [&] { return early->wakes() != seen; }))
      << "the release did not wake its waiter";
  EXPECT_EQ(watcher.state().unclaimed, quiet.unclaimed);
  EXPECT_FALSE(watcher.missed_since(quiet));
}

// A stream opens at its waiters' cluster time: it delivers a release made after that time but
// before it opened, and its opening wakes none of the waiters it covers; a waiter that
// registers afterwards is covered when its cluster time is at or above the stream's start, not
// when it is below it or unknown. "Did not wake" is bounded by a later event that does wake:
// one stream delivers events in order, after its opening.
// Model: the waiters' attempts are not made (a member's operationTime stands for the one an
// attempt's reply carries); one member, so no failover moves the stream and no write rolls
// back.
TEST_F(ReleaseWatcherTest, AStreamStartsAtItsWaitersClusterTimeAndWakesNoneOfThemForOpening) {
  ReleaseWatcher watcher(params(pool_.get(), db_));
  const ReleaseWatcher::State before = watcher.state();
  const detail::ClusterTime earlier = cluster_time_now(*server_);
  release_to(*server_, db_, "K", "provider-B", "x");  // a write: the member's time moves on
  const detail::ClusterTime known = cluster_time_now(*server_);
  ASSERT_LT(earlier, known);
  release_to(*server_, db_, "L", kProvider, "w");  // after both times, before any stream
  // The stream starts at the smaller: v is covered only by that. v registers first (it starts
  // the watcher's thread), so the start is v's whether or not w registered before the opening.
  auto v = watcher.register_waiter("v", earlier);
  auto w = watcher.register_waiter("w", known);
  ASSERT_TRUE(v && w);
  ASSERT_TRUE(poll_until(after(kEventually), [&] { return w->wakes() != 0; }))
      << "the release made before the stream opened, after the waiters' time, was missed";
  EXPECT_TRUE(w->streaming());
  EXPECT_EQ(w->wakes(), 1U) << "the opening woke a waiter it covers";
  release_to(*server_, db_, "M", kProvider, "w");
  ASSERT_TRUE(poll_until(after(kEventually), [&] { return w->wakes() == 2; }));
  EXPECT_EQ(v->wakes(), 0U) << "the opening woke a waiter it covers";

  // Registering now, after attempts made before the stream opened (`before`).
  EXPECT_FALSE(watcher.missed_since(before, earlier));
  EXPECT_FALSE(watcher.missed_since(before, known));
  EXPECT_TRUE(watcher.missed_since(before, earlier - 1)) << "the stream starts after its attempt";
  EXPECT_TRUE(watcher.missed_since(before, 0)) << "a waiter with no cluster time is not covered";
}

// A reply's operation time is that of a write acknowledged by a majority: the write's own
// timestamp, after what the member had applied before it, at most what it has applied after it.
// Reads and writes at w: 1 carry none (a w: 1 write can roll back).
TEST_F(ReleaseWatcherTest, AMajorityWritesReplyCarriesItsOperationTime) {
  Options options;
  options.create_index = false;  // no background writes of its own
  detail::Context context(server_->uri(), db_, options);
  const auto update = [] {
    return detail::Bson(BCON_NEW("update", BCON_UTF8(kCollection), "updates", "[", "{", "q", "{",
                                 "_id", BCON_UTF8("T"), "}", "u", "{", "$inc", "{", "n",
                                 BCON_INT32(1), "}", "}", "upsert", BCON_BOOL(true), "}", "]"));
  };
  const detail::Reply read = context.read(*detail::Bson(BCON_NEW("find", BCON_UTF8(kCollection))));
  ASSERT_EQ(read.outcome, detail::Outcome::kOk) << read.message;
  EXPECT_EQ(read.operation_time, 0U) << "a read's operationTime counted";
  const detail::ClusterTime before = cluster_time_now(*server_);
  const detail::Reply reply = context.write(*update());
  ASSERT_EQ(reply.outcome, detail::Outcome::kOk) << reply.message;
  EXPECT_GT(reply.operation_time, before) << "the write's operationTime was not taken";
  EXPECT_LE(reply.operation_time, cluster_time_now(*server_));

  options.write_concern = WriteConcern::members(1);
  detail::Context w1(server_->uri(), db_, options);
  const detail::Reply w1_reply = w1.write(*update());
  ASSERT_EQ(w1_reply.outcome, detail::Outcome::kOk) << w1_reply.message;
  EXPECT_EQ(w1_reply.operation_time, 0U) << "a w: 1 write's operationTime counted";
}

// A stream whose start is refused (here: the fail point answers ChangeStreamHistoryLost, as a
// start the oplog no longer reaches is answered) opens at once at the member's newest entry, and
// that opening wakes every waiter to attempt again under it.
TEST_F(ReleaseWatcherTest, AStreamWhoseStartIsRefusedOpensAtTheNewestEntryAndWakesEveryWaiter) {
  server_->member(0).command("admin", R"({"configureFailPoint": "failCommand",
      "mode": {"times": 1}, "data": {"failCommands": ["aggregate"], "errorCode": 286}})");
  ReleaseWatcher watcher(params(pool_.get(), db_));
  auto w = watcher.register_waiter("w", cluster_time_now(*server_));
  ASSERT_NE(w, nullptr);
  ASSERT_TRUE(poll_until(after(kEventually), [&] { return w->streaming(); }))
      << "no stream opened after the refused start";
  EXPECT_EQ(w->wakes(), 1U) << "a waiter the new stream does not cover was not woken";
  const nlohmann::json fail_point = server_->member(0).command(
      "admin", R"({"configureFailPoint": "failCommand", "mode": "off"})");
  EXPECT_EQ(fail_point.value("count", -1), 1) << "the start was never refused";
}

// Only a hand-over to a waiter of this Provider, still held by it, wakes that waiter, with the
// token. Each check of "did not wake" is bounded by a later hand-over to another waiter that
// does wake: one stream delivers events in order.
TEST_F(ReleaseWatcherTest, AHandOverWakesItsWaiterWithItsTokenAndNothingElseDoes) {
  ReleaseWatcher watcher(params(pool_.get(), db_));
  auto w = register_streaming(watcher, "w");
  auto v = register_streaming(watcher, "v");
  release_to(*server_, db_, "L", "provider-B", "x");  // the document, no event for here
  // The stream's opening woke w already (every waiter registered before it opened).
  const uint64_t w_opened = w->wakes();
  set_grant(*server_, db_, "L", kProvider, "w", "w", 5);
  ASSERT_TRUE(poll_until(after(kEventually), [&] { return w->wakes() != w_opened; }))
      << "the hand-over did not wake its waiter";
  EXPECT_EQ(w->take_grant(), 5);
  EXPECT_EQ(w->take_grant(), std::nullopt) << "a hand-over is taken once";

  uint64_t w_seen = w->wakes();
  int64_t token = 6;
  // Not hand-overs to w of this Provider: an update that changes no token, one to w's id in
  // another Provider, one whose document is held by someone else by the time it is read.
  const auto expect_no_wake = [&](const char* what) {
    const uint64_t v_seen = v->wakes();
    set_grant(*server_, db_, "L", kProvider, "v", "v", ++token);
    ASSERT_TRUE(poll_until(after(kEventually), [&] { return v->wakes() != v_seen; }));
    EXPECT_EQ(v->take_grant(), token);
    EXPECT_EQ(w->wakes(), w_seen) << what;
    EXPECT_EQ(w->take_grant(), std::nullopt) << what;
  };
  touch(*server_, db_, "L", 1);
  expect_no_wake("an update that granted nothing");
  replace_with_grant(*server_, db_, "L", kProvider, "w", ++token);
  ASSERT_TRUE(poll_until(after(kEventually), [&] { return w->wakes() != w_seen; }))
      << "a hand-over logged as a replacement did not wake its waiter";
  EXPECT_EQ(w->take_grant(), token);
  const uint64_t w_replaced = w->wakes();
  replace_with_grant(*server_, db_, "L", kProvider, "w", token);  // a write while w holds
  {
    const uint64_t v_seen = v->wakes();
    set_grant(*server_, db_, "L", kProvider, "v", "v", ++token);
    ASSERT_TRUE(poll_until(after(kEventually), [&] { return v->wakes() != v_seen; }));
    EXPECT_EQ(w->wakes(), w_replaced) << "the same hand-over woke its waiter twice";
    EXPECT_EQ(w->take_grant(), std::nullopt);
  }
  w_seen = w->wakes();
  set_grant(*server_, db_, "L", "provider-B", "w", "w", ++token);
  expect_no_wake("a hand-over to another Provider's waiter");
  set_grant(*server_, db_, "L", kProvider, "w", "someone-else", ++token);
  expect_no_wake("a hand-over no longer held by its waiter");
}

// A hand-over seen in a release's reply (handed_over_by_release) wakes its waiter at once, with
// the token, and the stream's event for the same hand-over does not wake it again; nor does a
// reply that comes after the stream delivered it. "Did not wake" is bounded as above, by a later
// hand-over to another waiter that does wake.
TEST_F(ReleaseWatcherTest, AHandOverFromAReleaseReplyAndTheStreamWakesItsWaiterOnce) {
  ReleaseWatcher watcher(params(pool_.get(), db_));
  auto w = register_streaming(watcher, "w");
  auto v = register_streaming(watcher, "v");
  release_to(*server_, db_, "L", "provider-B", "x");  // the document, no event for here
  int64_t token = 10;
  const auto bounded_by_v = [&] {
    const uint64_t v_seen = v->wakes();
    set_grant(*server_, db_, "L", kProvider, "v", "v", ++token);
    ASSERT_TRUE(poll_until(after(kEventually), [&] { return v->wakes() != v_seen; }));
    EXPECT_EQ(v->take_grant(), token);
  };
  // The reply first, then the stream.
  uint64_t w_seen = w->wakes();
  watcher.handed_over_by_release("L", "w", ++token);
  EXPECT_EQ(w->wakes(), w_seen + 1) << "the reply did not wake its waiter";
  EXPECT_EQ(w->take_grant(), token);
  w_seen = w->wakes();
  set_grant(*server_, db_, "L", kProvider, "w", "w", token);
  bounded_by_v();
  EXPECT_EQ(w->wakes(), w_seen) << "the stream woke the waiter for a hand-over it had";
  EXPECT_EQ(w->take_grant(), std::nullopt);
  // The stream first, then the reply.
  set_grant(*server_, db_, "L", kProvider, "w", "w", ++token);
  ASSERT_TRUE(poll_until(after(kEventually), [&] { return w->wakes() != w_seen; }));
  EXPECT_EQ(w->take_grant(), token);
  w_seen = w->wakes();
  watcher.handed_over_by_release("L", "w", token);
  EXPECT_EQ(w->wakes(), w_seen) << "the reply woke the waiter for a hand-over it had";
  EXPECT_EQ(w->take_grant(), std::nullopt);
}

// A reply's hand-over to a waiter not registered yet is a missed event for a waiter that
// registers next, whether or not a stream is open (here none ever opened: nobody registered).
TEST_F(ReleaseWatcherTest, AReplyHandOverBeforeTheWaiterRegisteredMakesItAttemptAgain) {
  ReleaseWatcher watcher(params(pool_.get(), db_));
  const ReleaseWatcher::State before = watcher.state();
  ASSERT_FALSE(before.streaming);
  watcher.handed_over_by_release("L", "late", 3);
  EXPECT_GT(watcher.state().unclaimed, before.unclaimed);
  EXPECT_TRUE(watcher.missed_since(before)) << "the waiter would sleep out its hand-over";
  const ReleaseWatcher::State after_it = watcher.state();
  EXPECT_FALSE(watcher.missed_since(after_it));
}

TEST_F(ReleaseWatcherTest, AWaiterCountingOnAStreamThatFallsSilentReturnsToPoll) {
  ReleaseWatcher watcher(params(pool_.get(), db_));
  auto waiter = register_streaming(watcher, "w");
  const uint64_t seen = waiter->wakes();
  server_->pause(0);
  std::atomic<bool> returned{false};
  std::stop_source stop;
  std::thread waiting([&] {
    // A wait far longer than the test: only the staleness check ends it in time.
    waiter->wait(seen, std::chrono::steady_clock::now() + std::chrono::minutes(10),
                 stop.get_token());
    returned = true;
  });
  const bool ended = poll_until(after(kEventually), [&] { return returned.load(); });
  // Read while the member is still stopped: the wait ended without a wake, the stream stale.
  const uint64_t wakes_then = waiter->wakes();
  const bool streaming_then = waiter->streaming();
  stop.request_stop();
  waiting.join();
  server_->resume(0);
  EXPECT_TRUE(ended) << "the waiter slept on a silent stream";
  EXPECT_EQ(wakes_then, seen);
  EXPECT_FALSE(streaming_then);
  // Once the member answers again the stream is counted on again.
  EXPECT_TRUE(poll_until(after(kEventually), [&] { return waiter->streaming(); }))
      << "the stream never came back";
}

}  // namespace
}  // namespace mongolock::test
