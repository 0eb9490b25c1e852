// The reapAt TTL index keeps the expireAfterSeconds of the first Provider that created it. A
// Provider with a longer reap_after_s keeps its tombstones (and its token floor) for
// expiry_ms + reap_after_s by its own count, but the index deletes the document sooner: a late
// acquire it had resolved as "not acquired" would then be granted to an abandoned id (a phantom),
// and a clock step back inside its stated tolerance would give a lower token. The library reads
// the indexes before acquiring (index_check.h) and refuses while an index is too short.
//
// Model: one mongosim member (TTL monitor every second), Providers in one process (so the later
// one never sends createIndexes: the in-process registry skips it), a blockConnection fail
// point that holds one findAndModify past the client's socket timeout (the control). Left out:
// failover; Providers in other processes (there the later one's createIndexes answers
// IndexOptionsConflict, logged, and the same listIndexes judges it); an index lowered with
// collMod while a Provider runs (not seen: mongolock.h [index]).
#include <gtest/gtest.h>

#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include "test_server.h"

namespace mongolock::test {
namespace {

using std::chrono::milliseconds;

constexpr int kBlockMs = 6000;

class ReapIndexTest : public FailPointTest {
 protected:
  static Options quick(int64_t reap_after_s) {
    Options options = fixed_lease_options(1000);
    options.create_index = true;
    options.reap_after_s = reap_after_s;
    return options;
  }
  // A Provider with reap_after_s `reap_after_s` creates the indexes and waits for both.
  void index_made_with(const std::string& db, int64_t reap_after_s,
                       std::optional<Provider>& creator) {
    creator.emplace(server_->uri(), db, quick(reap_after_s));
    wait_for_index(db, "mongolock_locks", "mongolock_reap");
    wait_for_index(db, "mongolock_rwlocks", "mongolock_ttl");
  }
};

std::string refusal_of(const std::function<void()>& acquire) {
  try {
    acquire();
  } catch (const InvalidArgument& error) {
    return std::string("InvalidArgument: ") + error.what();
  } catch (const Timeout& error) {
    return std::string("Timeout: ") + error.what();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

// Before the check, B's acquire was granted and the index (0 s) reaped its released document
// and tombstones ~1 s later: the phantom and the lower token in the file header.
TEST_F(ReapIndexTest, AProviderWithALongerReapIsRefusedByAShorterIndexInBothCollections) {
  const std::string db = fresh_database();
  std::optional<Provider> creator;
  index_made_with(db, 0, creator);
  Provider late(server_->uri(), db, quick(60));
  const int64_t sent_before = server_->member(0).command_total("findAndModify") +
                              server_->member(0).command_total("update");
  for (int call = 0; call < 2; ++call) {  // refused again, not remembered
    const std::string plain =
        refusal_of([&] { (void)late.create_lock("x").try_acquire(milliseconds(0)); });
    EXPECT_NE(plain.find("\"mongolock_reap\""), std::string::npos)
        << "call " << call << ": " << plain;
    EXPECT_NE(plain.find("reap_after_s 60"), std::string::npos) << plain;
    const std::string rw =
        refusal_of([&] { (void)late.create_rw_lock("x").try_acquire_exclusive(); });
    EXPECT_NE(rw.find("\"mongolock_ttl\""), std::string::npos) << "call " << call << ": " << rw;
  }
  EXPECT_EQ(server_->member(0).command_total("findAndModify") +
                server_->member(0).command_total("update"),
            sent_before)
      << "an acquire was sent into a collection whose index reaps sooner than reap_after_s";
  // The creator's own value (0) and any shorter reap are fine with that index.
  std::optional<Handle> held = creator->create_lock("x").try_acquire(milliseconds(0));
  ASSERT_TRUE(held.has_value());
  EXPECT_TRUE(held->release());
}

// A longer index than the Provider's reap_after_s keeps documents at least as long: usable.
TEST_F(ReapIndexTest, AnIndexLongerThanTheProvidersReapIsUsable) {
  const std::string db = fresh_database();
  std::optional<Provider> creator;
  index_made_with(db, 120, creator);
  Provider shorter(server_->uri(), db, quick(5));
  std::optional<Handle> held = shorter.create_lock("y").try_acquire(milliseconds(0));
  ASSERT_TRUE(held.has_value());
  EXPECT_TRUE(held->release());
}

// The race: a Provider whose own index is not there yet once acquired at once, and another
// Provider's shorter index, made a moment later, then reaped its tombstones early. Now the
// Provider makes its index before it acquires: while its createIndexes fails (here answered
// Interrupted by a fail point, for its connections only) nothing is sent, and once the
// shorter index exists its acquires are refused. Model: the race's order forced by the fail
// point; left out: the two createIndexes arriving at the same instant (the server orders them).
// The code is not a state-change code on purpose: with one (ShutdownInProgress, 91) the driver
// marks the member Unknown, and the next attempt may end at listIndexes' server selection
// instead (also nothing sent, but the message would then name listIndexes, not createIndexes);
// NoRefusalOfCreateIndexesButUnauthorizedLetsAnAcquireThrough covers those codes.
TEST_F(ReapIndexTest, NothingIsAcquiredBeforeTheProvidersOwnIndexExists) {
  const std::string db = fresh_database();
  Options a = quick(60);
  a.app_name = "index-blocked";
  server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
      "data": {"failCommands": ["createIndexes"], "appName": "index-blocked", "errorCode": 11601}})");
  Provider first(server_->uri(), db, a);
  const int64_t sent_before = server_->member(0).command_total("findAndModify");
  EXPECT_FALSE(first.create_lock("r").try_acquire(milliseconds(0)).has_value());
  const std::string timeout =
      refusal_of([&] { (void)first.create_lock("r").acquire(milliseconds(50)); });
  EXPECT_NE(timeout.find("indexes could not be checked"), std::string::npos) << timeout;
  EXPECT_NE(timeout.find("createIndexes"), std::string::npos) << timeout;
  EXPECT_EQ(server_->member(0).command_total("findAndModify"), sent_before)
      << "an acquire was sent before the Provider's own TTL index existed";
  // The other Provider's index, as one in another process makes it (in this process the
  // registry leaves index creation to the first Provider).
  server_->member(0).command(
      db, R"({"createIndexes": "mongolock_locks", "indexes": [{"key": {"reapAt": 1},
      "name": "mongolock_reap", "expireAfterSeconds": 0}]})");
  server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": "off"})");
  const std::string refused =
      refusal_of([&] { (void)first.create_lock("r").try_acquire(milliseconds(0)); });
  EXPECT_NE(refused.find("\"mongolock_reap\""), std::string::npos) << refused;
  EXPECT_EQ(server_->member(0).command_total("findAndModify"), sent_before);
}

// Any createIndexes refusal but Unauthorized may pass (an interruption, a primary stepping
// down): the first acquire waits for the index. These codes once let it through (only the 15
// codes the library retries were held back), and an interrupted createIndexes beside another
// Provider's shorter index gave a phantom. Unauthorized (13) acquires on what it sees
// (IndexTest.AnUnauthorizedCreateIndexesDoesNotBlockAcquisition). 91 and 10107 are state-change
// codes: the driver also marks the member Unknown, so the attempt may end at server selection;
// either way nothing may be sent.
TEST_F(ReapIndexTest, NoRefusalOfCreateIndexesButUnauthorizedLetsAnAcquireThrough) {
  for (const int code : {11601, 276, 12587, 24, 50, 67, 91, 10107}) {
    const std::string db = fresh_database();
    const std::string app = "create-refused-" + std::to_string(code);
    Options a = quick(60);
    a.app_name = app;
    server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
        "data": {"failCommands": ["createIndexes"], "appName": ")" +
                                            app + R"(", "errorCode": )" + std::to_string(code) +
                                            "}}");
    Provider provider(server_->uri(), db, a);
    const int64_t sent_before = server_->member(0).command_total("findAndModify");
    EXPECT_FALSE(provider.create_lock("c").try_acquire(milliseconds(0)).has_value()) << code;
    EXPECT_EQ(server_->member(0).command_total("findAndModify"), sent_before)
        << "createIndexes refused with " << code << ": an acquire was sent with no index";
    server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": "off"})");
  }
}

// A stop asked while the check's round trips are in flight sends nothing: the check can take
// three round trips, and the acquire once went out after them. Model: the check's listIndexes
// held 600 ms on the server (under the 1 s socket timeout, so the check completes; only the
// check sends listIndexes), the stop asked once the server has it. Left out: a stop landing between
// the check and the send on another thread's schedule (the check is the long part).
TEST_F(ReapIndexTest, AStopAskedDuringTheIndexCheckSendsNothing) {
  const std::string db = fresh_database();
  Options a = quick(60);
  a.app_name = "check-cancelled";
  server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
      "data": {"failCommands": ["listIndexes"], "appName": "check-cancelled",
      "blockConnection": true, "blockTimeMS": 600}})");
  Provider provider(server_->uri(), db, a);
  const int64_t sent_before = server_->member(0).command_total("findAndModify");
  const int64_t lists_before = server_->member(0).command_total("listIndexes");
  std::stop_source stop;
  std::string outcome;
  std::thread caller([&] {
    outcome = refusal_of([&] {
      (void)provider.create_lock("s").acquire(std::chrono::seconds(30), stop.get_token());
    });
  });
  const bool checking = poll_until(after(kEventually), [&] {
    return server_->member(0).command_total("listIndexes") > lists_before;
  });
  stop.request_stop();
  caller.join();
  ASSERT_TRUE(checking) << "the check never sent listIndexes";
  EXPECT_NE(outcome.find("cancelled"), std::string::npos) << outcome;
  EXPECT_EQ(server_->member(0).command_total("findAndModify"), sent_before)
      << "the acquire went out after the stop was asked";
}

// Control for the phantom: with an index of the same reap (60) the tombstone of an acquire held
// past its socket timeout outlives the late execution, and "not acquired" stays true.
TEST_F(ReapIndexTest, WithAnIndexOfTheSameReapALateAcquireStaysResolved) {
  const std::string db = fresh_database();
  std::optional<Provider> creator;
  index_made_with(db, 60, creator);
  Options b = quick(60);
  b.app_name = "reap-late";
  Provider late(server_->uri("socketTimeoutMS=100"), db, b);
  Provider observer(server_->uri(), db, test_options());
  server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
      "data": {"failCommands": ["findAndModify"], "appName": "reap-late",
      "blockConnection": true, "blockTimeMS": )" +
                                          std::to_string(kBlockMs) + R"(}})");
  std::optional<Handle> held = late.create_lock("z").try_acquire(milliseconds(0));
  ASSERT_FALSE(held.has_value()) << "the one attempt was held past the socket timeout";
  const std::string after_resolution =
      server_->member(0)
          .command(db, R"({"find": "mongolock_locks", "filter": {"_id": "z"}})")
          .dump();
  ASSERT_NE(after_resolution.find("\"until\""), std::string::npos)
      << "the attempt was not resolved by a tombstone\n"
      << after_resolution;
  const bool phantom = poll_until(after(milliseconds(kBlockMs + 3000)), [&] {
    auto info = observer.inspect("z");
    return info && info->exclusive && info->exclusive->live;
  });
  EXPECT_FALSE(phantom) << "after 'not acquired' the held acquire was granted\nnow: "
                        << server_->member(0).command(db, R"({"find": "mongolock_locks"})");
}

}  // namespace
}  // namespace mongolock::test
