// Liveness under a fast clock (mongolock.h): a hold granted by a primary whose clock ran ahead
// ends, on a primary with a right clock, far later than any grant made now could; the first
// attempt that is refused cuts it to NOW + the hold's own lease length, never shorter.
//
// Model: one mongosim member whose clock is stepped with mongosimSetClockOffset between
// commands (the fast-clock primary and the later right-clock one are the same member at two
// offsets). Left out: a real failover between members with different clocks (the scenario
// replset-primary-divergence has one), steps during a command. The "still refused" checks assume
// under 5 s of real time between two consecutive commands of the test (a pause longer than that
// would let the capped lease end by itself).
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "test_server.h"

namespace mongolock::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int64_t kFastMs = 30'000;   // the fast primary's lead
constexpr int64_t kHolderMs = 2'000;  // the holder's lease
constexpr int64_t kWaiterMs = 500;    // a waiter with a shorter lease than the holder's

class LeaseCapTest : public ServerTest {
 protected:
  void TearDown() override {
    if (server_ != nullptr) set_clock_offset(0);
  }
  void set_clock_offset(int64_t offset_ms) {
    server_->member(0).command("admin",
                               R"({"mongosimSetClockOffset": )" + std::to_string(offset_ms) + "}");
  }
  static Options lease_options(int64_t expiry_ms) {
    Options options = test_options();
    options.expiry_ms = expiry_ms;
    options.auto_extend = false;
    return options;
  }
  // The stored end of the exclusive hold, read on the server.
  std::chrono::system_clock::time_point stored_end(const Provider& provider,
                                                   const std::string& name, bool rw) {
    std::optional<LockInfo> info = rw ? provider.inspect_rw(name) : provider.inspect(name);
    EXPECT_TRUE(info.has_value() && info->exclusive.has_value()) << "no exclusive hold stored";
    if (!info || !info->exclusive) return {};
    return info->exclusive->expires_at;
  }
};

// Without the cap the waiter waits the fast clock's lead (30 s) past the lease.
TEST_F(LeaseCapTest, AHoldFromAFastClockIsCutToItsOwnLeaseByTheFirstRefusal) {
  const std::string db = fresh_database();
  Provider holder(server_->uri(), db, lease_options(kHolderMs));
  Provider waiter(server_->uri(), db, lease_options(kWaiterMs));
  set_clock_offset(kFastMs);
  Handle held = holder.create_lock("fast").acquire(seconds(5));
  set_clock_offset(0);
  Lock lock = waiter.create_lock("fast");
  EXPECT_FALSE(lock.try_acquire().has_value()) << "a live hold was granted away";
  // Within the holder's own lease from now: cut, and not to the waiter's shorter lease.
  const auto end = stored_end(waiter, "fast", false);
  std::optional<LockInfo> info = waiter.inspect("fast");
  ASSERT_TRUE(info.has_value());
  EXPECT_LE(end, info->server_now + milliseconds(kHolderMs)) << "the fast clock's hold was kept";
  EXPECT_GT(end, info->server_now + milliseconds(kWaiterMs)) << "cut to the waiter's lease";
  set_clock_offset(kHolderMs + 500);
  std::optional<Handle> next = lock.try_acquire();
  ASSERT_TRUE(next.has_value()) << "the capped hold did not end after its own lease";
  EXPECT_GT(next->fencing_token(), held.fencing_token());
}

// A primary whose clock is behind sees a right hold end far ahead; the cut it makes still lasts
// the holder's full lease from the cut, past the holder's own view of its lease.
TEST_F(LeaseCapTest, ACutOnASlowClockStillLastsTheHoldersWholeLease) {
  constexpr int64_t kLongMs = 10'000;
  const std::string db = fresh_database();
  Provider holder(server_->uri(), db, lease_options(kLongMs));
  Provider waiter(server_->uri(), db, lease_options(kWaiterMs));
  Handle held = holder.create_lock("slow").acquire(seconds(5));
  set_clock_offset(-20'000);
  Lock lock = waiter.create_lock("slow");
  EXPECT_FALSE(lock.try_acquire().has_value());
  set_clock_offset(-20'000 + 5'000);
  EXPECT_FALSE(lock.try_acquire().has_value()) << "the cut ended the hold before its lease";
  set_clock_offset(-20'000 + kLongMs + 500);
  EXPECT_TRUE(lock.try_acquire().has_value()) << "the cut hold never ended";
}

// An end moved by a writer that does not write the witness (an earlier version, or a hand
// edit) is left alone: the cut needs the hold's own lease length, and only a witness written
// with that very end gives it.
TEST_F(LeaseCapTest, AnEndWrittenWithoutItsWitnessIsNotCut) {
  const std::string db = fresh_database();
  Provider holder(server_->uri(), db, lease_options(kHolderMs));
  Provider waiter(server_->uri(), db, lease_options(kWaiterMs));
  Handle held = holder.create_lock("old").acquire(seconds(5));
  server_->member(0).command(
      db, R"({"update": "mongolock_locks", "updates": [{"q": {"_id": "old"}, "u": [{"$set":)"
          R"( {"expiresAt": {"$add": ["$$NOW", 60000]}}}]}]})");
  const auto before = stored_end(waiter, "old", false);
  EXPECT_FALSE(waiter.create_lock("old").try_acquire().has_value());
  EXPECT_EQ(stored_end(waiter, "old", false), before) << "an end without its witness was cut";
}

// A reader's refused attempt cuts a writer's fast-clock hold as a refused writer's does.
TEST_F(LeaseCapTest, AReaderCutsAFastClockWritersHold) {
  const std::string db = fresh_database();
  Provider holder(server_->uri(), db, lease_options(kHolderMs));
  Provider waiter(server_->uri(), db, lease_options(kWaiterMs));
  set_clock_offset(kFastMs);
  Handle held = holder.create_rw_lock("rw").acquire_exclusive(seconds(5));
  set_clock_offset(0);
  RwLock lock = waiter.create_rw_lock("rw");
  EXPECT_FALSE(lock.try_acquire_shared().has_value());
  set_clock_offset(kHolderMs + 500);
  std::optional<Handle> reader = lock.try_acquire_shared();
  ASSERT_TRUE(reader.has_value()) << "the capped writer's hold did not end after its own lease";
  EXPECT_GT(reader->fencing_token(), held.fencing_token());
}

}  // namespace
}  // namespace mongolock::test
