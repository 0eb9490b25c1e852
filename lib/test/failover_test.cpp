// mongolock across a failover: a Handle holds a lock on a three-member mongosim set with majority
// write concern and the primary is stepped down (replSetStepDown) mid-hold.
//
// Outcome: the holder KEEPS the lock, and is not told it lost it. Why: the acquire was
// acknowledged with w:"majority", so the lock document (holder = this hold's id, its expiresAt,
// its token) is on the new primary: a new primary holds every majority-committed write.
// mongolock's extension is a single-statement update, which libmongoc sends as a retryable
// write (lsid + txnNumber) and retries once on a retryable error such as 10107
// NotWritablePrimary. If the retry still meets the old primary (the driver has not yet seen the
// new one) the extension fails: the library counts it as a failed extension (the client lease
// deadline stays where it was; no lost notification, which only a refusal or the deadline fires).
// That error makes libmongoc rescan the set, and the next extension goes to the new primary,
// where the owner check matches and the lease is extended. So the holder keeps the lock as long
// as an extension reaches the new primary before the lease deadline (expiry 10 s here, failover
// in about a second); had none, it would be told it lost the lock at that deadline.
// After release, the next acquire's fencing token is strictly greater: the new primary has the
// stored token, and every grant sets token >= stored + 1 (mongolock.h "Fencing").
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "mongolock/mongolock.h"
#include "test_server.h"

namespace mongolock::test {
namespace {

constexpr int kMembers = 3;

// Three mongosim members initiated as one set with short election timers (the kit's: 1 s election
// timeout, 200 ms heartbeats).
class FailoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(MONGOSIM_PATH).empty()) GTEST_SKIP() << "mongosim is not part of this build";
    set_ = std::make_unique<ReplicaSet>(locklab::testkit::SetOptions{
        .members = kMembers,
        .program = MONGOSIM_PATH,
        .args = {"--bind_ip", "127.0.0.1", "--setParameter", "ttlMonitorSleepSecs=1"},
        .start_timeout = std::chrono::seconds(20)});
  }

  std::string uri() const { return set_->uri("serverSelectionTimeoutMS=20000"); }

  // The member every reachable member agrees is the writable primary, or -1.
  int primary_index() const { return set_->primary(); }

  static Options options() {
    Options o;
    o.create_index = false;
    o.expiry_ms = 10'000;  // long enough that no lease lapses while the set fails over
    o.busy_wait_min_ms = 1;
    o.busy_wait_max_ms = 20;
    return o;
  }

  std::unique_ptr<ReplicaSet> set_;
};

TEST_F(FailoverTest, HolderKeepsTheLockAcrossAStepDownAndTheNextTokenIsHigher) {
  const std::string db = fresh_database();
  Provider holder_side(uri(), db, options());
  Provider contender_side(uri(), db, options());
  Lock lock = holder_side.create_lock("failover");
  Lock contender = contender_side.create_lock("failover");

  Handle held = lock.acquire(std::chrono::seconds(20));
  const int64_t before = held.fencing_token();
  ASSERT_GT(before, 0);
  const int old_primary = primary_index();
  ASSERT_GE(old_primary, 0);

  set_->member(old_primary)
      .command("admin", R"({"replSetStepDown": 30, "secondaryCatchUpPeriodSecs": 10})");
  int new_primary = -1;
  ASSERT_TRUE(poll_until(after(kEventually), [&] {
    new_primary = primary_index();
    return new_primary >= 0 && new_primary != old_primary;
  })) << "no new primary after the step-down";

  // The hold survived on the new primary: an owner-checked extension succeeds there (after at
  // most one failure on the old primary, see above), nobody else can take the lock, and the
  // holder was never told it lost it.
  constexpr int kExtendAttemptsMax = 5;
  int attempts = 0;
  bool extended = false;
  while (!extended && attempts < kExtendAttemptsMax) {
    ++attempts;
    extended = held.extend();
  }
  EXPECT_TRUE(extended) << "no extension succeeded in " << attempts << " attempts";
  EXPECT_LE(attempts, 2) << "more than the one expected failure on the old primary";
  EXPECT_FALSE(held.lost());
  EXPECT_FALSE(contender.try_acquire(std::chrono::milliseconds(0)).has_value());
  EXPECT_TRUE(held.release());

  Handle next = contender.acquire(std::chrono::seconds(20));
  EXPECT_GT(next.fencing_token(), before) << "fencing token restarted across the failover";
  next.release();
}

}  // namespace
}  // namespace mongolock::test
