// The TTL index that versions before reapAt made in the plain collection, "mongolock_ttl" on
// expiresAt: release sets expiresAt = NOW, so it deletes a released document (its token and its
// tombstones with it) reap_after_s after the release. A late acquire whose tombstone it deleted
// is then granted (a phantom after "not acquired"), and a clock step back inside the stated
// tolerance yields a lower token. The library refuses to acquire a plain lock while the index
// exists, whatever create_index says, with an error naming the index and how to drop it; it
// sends no acquire at all.
//
// Model: one mongosim member, the index made by the test as an earlier version would have made
// it. Left out: an index made by an earlier version while a Provider already runs (the check
// is made once per Provider and remembered when clean), the rw collection (its index was always
// on reapAt).
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "test_server.h"

namespace mongolock::test {
namespace {

class LegacyIndexTest : public FailPointTest {
 protected:
  // The index as versions before reapAt made it.
  void make_legacy_index(const std::string& db) {
    server_->member(0).command(db, R"({"createIndexes": "mongolock_locks", "indexes": [{"key":
        {"expiresAt": 1}, "name": "mongolock_ttl", "expireAfterSeconds": 1}]})");
  }
  void expect_refused_before_sending(bool create_index);
};

// Before, the acquire was granted and the index reaped the released document and its
// tombstones early (the phantom and the lower token of the experiments in the file header).
void LegacyIndexTest::expect_refused_before_sending(bool create_index) {
  const std::string db = fresh_database();
  make_legacy_index(db);
  Options options = test_options();
  options.create_index = create_index;
  options.reap_after_s = 1;
  Provider provider(server_->uri(), db, options);
  const int64_t tries_before = server_->member(0).command_total("findAndModify");
  for (int call = 0; call < 2; ++call) {  // the refusal is repeated, not remembered as clean
    std::string refusal;
    try {
      provider.create_lock("legacy").acquire(std::chrono::seconds(1));
    } catch (const InvalidArgument& error) {
      FAIL() << "not a bad argument: " << error.what();
    } catch (const Timeout& error) {
      FAIL() << "not a timeout: " << error.what();
    } catch (const Error& error) {
      refusal = error.what();
    }
    EXPECT_NE(refusal.find("mongolock_ttl"), std::string::npos)
        << "call " << call << ": the acquire must be refused naming the index; got '" << refusal
        << "'";
    EXPECT_NE(refusal.find("dropIndex"), std::string::npos) << refusal;
  }
  EXPECT_EQ(server_->member(0).command_total("findAndModify"), tries_before)
      << "an acquire was sent into a collection whose index reaps tombstones early";
  EXPECT_TRUE(provider.create_rw_lock("legacy").try_acquire_exclusive().has_value())
      << "the rw collection is not concerned";
}

TEST_F(LegacyIndexTest, LeftoverExpiresAtIndexRefusesAcquiresWithCreateIndex) {
  expect_refused_before_sending(true);
}

TEST_F(LegacyIndexTest, LeftoverExpiresAtIndexRefusesAcquiresWithoutCreateIndex) {
  expect_refused_before_sending(false);
}

// The same name on reapAt (no earlier version made it in the plain collection, but it reaps no
// earlier than mongolock_reap) is not the leftover: acquires go on.
TEST_F(LegacyIndexTest, AnIndexOfThatNameOnReapAtIsNotRefused) {
  const std::string db = fresh_database();
  server_->member(0).command(db, R"({"createIndexes": "mongolock_locks", "indexes": [{"key":
      {"reapAt": 1}, "name": "mongolock_ttl", "expireAfterSeconds": 60}]})");
  Provider provider(server_->uri(), db, test_options());
  std::optional<Handle> held = provider.create_lock("reap-named").try_acquire();
  ASSERT_TRUE(held.has_value());
  EXPECT_TRUE(held->release());
}

}  // namespace
}  // namespace mongolock::test
