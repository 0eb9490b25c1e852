// The local line (local_line.h; mongolock.h [notify], "Local line"): the state machine on its own
// (no server: every transition a release, a loss or a waiter's clock can make), then end to end
// on mongosim through a Provider's Context and the acquire loop: a waiter of the holder's own
// Provider waits without an ask and is granted by that hold's release (one findAndModify);
// a waiter of another Provider queued on the server goes first and the line then attempts; a lost
// hold sends its line to attempt; a release with an unknown outcome makes the seat tombstone its
// id before it attempts.
//
// Model: threads of one process on one host, one mongosim member. Left out: a Provider's process
// dying with seats (they die with it; the server sees nothing of them), a seat's thread paused
// past its grant's lease (claim_hand_over's rules, tested in notify_test.cpp for queued waiters,
// are the same code), and the release's reply lost after the server ran it (here the connection
// closes before the command runs: the seat's id then holds nothing, and the resolution is the
// same either way).
#include "local_line.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "acquire_loop.h"
#include "bson_ptr.h"
#include "context.h"
#include "hold_spec.h"
#include "test_server.h"

namespace mongolock::test {
namespace {

using detail::LocalLines;
using std::chrono::milliseconds;
using SeatState = LocalLines::SeatState;
using Settled = LocalLines::Settled;

const std::string kLock = "collection/L";
constexpr int64_t kNeverStaleMs = 3'600'000;

LocalLines::SteadyTime far_future() {
  return std::chrono::steady_clock::now() + std::chrono::hours(1);
}

LocalLines::SteadyTime already_past() {
  return std::chrono::steady_clock::now() - std::chrono::seconds(1);
}

TEST(LocalLines, AWaiterJoinsOnlyAnOpenLine) {
  LocalLines lines(kNeverStaleMs, kNeverStaleMs);
  EXPECT_EQ(lines.join(kLock, "w1"), nullptr) << "joined a line no hold of the Provider owns";
  lines.opened(kLock, "h", 10);
  ASSERT_NE(lines.join(kLock, "w1"), nullptr);
  EXPECT_EQ(lines.seats(kLock), 1u);
  lines.closed(kLock, "someone-else");
  EXPECT_EQ(lines.owner(kLock), "h") << "a hold that does not own the line closed it";
  lines.closed(kLock, "h");
  EXPECT_EQ(lines.owner(kLock), "");
  EXPECT_EQ(lines.join(kLock, "w2"), nullptr);
}

// The first comer to a closed line leads it while its attempt is in flight: later comers take
// seats behind it; its refusal (the caller closes the line) sends them to attempt.
TEST(LocalLines, TheFirstComerLeadsAClosedLineUntilItsAttemptsOutcome) {
  LocalLines lines(kNeverStaleMs, kNeverStaleMs);
  bool leads = false;
  EXPECT_EQ(lines.join(kLock, "first", &leads), nullptr);
  EXPECT_TRUE(leads);
  EXPECT_EQ(lines.owner(kLock), "first");
  bool second_leads = false;
  auto seat = lines.join(kLock, "second", &second_leads);
  ASSERT_NE(seat, nullptr);
  EXPECT_FALSE(second_leads);
  lines.closed(kLock, "first");
  EXPECT_EQ(lines.wait(kLock, *seat, far_future(), {}).state, SeatState::kAsk);
}

TEST(LocalLines, TheOwnersReleaseOffersTheFrontSeatAndAGrantPassesTheLine) {
  LocalLines lines(kNeverStaleMs, kNeverStaleMs);
  lines.opened(kLock, "h", 10);
  auto first = lines.join(kLock, "w1");
  auto second = lines.join(kLock, "w2");
  EXPECT_EQ(lines.offer(kLock, "not-the-owner"), nullptr);
  ASSERT_EQ(lines.offer(kLock, "h"), first);
  EXPECT_EQ(lines.offer(kLock, "h"), nullptr) << "a second offer while the first is in flight";
  const auto sent = std::chrono::steady_clock::now();
  lines.settle(kLock, "h", first, Settled::kSeatGranted, "w1", 17, sent);
  const LocalLines::Outcome got = lines.wait(kLock, *first, far_future(), std::stop_token());
  EXPECT_EQ(got.state, SeatState::kGranted);
  EXPECT_EQ(got.token, 17);
  EXPECT_EQ(got.anchor, sent);
  EXPECT_EQ(lines.owner(kLock), "w1") << "the granted seat owns the line";
  EXPECT_EQ(lines.seats(kLock), 1u);
  lines.opened(kLock, "w1", 17);  // its Lease started
  EXPECT_EQ(lines.offer(kLock, "w1"), second);
}

TEST(LocalLines, AHandOverToAQueuedWaiterOfTheProviderKeepsTheSeatFirst) {
  LocalLines lines(kNeverStaleMs, kNeverStaleMs);
  lines.opened(kLock, "h", 10);
  auto seat = lines.join(kLock, "w1");
  ASSERT_EQ(lines.offer(kLock, "h"), seat);
  lines.arrive("queued");
  lines.settle(kLock, "h", seat, Settled::kOwnWaiter, "queued", 11, {});
  EXPECT_EQ(lines.owner(kLock), "queued");
  EXPECT_EQ(lines.offer(kLock, "queued"), seat) << "the seat lost its place";
}

// A hand-over to a queued waiter whose call ended before the releaser read the reply (its leave
// ran after the grant: the lock is free or handed on) gives the line to nobody; a call that ends
// after the reply closes the line it was given.
TEST(LocalLines, AHandOverToACallThatEndedClosesTheLine) {
  LocalLines lines(kNeverStaleMs, kNeverStaleMs);
  lines.opened(kLock, "h", 10);
  auto first = lines.join(kLock, "w1");
  lines.arrive("gone");
  lines.depart(kLock, "gone", /*close=*/true);
  ASSERT_EQ(lines.offer(kLock, "h"), first);
  lines.settle(kLock, "h", first, Settled::kOwnWaiter, "gone", 11, {});
  EXPECT_EQ(lines.owner(kLock), "");
  EXPECT_EQ(lines.wait(kLock, *first, far_future(), {}).state, SeatState::kAsk);

  lines.opened(kLock, "h2", 20);
  auto second = lines.join(kLock, "w2");
  lines.arrive("later");
  lines.settle(kLock, "h2", nullptr, Settled::kOwnWaiter, "later", 21, {});
  EXPECT_EQ(lines.owner(kLock), "later");
  lines.depart(kLock, "later", /*close=*/true);
  EXPECT_EQ(lines.wait(kLock, *second, far_future(), {}).state, SeatState::kAsk);
}

TEST(LocalLines, TheLockLeavingTheProviderSendsEverySeatToAttempt) {
  LocalLines lines(kNeverStaleMs, kNeverStaleMs);
  lines.opened(kLock, "h", 10);
  auto offered = lines.join(kLock, "w1");
  auto behind = lines.join(kLock, "w2");
  ASSERT_EQ(lines.offer(kLock, "h"), offered);
  lines.settle(kLock, "h", offered, Settled::kGone, "", 0, {});
  EXPECT_EQ(lines.wait(kLock, *offered, far_future(), {}).state, SeatState::kAsk);
  EXPECT_EQ(lines.wait(kLock, *behind, far_future(), {}).state, SeatState::kAsk);
  EXPECT_EQ(lines.owner(kLock), "");
  EXPECT_EQ(lines.seats(kLock), 0u);
}

TEST(LocalLines, AnUnknownReleaseLeavesTheOfferedSeatUnknownAndTheRestAttempt) {
  LocalLines lines(kNeverStaleMs, kNeverStaleMs);
  lines.opened(kLock, "h", 10);
  auto offered = lines.join(kLock, "w1");
  auto behind = lines.join(kLock, "w2");
  ASSERT_EQ(lines.offer(kLock, "h"), offered);
  lines.settle(kLock, "h", offered, Settled::kUnknown, "", 0, {});
  EXPECT_EQ(lines.wait(kLock, *offered, far_future(), {}).state, SeatState::kUnknown);
  EXPECT_EQ(lines.wait(kLock, *behind, far_future(), {}).state, SeatState::kAsk);
}

// A loss closes the line while the release's offer is in flight: the offered seat is settled by
// that release (here a grant, which makes it the owner again), the others attempt.
TEST(LocalLines, ALossWhileAnOfferIsInFlightLeavesTheOfferToItsRelease) {
  LocalLines lines(kNeverStaleMs, kNeverStaleMs);
  lines.opened(kLock, "h", 10);
  auto offered = lines.join(kLock, "w1");
  auto behind = lines.join(kLock, "w2");
  ASSERT_EQ(lines.offer(kLock, "h"), offered);
  lines.closed(kLock, "h");
  EXPECT_EQ(lines.wait(kLock, *behind, far_future(), {}).state, SeatState::kAsk);
  lines.settle(kLock, "h", offered, Settled::kSeatGranted, "w1", 19, {});
  EXPECT_EQ(lines.wait(kLock, *offered, far_future(), {}).state, SeatState::kGranted);
  EXPECT_EQ(lines.owner(kLock), "") << "a release of a line it no longer owns moved it";
  lines.opened(kLock, "w1", 19);  // the seat's Lease opens it
  EXPECT_EQ(lines.owner(kLock), "w1");
}

// Replies settle in thread order, not server order: h's release handed the lock to A, a queued
// waiter of the Provider, who took it from its own attempt's reply, held and released (to nobody:
// the line closed) before h's thread read its reply. That late reply must not make A the owner of
// a line whose lock is free: its seats would wait for a release that never comes. (Found by
// lockbench: 32 threads stalled for seconds at hold 0.)
TEST(LocalLines, ALateReplyOfAnEarlierOwnerChangesNothing) {
  LocalLines lines(kNeverStaleMs, kNeverStaleMs);
  lines.opened(kLock, "h", 10);
  auto offered = lines.join(kLock, "w1");
  ASSERT_EQ(lines.offer(kLock, "h"), offered);
  lines.opened(kLock, "A", 11);
  EXPECT_EQ(lines.offer(kLock, "A"), nullptr) << "offered a seat already offered";
  auto later = lines.join(kLock, "w2");
  lines.settle(kLock, "A", nullptr, Settled::kGone, "", 0, {});
  EXPECT_EQ(lines.wait(kLock, *later, far_future(), {}).state, SeatState::kAsk);
  lines.settle(kLock, "h", offered, Settled::kOwnWaiter, "A", 11, {});
  EXPECT_EQ(lines.owner(kLock), "") << "a late reply reopened the line for a hold that ended";
  EXPECT_EQ(lines.wait(kLock, *offered, far_future(), {}).state, SeatState::kAsk);
}

// The same race with the lock still in the Provider: A's release handed it to B, whose Lease
// started; h's late reply leaves B the owner, and its offered seat first in B's line.
TEST(LocalLines, ALateReplyLeavesTheNewerOwnerAndTheSeatFirst) {
  LocalLines lines(kNeverStaleMs, kNeverStaleMs);
  lines.opened(kLock, "h", 10);
  auto offered = lines.join(kLock, "w1");
  ASSERT_EQ(lines.offer(kLock, "h"), offered);
  lines.arrive("B");
  lines.opened(kLock, "A", 11);
  lines.settle(kLock, "A", nullptr, Settled::kOwnWaiter, "B", 12, {});
  lines.opened(kLock, "B", 12);
  lines.settle(kLock, "h", offered, Settled::kOwnWaiter, "A", 11, {});
  EXPECT_EQ(lines.owner(kLock), "B");
  EXPECT_EQ(lines.offer(kLock, "B"), offered);
}

// A release that lost its line to a newer hold (lost, then the Provider held again) and finds
// no hold closes nothing of the newer owner's.
TEST(LocalLines, AnOldHoldsReleaseDoesNotCloseANewerOwnersLine) {
  LocalLines lines(kNeverStaleMs, kNeverStaleMs);
  lines.opened(kLock, "old", 5);
  lines.closed(kLock, "old");
  lines.opened(kLock, "new", 8);
  auto seat = lines.join(kLock, "w1");
  lines.settle(kLock, "old", nullptr, Settled::kGone, "", 0, {});
  EXPECT_EQ(lines.owner(kLock), "new");
  EXPECT_EQ(lines.offer(kLock, "new"), seat);
}

TEST(LocalLines, AWaiterWhoseTimeRunsOutLeavesTheLine) {
  LocalLines lines(kNeverStaleMs, kNeverStaleMs);
  lines.opened(kLock, "h", 10);
  auto seat = lines.join(kLock, "w1");
  EXPECT_EQ(lines.wait(kLock, *seat, already_past(), {}).state, SeatState::kLeft);
  EXPECT_EQ(lines.seats(kLock), 0u);
  std::stop_source stop;
  stop.request_stop();
  auto stopped = lines.join(kLock, "w2");
  EXPECT_EQ(lines.wait(kLock, *stopped, far_future(), stop.get_token()).state, SeatState::kLeft);
}

// Model: the waiter's time has run out while its seat is offered; the release (here the main
// thread, after the waiter started waiting or before: either order must give the grant) settles
// it. A wait that returned kLeft would drop a grant the server made.
TEST(LocalLines, AnOfferedSeatWaitsForItsReleaseEvenPastItsTime) {
  LocalLines lines(kNeverStaleMs, kNeverStaleMs);
  lines.opened(kLock, "h", 10);
  auto seat = lines.join(kLock, "w1");
  ASSERT_EQ(lines.offer(kLock, "h"), seat);
  LocalLines::Outcome got;
  std::thread waiter([&] { got = lines.wait(kLock, *seat, already_past(), {}); });
  lines.settle(kLock, "h", seat, Settled::kSeatGranted, "w1", 13, {});
  waiter.join();
  EXPECT_EQ(got.state, SeatState::kGranted);
  EXPECT_EQ(got.token, 13);
}

// A pending owner (a hand-over no call claims) is closed by the first seat that wakes after
// stale_ms (here 0: at once), so the line cannot stall.
TEST(LocalLines, AHandOverNobodyClaimsClosesTheLine) {
  LocalLines lines(/*stale_ms=*/0, kNeverStaleMs);
  lines.opened(kLock, "h", 10);
  auto seat = lines.join(kLock, "w1");
  lines.arrive("never-claimed");
  lines.settle(kLock, "h", nullptr, Settled::kOwnWaiter, "never-claimed", 11, {});
  EXPECT_EQ(lines.wait(kLock, *seat, far_future(), {}).state, SeatState::kAsk);
  EXPECT_EQ(lines.owner(kLock), "");
}

// A leader whose attempt has not come back within its short bound (here 0) is closed by the
// first seat that wakes: seats do not idle behind one slow attempt while the lock may be free.
TEST(LocalLines, ASlowLeaderIsPassedByItsSeats) {
  LocalLines lines(kNeverStaleMs, /*leader_stale_ms=*/0);
  bool leads = false;
  EXPECT_EQ(lines.join(kLock, "leader", &leads), nullptr);
  ASSERT_TRUE(leads);
  auto seat = lines.join(kLock, "w1");
  ASSERT_NE(seat, nullptr);
  EXPECT_EQ(lines.wait(kLock, *seat, far_future(), {}).state, SeatState::kAsk);
}

TEST(LocalLines, AFullLineRefusesTheNextWaiter) {
  LocalLines lines(kNeverStaleMs, kNeverStaleMs);
  lines.opened(kLock, "h", 10);
  for (size_t i = 0; i < detail::kSeatsMax; ++i) {
    ASSERT_NE(lines.join(kLock, "w" + std::to_string(i)), nullptr);
  }
  EXPECT_EQ(lines.join(kLock, "one-more"), nullptr);
}

// End to end: a Provider's Context, the acquire loop and Leases on mongosim.
class LocalLineTest : public FailPointTest {
 protected:
  static Options line_options(const std::string& app) {
    Options options;
    options.create_index = false;
    options.backoff = Backoff::kNotify;
    options.expiry_ms = 60'000;
    // Every sleep of a waiter that polls, and the grace: only a wake-up is in time.
    options.busy_wait_min_ms = 40'000;
    options.busy_wait_max_ms = 40'000;
    options.app_name = app;
    return options;
  }
  std::shared_ptr<detail::Context> context(const Options& options) {
    return std::make_shared<detail::Context>(server_->uri(), db_, options);
  }
  detail::HoldSpec spec() const { return detail::HoldSpec{Options().collection, "L"}; }
  // Waits until the lock's line of `ctx` seats `count` waiters.
  void wait_for_seats(detail::Context& ctx, size_t count) {
    ASSERT_TRUE(poll_until(after(kEventually),
                           [&] { return ctx.lines().seats(detail::line_key(spec())) == count; }))
        << "the line never seated " << count;
  }
  detail::Bson document() {
    return read_lock_document(server_->uri(), db_, Options().collection, "L");
  }
  size_t queue_size() {
    size_t entries = 0;
    detail::Bson doc = document();
    detail::for_each_document(*doc, "queue", [&](const bson_t&) {
      ++entries;
      return true;
    });
    return entries;
  }
  std::string db_ = fresh_database();
};

// An acquire on its own thread (no timeout of its own: the test judges it by kEventually).
class Waiting {
 public:
  Waiting(std::shared_ptr<detail::Context> ctx, detail::HoldSpec spec)
      : thread_([this, ctx, spec] {
          try {
            handle_ = detail::acquire_loop(ctx, spec, std::chrono::minutes(10), stop_.get_token());
          } catch (const Error&) {
            // Cancelled by the destructor, or an error the test sees as "not granted".
          }
          done_ = true;
        }) {}
  ~Waiting() {
    stop_.request_stop();
    thread_.join();
  }
  bool granted_by(locklab::testkit::Deadline deadline) {
    return poll_until(deadline, [this] { return done_.load(); }) && handle_.has_value();
  }
  Handle& handle() { return *handle_; }

 private:
  std::stop_source stop_;
  std::optional<Handle> handle_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

TEST_F(LocalLineTest, AWaiterOfTheHoldersProviderIsGrantedByItsReleaseWithoutAnAsk) {
  auto ctx = context(line_options("line-one"));
  std::optional<Handle> held = detail::acquire_loop(ctx, spec(), milliseconds(5000), {});
  ASSERT_TRUE(held.has_value());
  const int64_t token = held->fencing_token();
  const int64_t sent_before = server_->member(0).command_total("findAndModify");
  Waiting waiting(ctx, spec());
  wait_for_seats(*ctx, 1);
  EXPECT_EQ(queue_size(), 0u) << "the seated waiter asked";
  EXPECT_TRUE(held->release());
  ASSERT_TRUE(waiting.granted_by(after(kEventually))) << "the release granted nobody";
  EXPECT_GT(waiting.handle().fencing_token(), token);
  EXPECT_EQ(server_->member(0).command_total("findAndModify") - sent_before, 1)
      << "a seated waiter's grant cost more than its holder's release";
  detail::Bson doc = document();
  EXPECT_EQ(detail::find_int64(*doc, "token"), waiting.handle().fencing_token())
      << detail::to_json(*doc);
  EXPECT_EQ(detail::find_utf8(*doc, "grantP"), std::nullopt)
      << "a seat's grant names a Provider (its stream would pass the event on)";
}

// The fairness rule: a waiter queued on the server goes before a seat. Another Provider's waiter
// queues; the holder's release grants it, and the seat (told to attempt) queues behind it.
TEST_F(LocalLineTest, AQueuedWaiterOfAnotherProviderGoesBeforeTheSeat) {
  auto ctx = context(line_options("line-holder"));
  auto other = context(line_options("line-other"));
  std::optional<Handle> held = detail::acquire_loop(ctx, spec(), milliseconds(5000), {});
  ASSERT_TRUE(held.has_value());
  Waiting foreign(other, spec());
  ASSERT_TRUE(poll_until(after(kEventually), [&] { return queue_size() == 1; }));
  Waiting seated(ctx, spec());
  wait_for_seats(*ctx, 1);
  EXPECT_TRUE(held->release());
  ASSERT_TRUE(foreign.granted_by(after(kEventually))) << "the queued waiter was passed";
  ASSERT_TRUE(poll_until(after(kEventually), [&] { return queue_size() == 1; }))
      << "the seat did not queue once the lock left its Provider";
  EXPECT_EQ(ctx->lines().seats(detail::line_key(spec())), 0u);
  EXPECT_TRUE(foreign.handle().release());
  EXPECT_TRUE(seated.granted_by(after(kEventually))) << "the former seat never got the lock";
}

// A hold lost at its lease end (fixed lease, nothing extends it) closes its line: the seat
// attempts, queues, and gets the lock once the server's lease has lapsed (the grace: the head
// is the seat itself, so its own attempt after the lapse is granted at its turn).
TEST_F(LocalLineTest, ALostHoldSendsItsSeatsToAttempt) {
  Options options = line_options("line-lost");
  options.expiry_ms = 1000;
  options.auto_extend = false;
  options.busy_wait_min_ms = 10;  // the seat, once queued, times the lapse itself
  options.busy_wait_max_ms = 50;
  auto ctx = context(options);
  std::optional<Handle> held = detail::acquire_loop(ctx, spec(), milliseconds(5000), {});
  ASSERT_TRUE(held.has_value());
  Waiting seated(ctx, spec());
  wait_for_seats(*ctx, 1);
  ASSERT_TRUE(held->wait_lost(kEventually)) << "the fixed lease was never lost";
  ASSERT_TRUE(seated.granted_by(after(kEventually))) << "the seat of a lost hold never attempted";
  EXPECT_GT(seated.handle().fencing_token(), held->fencing_token());
}

// The release's connection closes under it (failCommand closeConnection, once, on the holder's
// next findAndModify: the release): its outcome is unknown, so the seat it offered tombstones
// its waiter id (which a late run of the release could have granted) and attempts as a new
// waiter; it gets the lock when the holder's fixed lease lapses.
TEST_F(LocalLineTest, AReleaseWithAnUnknownOutcomeMakesItsSeatTombstoneItsId) {
  Options options = line_options("line-unknown");
  options.expiry_ms = 1000;
  options.auto_extend = false;
  options.busy_wait_min_ms = 10;
  options.busy_wait_max_ms = 50;
  auto ctx = context(options);
  std::optional<Handle> held = detail::acquire_loop(ctx, spec(), milliseconds(5000), {});
  ASSERT_TRUE(held.has_value());
  Waiting seated(ctx, spec());
  wait_for_seats(*ctx, 1);
  server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
      "data": {"failCommands": ["findAndModify"], "closeConnection": true,
               "appName": "line-unknown"}})");
  EXPECT_EQ(held->release_result(), ReleaseResult::kUnknown);
  ASSERT_TRUE(seated.granted_by(after(kEventually))) << "the seat never got the lock";
  detail::Bson doc = document();
  EXPECT_TRUE(detail::find_utf8(*doc, "tombstones.0.id").has_value())
      << "the seat's id was not tombstoned: " << detail::to_json(*doc);
  EXPECT_NE(detail::find_utf8(*doc, "tombstones.0.id"), detail::find_utf8(*doc, "holder"))
      << "the hold went to the tombstoned id";
}

// Late execution: the release is held on its connection (failCommand blockConnection, 2 s)
// past the client's socket timeout (500 ms), so its outcome is unknown and the seat tombstones
// its id and attempts under a new one; then the release runs. It must not grant the tombstoned
// id (a hold nobody would ever use or release): the seat gets the lock under its new id once the
// holder's fixed lease lapses (the late release's short form matches nothing, and nothing sends
// the full one). (Found by review: the short form first skipped the tombstone check.)
TEST_F(LocalLineTest, AReleaseThatRunsLateNeverGrantsItsSeatsTombstonedId) {
  Options options = line_options("line-late");
  options.expiry_ms = 1000;
  options.auto_extend = false;
  options.busy_wait_min_ms = 10;
  options.busy_wait_max_ms = 50;
  auto ctx = std::make_shared<detail::Context>(server_->uri("socketTimeoutMS=500"), db_, options);
  std::optional<Handle> held = detail::acquire_loop(ctx, spec(), milliseconds(5000), {});
  ASSERT_TRUE(held.has_value());
  Waiting seated(ctx, spec());
  wait_for_seats(*ctx, 1);
  server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
      "data": {"failCommands": ["findAndModify"], "blockConnection": true, "blockTimeMS": 2000,
               "appName": "line-late"}})");
  EXPECT_EQ(held->release_result(), ReleaseResult::kUnknown);
  ASSERT_TRUE(seated.granted_by(after(kEventually))) << "the seat never got the lock";
  detail::Bson doc = document();
  const std::optional<std::string> tombstoned = detail::find_utf8(*doc, "tombstones.0.id");
  ASSERT_TRUE(tombstoned.has_value()) << detail::to_json(*doc);
  EXPECT_NE(detail::find_utf8(*doc, "holder"), tombstoned) << detail::to_json(*doc);
  EXPECT_EQ(detail::find_int64(*doc, "token"), seated.handle().fencing_token());
  EXPECT_FALSE(seated.handle().lost());
}

// The short release grants an empty queue's seat, and never a tombstoned one (whose release ran
// late, after the seat resolved it): the command itself on a real server, with the hold's
// document as the library leaves it.
TEST_F(LocalLineTest, TheShortReleaseGrantsAnUntombstonedSeatOnly) {
  auto ctx = context(line_options("line-short"));
  const Options& options = ctx->options();
  std::optional<Handle> held = detail::acquire_loop(ctx, spec(), milliseconds(5000), {});
  ASSERT_TRUE(held.has_value());
  const std::string hold_id = *detail::find_utf8(*document(), "holder");
  detail::Reply resolved = ctx->write(*detail::resolve_for(spec(), "tombstoned-seat", options));
  ASSERT_EQ(resolved.outcome, detail::Outcome::kOk);
  detail::Reply refused =
      ctx->write_once(*detail::seat_release_for(spec(), hold_id, options, "tombstoned-seat"));
  ASSERT_EQ(refused.outcome, detail::Outcome::kOk);
  EXPECT_TRUE(detail::find_is_null_or_missing(*refused.doc, "value"))
      << "granted a tombstoned seat: " << detail::to_json(*refused.doc);
  detail::Reply granted =
      ctx->write_once(*detail::seat_release_for(spec(), hold_id, options, "fresh-seat"));
  ASSERT_EQ(granted.outcome, detail::Outcome::kOk);
  EXPECT_EQ(detail::find_utf8(*granted.doc, "value.holder"), "fresh-seat")
      << detail::to_json(*granted.doc);
  EXPECT_GT(detail::find_int64(*granted.doc, "value.token"), held->fencing_token());
  held->release();  // finds no hold of its id: the seat's grant stands
}

// The holds limit and the line: a seat keeps a hold slot while it waits, so (1) a Provider at
// the limit refuses the next acquire before any round trip instead of seating it, and (2) a
// seat's grant never meets the limit, although the releasing hold gives its slot back only after
// its release returns, which is after it woke the seat (rounds repeat that race; before seats
// kept a slot, 1 to 7 of 10 such grants threw Error).
TEST_F(LocalLineTest, ASeatKeepsItsHoldSlotAndAFullProviderRefusesAtOnce) {
  auto ctx = context(line_options("line-limit"));
  std::vector<Handle> others;
  for (int64_t i = 0; i + 2 < detail::kHoldsPerProviderMax; ++i) {
    std::optional<Handle> other =
        detail::acquire_loop(ctx, detail::HoldSpec{Options().collection, "F" + std::to_string(i)},
                             milliseconds(5000), {});
    ASSERT_TRUE(other.has_value());
    others.push_back(std::move(*other));
  }
  for (int round = 0; round < 5; ++round) {
    std::optional<Handle> held = detail::acquire_loop(ctx, spec(), milliseconds(5000), {});
    ASSERT_TRUE(held.has_value());
    Waiting seated(ctx, spec());
    wait_for_seats(*ctx, 1);
    const int64_t sent_before = server_->member(0).command_total("findAndModify");
    EXPECT_THROW(detail::acquire_loop(ctx, spec(), milliseconds(5000), {}), Error)
        << "round " << round << ": a Provider at its limit seated one more";
    EXPECT_EQ(server_->member(0).command_total("findAndModify"), sent_before);
    EXPECT_TRUE(held->release());
    ASSERT_TRUE(seated.granted_by(after(kEventually))) << "round " << round;
    EXPECT_TRUE(seated.handle().release());
  }
}

// Liveness under contention: 32 threads of one Provider take the lock in turn, holding nothing
// (hold 0: releases, seats, leaders and queued waiters of the Provider interleave as fast as the
// server answers), with lockbench's lease and sleeps. Every acquire must succeed within
// kEventually, and no two threads may hold at once. Model: one process; other Providers are left
// out (their turns are in the tests above). It did not reproduce the one stall found so far (a
// releaser's reply settled after its grantee had held and released, which lockbench hit in about
// one run of four): interleavings that rare are tested on the state machine above
// (ALateReply...).
TEST_F(LocalLineTest, ThirtyTwoThreadsOfOneProviderNeverStall) {
  Options options = line_options("line-stress");
  options.expiry_ms = 30'000;  // lockbench's options
  options.busy_wait_min_ms = 10;
  options.busy_wait_max_ms = 800;
  auto ctx = context(options);
  constexpr int kThreads = 32;
  constexpr int kTurns = 150;
  std::atomic<int> stalled{0};
  std::atomic<int64_t> holders{0};
  std::atomic<int> overlaps{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int turn = 0; turn < kTurns && stalled.load() == 0; ++turn) {
        std::optional<Handle> handle;
        try {
          handle = detail::acquire_loop(ctx, spec(), kEventually, {});
        } catch (const Error&) {
        }
        if (!handle) {
          ++stalled;
          return;
        }
        if (++holders != 1) ++overlaps;
        --holders;
        handle->release();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(stalled.load(), 0) << "owner '" << ctx->lines().owner(detail::line_key(spec()))
                               << "', seats " << ctx->lines().seats(detail::line_key(spec()))
                               << ", document " << detail::to_json(*document());
  EXPECT_EQ(overlaps.load(), 0);
}

}  // namespace
}  // namespace mongolock::test
