// The notify wait (Backoff::kNotify, mongolock.h [notify]) end to end: real Providers, real
// threads, libmongoc's change stream against mongosim. A waiter is woken by the release (its own
// timers are set far beyond the test's timeouts, so an acquire that returns in time was woken),
// waiters are granted in arrival order, a release hands the lock to the waiter whose lease clock
// started before it, a waiter that gives up leaves the queue, a head that never comes holds a
// hand-over for its lease (or, an entry of an earlier version, is passed after the grace), a stream
// the server refuses leaves waiters polling, and on three members a waiter still hears the release
// after the primary stepped down. A Provider whose URI's socket timeout is shorter than the
// stream's wait still ends.
//
// Model: mongosim members on one host; waiters in one process (each its own Provider unless
// said). Left out: a network partition between a waiter and the set (the stream then breaks
// and the waiter polls: the polling path is tested by the refused stream), waiters in several
// processes (bench/lockbench measures those), a crash of a waiter's process while queued (a
// head that never comes is modelled by an entry nobody refreshes), an unknown outcome of the
// extension a late hand-over makes (its resolution and the call's new waiter id are made to
// happen by an extension answered after its lease, which takes the same path), a waiter paused
// past its hand-over's lease and handed the lock again (the stale-token rule is tested on its own
// in hand_over_clock_test.cpp). A release dispatched between a waiter's first attempt and its
// registration, a hand-over logged as a replacement, and a stream whose member falls silent without
// closing it, are made to happen in release_watcher_test.cpp (here they would happen only by
// chance).
#include <gtest/gtest.h>
#include <mongoc/mongoc.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "bson_ptr.h"
#include "commands.h"
#include "test_server.h"

namespace mongolock::test {
namespace {

using std::chrono::milliseconds;

// Timers no test outlives: a waiter that was not woken attempts again only after these.
constexpr int64_t kLongExpiryMs = 60'000;
constexpr int64_t kLongGraceMs = 40'000;

Options notify_options(const std::string& app) {
  Options options;
  options.create_index = false;
  options.backoff = Backoff::kNotify;
  options.expiry_ms = kLongExpiryMs;
  // The grace, and every sleep of a waiter that polls: only a wake-up is in time.
  options.busy_wait_min_ms = kLongGraceMs;
  options.busy_wait_max_ms = kLongGraceMs;
  options.app_name = app;
  return options;
}

// An acquire waiting on its own thread, with no timeout of its own: the test judges whether it
// was granted within kEventually (a wake-up takes milliseconds; a waiter that was not woken
// attempts again only after its long timers). The destructor cancels an acquire still waiting.
class WaitingAcquire {
 public:
  explicit WaitingAcquire(Lock lock) : lock_(std::move(lock)), thread_([this] { run(); }) {}
  ~WaitingAcquire() {
    stop_.request_stop();
    thread_.join();
  }
  // Whether the acquire was granted by `deadline`.
  bool granted_by(locklab::testkit::Deadline deadline) {
    return poll_until(deadline, [this] { return granted_.load(); });
  }
  // Releases the hold once granted (the next waiter's turn).
  void release() {
    std::lock_guard guard(mutex_);
    if (handle_) handle_->release();
  }
  // The granted hold's lease deadline, and whether it was lost, as acquire returned it (call
  // once granted_by() was true).
  std::chrono::steady_clock::time_point deadline() {
    std::lock_guard guard(mutex_);
    EXPECT_TRUE(handle_.has_value());
    return deadline_at_grant_;
  }
  bool lost_at_grant() {
    std::lock_guard guard(mutex_);
    return lost_at_grant_;
  }
  std::chrono::steady_clock::time_point returned_at() {
    std::lock_guard guard(mutex_);
    return returned_at_;
  }

 private:
  void run() {
    try {
      Handle handle = lock_.acquire(std::chrono::minutes(10), stop_.get_token());
      const auto returned = std::chrono::steady_clock::now();
      std::lock_guard guard(mutex_);
      returned_at_ = returned;
      // As acquire returned it, before the hold's background work can change it.
      lost_at_grant_ = handle.lost();
      deadline_at_grant_ = handle.lease_deadline();
      handle_ = std::move(handle);
      granted_ = true;
    } catch (const Cancelled&) {
    }
  }
  Lock lock_;
  std::stop_source stop_;
  std::mutex mutex_;
  std::optional<Handle> handle_;
  std::chrono::steady_clock::time_point deadline_at_grant_{};
  std::chrono::steady_clock::time_point returned_at_{};
  bool lost_at_grant_ = false;
  std::atomic<bool> granted_{false};
  std::thread thread_;
};

// The waiters (w) of the lock document's queue, read with a client of its own.
std::vector<std::string> queued(const std::string& uri, const std::string& db,
                                const std::string& collection, const std::string& name) {
  mongoc_client_t* client = mongoc_client_new(uri.c_str());
  detail::Bson filter(BCON_NEW("_id", BCON_UTF8(name.c_str())));
  mongoc_collection_t* coll = mongoc_client_get_collection(client, db.c_str(), collection.c_str());
  mongoc_cursor_t* cursor = mongoc_collection_find_with_opts(coll, filter.get(), nullptr, nullptr);
  std::vector<std::string> waiters;
  const bson_t* doc = nullptr;
  while (mongoc_cursor_next(cursor, &doc)) {
    detail::for_each_document(*doc, "queue", [&](const bson_t& entry) {
      waiters.push_back(detail::find_utf8(entry, "w").value_or("?"));
      return true;
    });
  }
  mongoc_cursor_destroy(cursor);
  mongoc_collection_destroy(coll);
  mongoc_client_destroy(client);
  return waiters;
}

class NotifyTest : public FailPointTest {
 protected:
  std::vector<std::string> queue_of(const std::string& name) {
    return queued(server_->uri(), db_, Options().collection, name);
  }
  // Waits until the lock's queue holds `count` waiters.
  void wait_for_queue(const std::string& name, size_t count) {
    ASSERT_TRUE(poll_until(after(kEventually), [&] { return queue_of(name).size() == count; }))
        << "the queue never reached " << count << " waiters";
  }
  std::string db_ = fresh_database();
};

TEST_F(NotifyTest, AReleaseHandsTheLockToTheWaiter) {
  Provider holder(server_->uri(), db_, notify_options("notify-holder"));
  Provider waiter(server_->uri(), db_, notify_options("notify-waiter"));
  Handle held = holder.create_lock("L").acquire(milliseconds(5000));
  const int64_t attempts_before = server_->member(0).command_total("findAndModify");
  WaitingAcquire waiting(waiter.create_lock("L"));
  wait_for_queue("L", 1);
  const std::string waiter_id = queue_of("L").at(0);
  EXPECT_TRUE(held.release());
  ASSERT_TRUE(waiting.granted_by(after(kEventually))) << "the hand-over did not reach the waiter";
  // The hold is the release's hand-over (its id is the waiter's), not a later attempt's grant.
  detail::Bson doc = read_lock_document(server_->uri(), db_, Options().collection, "L");
  EXPECT_EQ(detail::find_utf8(*doc, "holder"), waiter_id) << detail::to_json(*doc);
  // Its attempts: only the one that queued it. Its Provider's stream opens at that attempt's
  // cluster time (release_watcher.h), so the opening asks for no second one, and the stream
  // delivers the release wherever it falls (before the opening, after it); none after the
  // release (itself a findAndModify, not counted).
  const int64_t attempts = server_->member(0).command_total("findAndModify") - attempts_before - 1;
  EXPECT_EQ(attempts, 1);
  EXPECT_TRUE(queue_of("L").empty());
}

// The waiter's lease clock starts before the hand-over: its deadline is no later than the
// release's return plus the lease (the server's lease starts when the release runs), and no
// earlier than the waiting call's start plus the lease (its anchor is one of its attempts).
TEST_F(NotifyTest, AHandedOverLeaseStartsBeforeTheHandOver) {
  const Options options = notify_options("anchor");
  const auto lease = milliseconds(options.expiry_ms - options.expiry_ms / 10);
  Provider holder(server_->uri(), db_, options);
  Provider waiter(server_->uri(), db_, options);
  Handle held = holder.create_lock("L").acquire(milliseconds(5000));
  const auto waiting_from = std::chrono::steady_clock::now();
  WaitingAcquire waiting(waiter.create_lock("L"));
  wait_for_queue("L", 1);
  EXPECT_TRUE(held.release());
  const auto released = std::chrono::steady_clock::now();
  ASSERT_TRUE(waiting.granted_by(after(kEventually)));
  EXPECT_LE(waiting.deadline(), released + lease);
  EXPECT_GE(waiting.deadline(), waiting_from + lease);
}

// A hand-over late in the waiter's lease clock (its last attempt was longer ago than the lease
// less the margin: the holder held that long) is extended before acquire returns it, so the
// hold does not come back lost. Model: the holder's hold is a length of time the test waits out
// (an input of the scenario, not a synchronisation); the hold is judged as acquire returned it,
// before its Lease's own overdue extension can move its deadline.
TEST_F(NotifyTest, AHandOverLateInTheLeaseIsExtendedBeforeItIsReturned) {
  Options options = notify_options("late-hand-over");
  options.expiry_ms = 2000;  // margin 200 ms; the waiter's own timers stay long (40 s)
  const auto lease = milliseconds(options.expiry_ms - options.expiry_ms / 10);
  Provider holder(server_->uri(), db_, options);
  Provider waiter(server_->uri(), db_, options);
  Handle held = holder.create_lock("L").acquire(milliseconds(5000));
  WaitingAcquire waiting(waiter.create_lock("L"));
  wait_for_queue("L", 1);
  const auto queued_at = std::chrono::steady_clock::now();
  std::this_thread::sleep_until(queued_at + milliseconds(options.expiry_ms * 5 / 4));
  ASSERT_FALSE(held.lost()) << "the holder's extensions did not keep it";
  const auto releasing = std::chrono::steady_clock::now();
  EXPECT_TRUE(held.release());
  ASSERT_TRUE(waiting.granted_by(after(kEventually)));
  EXPECT_FALSE(waiting.lost_at_grant()) << "the hold came back lost";
  EXPECT_GE(waiting.deadline(), releasing + lease)
      << "the hold came back with the lease of the waiter's last attempt";
}

// A hand-over whose extension (it came late in the waiter's lease clock) is answered only after
// the lease that extension started has ended on the client's clock is handed back, not returned
// lost: the call waits on as a new waiter and gets a hold of its own. Model: the slow answer is a
// failCommand that holds the waiter's update (the claim's extension: its attempts are
// findAndModify) for longer than the client's lease, yet less than the server's lease left (the
// extension runs within it and extends, when the waiter claims within 3 s of the hand-over);
// the holder's hold is a length of time the test waits out. Left out: a slow pool (the same
// path, reached another way).
TEST_F(NotifyTest, AHandOverWhoseExtensionIsAnsweredAfterItsLeaseIsHandedBack) {
  Options options = notify_options("late-extension");
  // Client lease 6 s, the server's 10 s: the extension, held 7 s, is answered a second after the
  // client's lease ended and runs within the server's if the waiter claims within 3 s of the
  // hand-over (milliseconds normally; room for a slow, sanitized run).
  options.expiry_ms = 10'000;
  options.lost_safety_margin_ms = 4000;
  Provider holder(server_->uri(), db_, options);
  options.app_name = "late-extension-waiter";
  Provider waiter(server_->uri(), db_, options);
  Handle held = holder.create_lock("L").acquire(milliseconds(5000));
  WaitingAcquire waiting(waiter.create_lock("L"));
  wait_for_queue("L", 1);
  const std::string first_id = queue_of("L").at(0);
  // Less than half the lease (5 s) left of the client's 6 s since the waiter's last attempt:
  // its claim extends first.
  std::this_thread::sleep_until(std::chrono::steady_clock::now() + milliseconds(1500));
  server_->member(0).command("admin",
                             R"({"configureFailPoint": "failCommand", "mode": {"times": 1}, "data":
      {"failCommands": ["update"], "blockConnection": true, "blockTimeMS": 7000,
       "appName": "late-extension-waiter"}})");
  ASSERT_FALSE(held.lost());
  EXPECT_TRUE(held.release());
  ASSERT_TRUE(waiting.granted_by(after(kEventually)));
  EXPECT_FALSE(waiting.lost_at_grant()) << "the hold came back lost";
  EXPECT_GT(waiting.deadline(), waiting.returned_at()) << "the hold came back past its lease";
  const detail::Bson doc = read_lock_document(server_->uri(), db_, Options().collection, "L");
  EXPECT_NE(detail::find_utf8(*doc, "holder"), first_id)
      << "the call kept the hand-over it should have handed back: " << detail::to_json(*doc);
}

// A call refused before its first attempt is sent (the collection's reap index is shorter than
// the Provider's reap: the index check refuses it) was never queued: it sends no leave, nor the
// tombstone that follows a failed one (mongolock.h: it "throws Error before any round trip").
TEST_F(NotifyTest, ACallRefusedBeforeItsFirstAttemptSendsNoLeave) {
  server_->member(0).command(db_, R"({"createIndexes": ")" + Options().collection +
                                      R"(", "indexes": [{"key": {"reapAt": 1}, "name":
      "mongolock_reap", "expireAfterSeconds": 0}]})");
  Provider waiter(server_->uri(), db_, notify_options("refused-waiter"));
  const int64_t updates_before = server_->member(0).command_total("update");
  const int64_t attempts_before = server_->member(0).command_total("findAndModify");
  EXPECT_THROW(waiter.create_lock("L").try_acquire(), Error);
  EXPECT_EQ(server_->member(0).command_total("findAndModify"), attempts_before)
      << "the refused call sent an attempt";
  EXPECT_EQ(server_->member(0).command_total("update"), updates_before)
      << "the refused call sent a leave (or its tombstone)";
}

// Waiters queued one after another (each waits until the one before is queued) are granted in
// that order, whether they share a Provider or not: each is woken by the release of the one
// before (its own timers are far longer than kEventually).
void expect_arrival_order(const std::string& uri, const std::string& db, bool one_provider) {
  constexpr int kWaiters = 4;
  Provider holder(uri, db, notify_options("order-holder"));
  Provider shared(uri, db, notify_options("order-shared"));
  std::vector<std::unique_ptr<Provider>> own;
  std::vector<std::unique_ptr<WaitingAcquire>> waiters;
  Handle held = holder.create_lock("L").acquire(milliseconds(5000));
  for (int i = 0; i < kWaiters; ++i) {
    own.push_back(
        std::make_unique<Provider>(uri, db, notify_options("order-" + std::to_string(i))));
    Provider& provider = one_provider ? shared : *own.back();
    waiters.push_back(std::make_unique<WaitingAcquire>(provider.create_lock("L")));
    ASSERT_TRUE(poll_until(after(kEventually), [&] {
      return queued(uri, db, Options().collection, "L").size() == static_cast<size_t>(i + 1);
    }));
  }
  held.release();
  for (int i = 0; i < kWaiters; ++i) {
    ASSERT_TRUE(waiters[i]->granted_by(after(kEventually))) << "waiter " << i << " not woken";
    for (int later = i + 1; later < kWaiters; ++later) {
      EXPECT_FALSE(waiters[later]->granted_by(after(milliseconds(0))))
          << "waiter " << later << " was granted before waiter " << i;
    }
    waiters[i]->release();
  }
}

TEST_F(NotifyTest, WaitersOfOneProviderAreGrantedInArrivalOrder) {
  expect_arrival_order(server_->uri(), db_, true);
}

TEST_F(NotifyTest, WaitersOfManyProvidersAreGrantedInArrivalOrder) {
  expect_arrival_order(server_->uri(), db_, false);
}

TEST_F(NotifyTest, AWaiterThatGivesUpLeavesTheQueue) {
  Provider holder(server_->uri(), db_, notify_options("leave-holder"));
  Options quick = notify_options("leave-waiter");
  Provider waiter(server_->uri(), db_, quick);
  Handle held = holder.create_lock("L").acquire(milliseconds(5000));
  EXPECT_FALSE(waiter.create_lock("L").try_acquire(milliseconds(300)).has_value());
  EXPECT_TRUE(queue_of("L").empty()) << "the timed-out waiter is still queued";
}

// A URI whose socketTimeoutMS is shorter than the stream's usual wait (1 s here): each getMore
// must still answer within it, or the driver resumes a timed-out stream forever and the
// Provider's destruction, which waits for the stream, never returns. The waiter's Provider
// lives and dies on a thread of its own that is left behind (detached) if it hangs, so a hang
// fails the test instead of hanging it. (Not a forked child: a fork while the holder's threads
// run can leave a sanitizer's allocator locked in the child.) Left out: a socket timeout
// shorter than a round trip (nothing works then). Run for a Provider on a URI and for one on a
// pool the caller made and lends: the stream's wait is read from the pool's own URI.
void short_socket_timeout_provider_ends(ReplicaSet& server, const std::string& db, bool borrowed) {
  Provider holder(server.uri(), db, notify_options("sockto-holder"));
  Handle held = holder.create_lock("L").acquire(milliseconds(5000));
  auto ended = std::make_shared<std::atomic<int>>(0);  // 1 refused then ended, 2 granted
  std::thread([ended, uri = server.uri("socketTimeoutMS=900"), db, borrowed] {
    bool granted = false;
    mongoc_uri_t* parsed = mongoc_uri_new(uri.c_str());
    mongoc_client_pool_t* pool = borrowed ? mongoc_client_pool_new(parsed) : nullptr;
    mongoc_uri_destroy(parsed);
    {
      auto waiter = borrowed ? std::make_unique<Provider>(pool, db, notify_options("sockto-waiter"))
                             : std::make_unique<Provider>(uri, db, notify_options("sockto-waiter"));
      // Long enough for the stream to open and several getMores to run; refused throughout.
      granted = waiter->create_lock("L").try_acquire(milliseconds(3000)).has_value();
    }  // the Provider ends here, its stream with it
    if (pool != nullptr) mongoc_client_pool_destroy(pool);
    ended->store(granted ? 2 : 1);
  }).detach();
  ASSERT_TRUE(poll_until(after(kEventually), [&] { return ended->load() != 0; }))
      << "the waiter's Provider did not end";
  EXPECT_EQ(ended->load(), 1) << "the waiter was granted a held lock";
}

TEST_F(NotifyTest, AShortSocketTimeoutStillLetsAProviderEnd) {
  short_socket_timeout_provider_ends(*server_, db_, /*borrowed=*/false);
}

TEST_F(NotifyTest, AShortSocketTimeoutStillLetsAProviderOnABorrowedPoolEnd) {
  short_socket_timeout_provider_ends(*server_, db_, /*borrowed=*/true);
}

// A pool of one client (maxPoolSize=1) gets no stream: the stream would keep the only client for
// as long as anyone waits, and the hold's extensions would find none (the hold was lost at its
// first expiry and the waiter, finding no client either, never got the lock). Here the hold is
// extended again and again while a queued waiter on the same pool waits, and the waiter, polling,
// gets the lock once it is released. The two are Providers lending one pool: a waiter of the
// holder's own Provider would wait in its local line, sending nothing.
TEST_F(NotifyTest, AOneClientPoolKeepsItsClientForHoldsAndItsWaitersPoll) {
  Options options = notify_options("pool-of-one");
  options.expiry_ms = 4000;       // a late extension (a slow, sanitized run) does not lapse it
  options.busy_wait_min_ms = 20;  // the polling, and the grace
  options.busy_wait_max_ms = 100;
  mongoc_uri_t* parsed = mongoc_uri_new(server_->uri("maxPoolSize=1").c_str());
  ASSERT_NE(parsed, nullptr);
  mongoc_client_pool_t* pool = mongoc_client_pool_new(parsed);
  mongoc_uri_destroy(parsed);
  std::optional<Provider> holder(std::in_place, pool, db_, options);
  std::optional<Provider> waiter(std::in_place, pool, db_, options);
  Handle held = holder->create_lock("L").acquire(milliseconds(5000));
  std::optional<WaitingAcquire> waiting(std::in_place, waiter->create_lock("L"));
  wait_for_queue("L", 1);
  std::set<std::string> leases;  // the lock document's expiresAt values seen
  const std::string find = R"({"find": ")" + Options().collection + R"(", "filter": {"_id": "L"}})";
  ASSERT_TRUE(poll_until(after(kEventually), [&] {
    leases.insert(
        server_->member(0).command(db_, find)["cursor"]["firstBatch"][0]["expiresAt"].dump());
    return leases.size() >= 4;
  })) << "the hold was not extended while a waiter waited";
  EXPECT_TRUE(held.release()) << "the hold was lost while a waiter waited";
  EXPECT_TRUE(waiting->granted_by(after(kEventually))) << "the polling waiter never got the lock";
  waiting.reset();
  waiter.reset();
  holder.reset();
  mongoc_client_pool_destroy(pool);
}

// A try_acquire that gives up after its one attempt (timeout 0) leaves the queue it joined: else
// the next release would hand the lock to a call that has returned.
TEST_F(NotifyTest, ATryAcquireThatGivesUpAtOnceLeavesNoEntry) {
  Provider holder(server_->uri(), db_, notify_options("try-holder"));
  Provider waiter(server_->uri(), db_, notify_options("try-waiter"));
  Handle held = holder.create_lock("L").acquire(milliseconds(5000));
  EXPECT_FALSE(waiter.create_lock("L").try_acquire().has_value());
  EXPECT_TRUE(queue_of("L").empty()) << "the entry of a call that returned stays queued";
  EXPECT_TRUE(held.release());
  const detail::Bson after = read_lock_document(server_->uri(), db_, Options().collection, "L");
  EXPECT_EQ(detail::find_utf8(*after, "holder"), std::nullopt)
      << "the release handed the lock to a call that had returned";
}

// A waiter that gives up and whose leave is lost (the connection closes under it) tombstones its
// id instead: the entry it could not remove stays queued, but the holder's release does not hand
// the lock to a call that has returned. Model: the lost leave is a failCommand on the waiter's
// own updates (its attempts are findAndModify, so only the leave is hit; the tombstone that
// follows is the second update and passes).
TEST_F(NotifyTest, AWaiterWhoseLeaveIsLostIsNeverHandedTheLock) {
  Provider holder(server_->uri(), db_, notify_options("lost-leave-holder"));
  Provider waiter(server_->uri(), db_, notify_options("lost-leave-waiter"));
  Handle held = holder.create_lock("L").acquire(milliseconds(5000));
  server_->member(0).command("admin",
                             R"({"configureFailPoint": "failCommand", "mode": {"times": 1}, "data":
      {"failCommands": ["update"], "closeConnection": true, "appName": "lost-leave-waiter"}})");
  EXPECT_FALSE(waiter.create_lock("L").try_acquire(milliseconds(300)).has_value());
  const std::vector<std::string> left = queue_of("L");
  ASSERT_EQ(left.size(), 1U) << "the leave was not lost: the failCommand did not hit it";
  const detail::Bson before = read_lock_document(server_->uri(), db_, Options().collection, "L");
  EXPECT_EQ(detail::find_utf8(*before, "tombstones.0.id"), left[0])
      << "the waiter's id was not tombstoned: " << detail::to_json(*before);
  EXPECT_TRUE(held.release());
  const detail::Bson after = read_lock_document(server_->uri(), db_, Options().collection, "L");
  EXPECT_EQ(detail::find_utf8(*after, "holder"), std::nullopt)
      << "the release handed the lock to a call that had returned";
}

// A head that never comes (an entry nobody refreshes, as a waiter that died leaves it), queued
// behind a notify holder with a 2 s lease, and a live waiter queued behind the head. `handed`:
// the head's entry carries its lease, so the holder's release hands it the lock (a hold of
// 2 s nobody uses) and the waiter gets the lock when that lease has lapsed and the grace has
// passed; otherwise (an entry of an earlier version, without x) the release frees the lock and
// the waiter takes it after the grace. Either way the head leaves the queue.
void head_that_never_comes(ReplicaSet& server, const std::string& db, bool handed) {
  Options short_lease = notify_options("ghost-holder");
  short_lease.expiry_ms = 2000;
  Provider holder(server.uri(), db, short_lease);
  Handle held = holder.create_lock("L").acquire(milliseconds(5000));
  const Options defaults;  // the request views its collection name: it must outlive it
  if (handed) {
    // The ghost: queued by a raw attempt of a waiter id no Provider knows, kept for minutes.
    mongoc_client_t* client = mongoc_client_new(server.uri().c_str());
    const Owner owner{"ghost", 1, ""};
    const detail::QueueTicket ticket{"ghost", "no-provider", 600'000, 600'000, 2000, &owner};
    detail::HoldRequest request{defaults.collection, "L", "ghost-id", &owner, 2000, 62'000};
    request.ticket = &ticket;
    detail::BsonReply reply;
    bson_error_t error;
    ASSERT_TRUE(mongoc_client_command_simple(
        client, db.c_str(), detail::acquire_command(request).get(), nullptr, reply.out(), &error))
        << error.message;
    mongoc_client_destroy(client);
  } else {
    server.member(0).command(
        db, R"({"update": ")" + defaults.collection +
                R"(", "updates": [{"q": {"_id": "L"}, "u": [{"$set": {"queue": [{"w": "ghost",
                "p": "no-provider", "until": {"$add": ["$$NOW", 600000]}}]}}]}]})");
  }
  Options waiter_options = notify_options("ghost-waiter");
  waiter_options.busy_wait_min_ms = 1;
  waiter_options.busy_wait_max_ms = 200;  // its grace
  Provider waiter(server.uri(), db, waiter_options);
  WaitingAcquire waiting(waiter.create_lock("L"));
  ASSERT_TRUE(poll_until(after(kEventually), [&] {
    return queued(server.uri(), db, defaults.collection, "L").size() == 2;
  }));
  held.release();
  const detail::Bson released = read_lock_document(server.uri(), db, defaults.collection, "L");
  EXPECT_EQ(detail::find_utf8(*released, "holder"),
            handed ? std::optional<std::string>("ghost") : std::nullopt)
      << detail::to_json(*released);
  ASSERT_TRUE(waiting.granted_by(after(kEventually)))
      << "the ghost at the head kept the lock from every waiter";
  EXPECT_TRUE(queued(server.uri(), db, defaults.collection, "L").empty())
      << "the head that missed its turn is still queued";
}

TEST_F(NotifyTest, AHandOverToAHeadThatNeverComesEndsWithItsLease) {
  head_that_never_comes(*server_, db_, /*handed=*/true);
}

TEST_F(NotifyTest, AHeadOfAnEarlierVersionIsNotHandedTheLockAndIsPassedAfterTheGrace) {
  head_that_never_comes(*server_, db_, /*handed=*/false);
}

// The lock collection dropped while a waiter waits (an operator's cleanup): the server ends the
// stream with an invalidate and the cursor closes (libmongoc then reports that it cannot
// resume). The watcher must see that the stream ended and wake its waiters, who find the lock
// gone and take it.
TEST_F(NotifyTest, ADroppedCollectionEndsTheStreamAndWakesTheWaiters) {
  Provider holder(server_->uri(), db_, notify_options("drop-holder"));
  Provider waiter(server_->uri(), db_, notify_options("drop-waiter"));
  Handle held = holder.create_lock("L").acquire(milliseconds(5000));
  WaitingAcquire waiting(waiter.create_lock("L"));
  wait_for_queue("L", 1);
  // The waiter's stream is open and its getMore waits on the server (mongosim's own count).
  ASSERT_TRUE(poll_until(after(kEventually), [&] {
    return server_->member(0)
               .command("admin",
                        R"({"serverStatus": 1})")["mongosim"]["changeStreamGetMoresWaiting"]
               .get<int64_t>() > 0;
  }));
  server_->member(0).command(db_, R"({"drop": ")" + Options().collection + R"("})");
  EXPECT_TRUE(waiting.granted_by(after(kEventually)))
      << "the waiter slept on a stream the drop had ended";
}

// A server that refuses the stream (failCommand on aggregate): waiters poll with random sleeps
// and still acquire once the lock is free.
TEST_F(NotifyTest, WithoutAStreamWaitersPoll) {
  server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
      "data": {"failCommands": ["aggregate"], "errorCode": 40573, "appName": "nostream-waiter"}})");
  Provider holder(server_->uri(), db_, notify_options("nostream-holder"));
  Options polling = notify_options("nostream-waiter");
  polling.busy_wait_min_ms = 1;
  polling.busy_wait_max_ms = 50;
  Provider waiter(server_->uri(), db_, polling);
  Handle held = holder.create_lock("L").acquire(milliseconds(5000));
  WaitingAcquire waiting(waiter.create_lock("L"));
  wait_for_queue("L", 1);
  const int64_t get_mores = server_->member(0).command_total("getMore");
  held.release();
  ASSERT_TRUE(waiting.granted_by(after(kEventually)));
  EXPECT_EQ(server_->member(0).command_total("getMore"), get_mores)
      << "a refused stream read events";
}

// A release that hands the lock to a waiter of its own Provider wakes that waiter from its
// reply, without the stream. Such a waiter is queued on the server: it asked before its Provider
// held the lock (one that asks while its Provider holds waits in the local line instead,
// local_line_test.cpp). Here the hold is another Provider's, handed over (by the stream) to a first
// waiter of the shared Provider while a second is queued behind it; then the server refuses the
// shared Provider's stream (failCommand on its aggregate and getMore), the second waiter polls
// once (the broken stream wakes it), and its polling sleeps are far longer than kEventually: a
// waiter granted in time was woken by the first's release reply. (Checked to fail with
// Lease::wake_local_grantee returning at once.) Left out: a waiter of another Provider (its
// process hears of the hand-over from its own stream only: NotifyTest.AReleaseHands...).
TEST_F(NotifyTest, AReleaseWakesAWaiterOfItsOwnProviderFromItsReply) {
  Provider other(server_->uri(), db_, notify_options("local-other"));
  Provider shared(server_->uri(), db_, notify_options("local-shared"));
  Handle other_hold = other.create_lock("L").acquire(milliseconds(5000));
  WaitingAcquire first(shared.create_lock("L"));
  wait_for_queue("L", 1);
  WaitingAcquire second(shared.create_lock("L"));
  wait_for_queue("L", 2);
  const std::string second_id = queue_of("L").at(1);
  EXPECT_TRUE(other_hold.release());
  ASSERT_TRUE(first.granted_by(after(kEventually))) << "the stream did not wake the first waiter";
  const int64_t attempts = server_->member(0).command_total("findAndModify");
  server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
      "data": {"failCommands": ["aggregate", "getMore"], "errorCode": 40573,
               "appName": "local-shared"}})");
  // The stream breaks at its next getMore and wakes the second waiter, which attempts once.
  ASSERT_TRUE(poll_until(after(kEventually), [&] {
    return server_->member(0).command_total("findAndModify") > attempts;
  })) << "the refused stream never woke the queued waiter";
  const int64_t get_mores = server_->member(0).command_total("getMore");
  first.release();
  ASSERT_TRUE(second.granted_by(after(kEventually))) << "the release's reply woke nobody";
  detail::Bson doc = read_lock_document(server_->uri(), db_, Options().collection, "L");
  EXPECT_EQ(detail::find_utf8(*doc, "holder"), second_id) << detail::to_json(*doc);
  EXPECT_EQ(server_->member(0).command_total("getMore"), get_mores)
      << "a refused stream read events";
}

// A notify release is a findAndModify, which libmongoc's write helper would send a second time
// after a network error; mongolock sends it once, like every release (mongolock.h "Bounds": one
// round trip is P + S + T). Model: the connection closes under the release (failCommand
// closeConnection, once, on the holder's own app: its next findAndModify is the release).
TEST_F(NotifyTest, ANotifyReleaseIsSentOnce) {
  Provider holder(server_->uri(), db_, notify_options("once-holder"));
  Handle held = holder.create_lock("L").acquire(milliseconds(5000));
  server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
      "data": {"failCommands": ["findAndModify"], "closeConnection": true, "appName": "once-holder"}})");
  const int64_t sent_before = server_->member(0).command_total("findAndModify");
  EXPECT_FALSE(held.release()) << "a release whose connection closed reported a removed hold";
  EXPECT_EQ(server_->member(0).command_total("findAndModify") - sent_before, 1)
      << "the release was sent again";
}

// Three members: the primary steps down while a waiter waits; the release, sent to the new
// primary, still wakes it (the driver resumes the stream, or the watcher reopens it and wakes
// every waiter to attempt again).
TEST(NotifyFailoverTest, AWaiterHearsTheReleaseAfterTheStepDown) {
  if (std::string(MONGOSIM_PATH).empty()) GTEST_SKIP() << "no mongosim in this build";
  ReplicaSet set({.members = 3, .program = MONGOSIM_PATH});
  const std::string db = fresh_database();
  Provider holder(set.uri(), db, notify_options("failover-holder"));
  Provider waiter(set.uri(), db, notify_options("failover-waiter"));
  Handle held = holder.create_lock("L").acquire(milliseconds(10'000));
  WaitingAcquire waiting(waiter.create_lock("L"));
  ASSERT_TRUE(poll_until(after(kEventually), [&] {
    return queued(set.uri(), db, Options().collection, "L").size() == 1;
  }));
  const int old_primary = set.primary();
  ASSERT_GE(old_primary, 0);
  set.member(old_primary)
      .try_command("admin", {{"replSetStepDown", 10}, {"secondaryCatchUpPeriodSecs", 5}});
  ASSERT_GE(set.wait_for_primary(after(kEventually), old_primary), 0);
  // The holder's driver finds the new primary (a read through it succeeds), then releases.
  ASSERT_TRUE(poll_until(after(kEventually), [&] {
    try {
      return holder.inspect("L").has_value();
    } catch (const Error&) {
      return false;
    }
  }));
  ASSERT_EQ(held.release_result(), ReleaseResult::kReleased);
  EXPECT_TRUE(waiting.granted_by(after(kEventually)))
      << "the release after the step-down did not wake the waiter";
}

}  // namespace
}  // namespace mongolock::test
