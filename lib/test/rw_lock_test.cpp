// RwLock against mongosim: shared holds coexist up to max_shared, exclusive excludes all, every
// hold gets a higher token, and expired holds block nobody.
#include <gtest/gtest.h>

#include <vector>

#include "test_server.h"

namespace mongolock::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class RwLockTest : public ServerTest {};

TEST_F(RwLockTest, SharedHoldsCoexistUpToTheMaximumAndExcludeWriters) {
  Provider provider(server_->uri(), fresh_database(), test_options());
  RwLock lock = provider.create_rw_lock("sem", 2);
  Handle a = lock.acquire_shared(seconds(5));
  Handle b = lock.acquire_shared(seconds(5));
  EXPECT_GT(b.fencing_token(), a.fencing_token());
  EXPECT_FALSE(lock.try_acquire_shared().has_value()) << "max_shared = 2 admitted a third";
  EXPECT_FALSE(lock.try_acquire_exclusive().has_value()) << "a writer got in beside readers";
  auto info = provider.inspect_rw("sem");
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->shared.size(), 2u);
  EXPECT_TRUE(a.release());
  Handle c = lock.acquire_shared(seconds(5));
  EXPECT_GT(c.fencing_token(), b.fencing_token());
  const int64_t last_reader_token = c.fencing_token();  // a released Handle has no token
  EXPECT_TRUE(b.release());
  EXPECT_TRUE(c.release());
  Handle writer = lock.acquire_exclusive(seconds(5));
  EXPECT_GT(writer.fencing_token(), last_reader_token);
  EXPECT_FALSE(lock.try_acquire_shared().has_value()) << "a reader got in beside a writer";
  EXPECT_FALSE(lock.try_acquire_exclusive().has_value());
  EXPECT_TRUE(writer.release());
  EXPECT_TRUE(lock.try_acquire_shared().has_value());
}

TEST_F(RwLockTest, ExpiredSharedHoldsDoNotBlockAWriterAndCannotBeExtended) {
  Options options = test_options();
  options.expiry_ms = 300;
  options.auto_extend = false;
  Provider provider(server_->uri(), fresh_database(), options);
  RwLock lock = provider.create_rw_lock("stale-readers");
  Handle reader = lock.acquire_shared(seconds(5));
  Handle writer = lock.acquire_exclusive(seconds(10));
  EXPECT_GT(writer.fencing_token(), reader.fencing_token());
  EXPECT_FALSE(reader.extend()) << "an expired shared hold was revived";
  EXPECT_FALSE(reader.release()) << "the pruned reader released something";
  EXPECT_TRUE(provider.force_release_rw("stale-readers"));
  EXPECT_FALSE(writer.extend());
}

TEST_F(RwLockTest, SharedHoldsAreExtendedInTheBackground) {
  Options options = test_options();
  options.expiry_ms = 400;
  Provider provider(server_->uri(), fresh_database(), options);
  RwLock lock = provider.create_rw_lock("long-reader");
  Handle reader = lock.acquire_shared(seconds(5));
  const auto first = reader.lease_deadline();
  ASSERT_TRUE(eventually([&] { return reader.lease_deadline() > first + milliseconds(400); }));
  EXPECT_FALSE(lock.try_acquire_exclusive().has_value());
  EXPECT_FALSE(reader.lost());
}

}  // namespace
}  // namespace mongolock::test
