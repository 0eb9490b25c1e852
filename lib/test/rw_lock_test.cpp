// RwLock against mongosim: shared holds coexist up to max_shared, exclusive excludes all, and
// expired holds block nobody. Tokens: every exclusive grant gets a higher token; shared holds
// share the token of their epoch (the readers live together), and a new epoch's token is above
// every earlier exclusive token, so one rule -- refuse a token lower than the highest seen --
// fences both kinds (mongolock.h "Fencing").
#include <gtest/gtest.h>

#include <optional>
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
  EXPECT_EQ(b.fencing_token(), a.fencing_token()) << "live readers share their epoch's token";
  EXPECT_FALSE(lock.try_acquire_shared().has_value()) << "max_shared = 2 admitted a third";
  EXPECT_FALSE(lock.try_acquire_exclusive().has_value()) << "a writer got in beside readers";
  auto info = provider.inspect_rw("sem");
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->shared.size(), 2u);
  EXPECT_TRUE(a.release());
  Handle c = lock.acquire_shared(seconds(5));
  EXPECT_EQ(c.fencing_token(), b.fencing_token()) << "a reader joining live readers";
  const int64_t last_reader_token = c.fencing_token();  // a released Handle has no token
  EXPECT_TRUE(b.release());
  EXPECT_TRUE(c.release());
  Handle writer = lock.acquire_exclusive(seconds(5));
  EXPECT_GT(writer.fencing_token(), last_reader_token);
  EXPECT_FALSE(lock.try_acquire_shared().has_value()) << "a reader got in beside a writer";
  EXPECT_FALSE(lock.try_acquire_exclusive().has_value());
  const int64_t writer_token = writer.fencing_token();
  EXPECT_TRUE(writer.release());
  std::optional<Handle> reader = lock.try_acquire_shared();
  ASSERT_TRUE(reader.has_value());
  EXPECT_GT(reader->fencing_token(), writer_token) << "a new epoch must fence the old writer";
}

// The resource side of fencing: keeps the highest token it has seen and refuses lower ones.
struct FencedResource {
  int64_t highest = 0;
  bool accept(int64_t token) {
    if (token < highest) return false;
    highest = token;
    return true;
  }
};

// Issue 16 item 6: readers R1 and R2 both live; R2 touches the resource first. With a token per
// shared grant (t2 > t1) the rule refused the legitimate R1. A stale writer from before the
// readers' epoch is still refused, and so is a stale reader once a later writer was seen.
TEST_F(RwLockTest, SharedHoldsAreFencedByTheirEpoch) {
  Options options = test_options();
  options.auto_extend = false;
  options.expiry_ms = 2000;
  Provider provider(server_->uri(), fresh_database(), options);
  RwLock lock = provider.create_rw_lock("epochs");
  Handle writer = lock.acquire_exclusive(seconds(5));
  const int64_t stale_writer_token = writer.fencing_token();
  ASSERT_TRUE(writer.release());
  Handle r1 = lock.acquire_shared(seconds(5));
  Handle r2 = lock.acquire_shared(seconds(5));
  FencedResource resource;
  EXPECT_TRUE(resource.accept(r2.fencing_token()));
  EXPECT_TRUE(resource.accept(r1.fencing_token())) << "a live reader was refused";
  EXPECT_FALSE(resource.accept(stale_writer_token)) << "a writer from before the epoch got in";
  const int64_t stale_reader_token = r1.fencing_token();
  ASSERT_TRUE(r1.release());
  ASSERT_TRUE(r2.release());
  Handle next_writer = lock.acquire_exclusive(seconds(5));
  EXPECT_TRUE(resource.accept(next_writer.fencing_token()));
  EXPECT_FALSE(resource.accept(stale_reader_token)) << "a reader of the old epoch got in";
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
  options.expiry_ms = 4000;  // a late extension (a slow, sanitized run) does not lapse it
  Provider provider(server_->uri(), fresh_database(), options);
  RwLock lock = provider.create_rw_lock("long-reader");
  Handle reader = lock.acquire_shared(seconds(5));
  const auto first = reader.lease_deadline();
  ASSERT_TRUE(poll_until(after(kEventually), [&] {
    return reader.lease_deadline() > first + milliseconds(options.expiry_ms);
  }));
  EXPECT_FALSE(lock.try_acquire_exclusive().has_value());
  EXPECT_FALSE(reader.lost());
}

}  // namespace
}  // namespace mongolock::test
