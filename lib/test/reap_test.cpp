// TTL reaping and fencing: a lock document is reaped on reapAt (max expiry of every grant ever
// made), never earlier, so a token minted after a reap is higher than every earlier one as long
// as the server clock steps back by less than expiry_ms + reap_after_s (mongolock.h "Fencing").
// Reader/writer documents keep live holds while reapAt moves with the extensions, and shared
// slots of expired readers are reused.
//
// Model: one mongosim member whose clock is stepped with mongosimSetClockOffset and whose TTL
// monitor runs every second (ttlMonitorSleepSecs=1). Left out: failover to a member with
// another clock, steps during a grant, the TTL monitor's own lag beyond one pass.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "test_server.h"

namespace mongolock::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int64_t kExpiryMs = 3000;
constexpr int64_t kReapAfterS = 1;
// Inside the tolerance expiry_ms + reap_after_s (4000 ms), with a margin for the reap's lag.
constexpr int64_t kStepBackMs = 3500;

class ReapTest : public ClockStepTest {
 protected:
  static Options reap_options() {
    Options options = fixed_lease_options(kExpiryMs);
    options.create_index = true;
    options.reap_after_s = kReapAfterS;
    return options;
  }
};

// Issue 16 item 3: release used to set expiresAt = NOW with the TTL index on expiresAt, so a
// released document was reaped reap_after_s after the release; a step back inside the
// tolerance then gave a LOWER token.
TEST_F(ReapTest, TokenAfterReleaseReapAndAClockStepBackIsStillHigher) {
  const std::string db = fresh_database();
  Provider provider(server_->uri(), db, reap_options());
  wait_for_index(db, "mongolock_locks", "mongolock_reap");
  Lock lock = provider.create_lock("reaped");
  Handle first = lock.acquire(seconds(5));
  const int64_t first_token = first.fencing_token();
  ASSERT_TRUE(first.release());
  ASSERT_TRUE(poll_until(after(seconds(20)), [&] {
    return !provider.inspect("reaped").has_value();
  })) << "the TTL monitor never reaped the released lock document";
  set_clock_offset(-kStepBackMs);
  Handle second = lock.acquire(seconds(5));
  EXPECT_GT(second.fencing_token(), first_token)
      << "token went back after a reap and a clock step inside the tolerance";
}

TEST_F(ReapTest, TokenAfterForceReleaseReapAndAClockStepBackIsStillHigher) {
  const std::string db = fresh_database();
  Provider provider(server_->uri(), db, reap_options());
  wait_for_index(db, "mongolock_locks", "mongolock_reap");
  Lock lock = provider.create_lock("forced");
  Handle first = lock.acquire(seconds(5));
  const int64_t first_token = first.fencing_token();
  ASSERT_TRUE(provider.force_release("forced"));
  ASSERT_TRUE(
      poll_until(after(seconds(20)), [&] { return !provider.inspect("forced").has_value(); }));
  set_clock_offset(-kStepBackMs);
  Handle second = lock.acquire(seconds(5));
  EXPECT_GT(second.fencing_token(), first_token);
}

TEST_F(ReapTest, RwDocumentWithALiveExtendedHoldIsNotReaped) {
  const std::string db = fresh_database();
  Options options = reap_options();
  options.reap_after_s = 0;
  options.expiry_ms = 3000;  // a late extension (a slow, sanitized run) does not lapse it
  options.auto_extend = true;
  Provider provider(server_->uri(), db, options);
  wait_for_index(db, "mongolock_rwlocks", "mongolock_ttl");
  RwLock lock = provider.create_rw_lock("live-reader");
  Handle reader = lock.acquire_shared(seconds(5));
  const auto first_deadline = reader.lease_deadline();
  // Several leases and TTL passes long: the document would be gone were reapAt not extended.
  ASSERT_TRUE(poll_until(after(seconds(40)),
                         [&] { return reader.lease_deadline() > first_deadline + seconds(6); }));
  auto info = provider.inspect_rw("live-reader");
  ASSERT_TRUE(info.has_value()) << "a document with a live, extended shared hold was reaped";
  ASSERT_EQ(info->shared.size(), 1u);
  EXPECT_TRUE(info->shared[0].live);
  EXPECT_FALSE(reader.lost());
  EXPECT_FALSE(lock.try_acquire_exclusive().has_value());
}

// A counting semaphore of one slot: the slot of a reader whose lease expired is given to the
// next reader, with a higher token, and the expired reader can neither extend nor release it.
TEST_F(ReapTest, SharedSlotOfAnExpiredReaderIsReused) {
  Options options = test_options();
  options.expiry_ms = 300;
  options.auto_extend = false;
  Provider provider(server_->uri(), fresh_database(), options);
  RwLock lock = provider.create_rw_lock("one-slot", 1);
  Handle first = lock.acquire_shared(seconds(5));
  EXPECT_FALSE(lock.try_acquire_shared().has_value()) << "max_shared = 1 admitted a second";
  ASSERT_TRUE(poll_until(after(kEventually), [&] {
    auto info = provider.inspect_rw("one-slot");
    return info && info->shared.size() == 1 && !info->shared[0].live;
  })) << "the first reader never expired on the server clock";
  Handle second = lock.acquire_shared(seconds(5));
  EXPECT_GT(second.fencing_token(), first.fencing_token());
  EXPECT_FALSE(first.extend()) << "the expired reader revived its slot";
  EXPECT_FALSE(first.release()) << "the expired reader released the slot of another";
  auto info = provider.inspect_rw("one-slot");
  ASSERT_TRUE(info.has_value());
  ASSERT_EQ(info->shared.size(), 1u) << "the expired entry was not pruned";
  EXPECT_EQ(info->shared[0].acquisition_id, second.acquisition_id());
}

}  // namespace
}  // namespace mongolock::test
