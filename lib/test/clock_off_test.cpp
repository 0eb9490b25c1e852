// Liveness under a clock that is off (mongolock.h): a hold is judged by the end its granter's
// clock wrote, on whatever clock judges it. A hold from a fast clock is waited for, not cut:
// cutting it on a slower member's clock would let the fast member, primary again, end it while
// its holder still holds.
//
// Model: one mongosim member whose clock is stepped with mongosimSetClockOffset between
// commands; its two offsets stand for two members (a fast one and a right one) that are primary
// in turn, with the data replicated between them. Left out: a real failover (the scenario
// replset-primary-divergence has one), steps during a command. Leases and offsets are long
// (minutes), so the real time the test takes between its commands cannot decide a check.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "test_server.h"

namespace mongolock::test {
namespace {

using std::chrono::seconds;

constexpr int64_t kFastMs = 1'200'000;  // how far the granting member's clock runs ahead
constexpr int64_t kLeaseMs = 600'000;   // the holder's lease

using ClockOffTest = ClockStepTest;

// A refused attempt on the right clock must leave the hold as its granter wrote it: back on the
// fast clock the holder's lease (almost all of it left on its own clock) is still the server's.
TEST_F(ClockOffTest, AHoldFromAFastClockIsNotCutByARefusalOnASlowerOne) {
  const std::string db = fresh_database();
  Provider holder(server_->uri(), db, fixed_lease_options(kLeaseMs));
  Provider waiter(server_->uri(), db, fixed_lease_options(500));
  set_clock_offset(kFastMs);
  Handle held = holder.create_lock("fast").acquire(seconds(5));
  set_clock_offset(0);
  Lock lock = waiter.create_lock("fast");
  EXPECT_FALSE(lock.try_acquire().has_value()) << "a live hold was granted away";
  set_clock_offset(kFastMs);
  EXPECT_FALSE(lock.try_acquire().has_value())
      << "the fast member ended a hold its holder still holds";
  EXPECT_FALSE(held.lost());
}

// The cost stated in mongolock.h: on the right clock the hold lasts the fast clock's lead
// longer than its lease, and is granted once that has passed.
TEST_F(ClockOffTest, AHoldFromAFastClockLastsItsLeadLonger) {
  const std::string db = fresh_database();
  Provider holder(server_->uri(), db, fixed_lease_options(kLeaseMs));
  Provider waiter(server_->uri(), db, fixed_lease_options(500));
  set_clock_offset(kFastMs);
  Handle held = holder.create_lock("late").acquire(seconds(5));
  // The lease is over on the holder's clock and on a right one: a minute past it.
  set_clock_offset(kLeaseMs + 60'000);
  Lock lock = waiter.create_lock("late");
  EXPECT_FALSE(lock.try_acquire().has_value()) << "the lead was not waited for";
  set_clock_offset(kFastMs + kLeaseMs + 60'000);
  std::optional<Handle> next = lock.try_acquire();
  ASSERT_TRUE(next.has_value()) << "the hold outlasted lead + lease";
  EXPECT_GT(next->fencing_token(), held.fencing_token());
}

}  // namespace
}  // namespace mongolock::test
