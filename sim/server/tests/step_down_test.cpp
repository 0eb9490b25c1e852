// What clients see when a primary steps down (docs/mongodb-behaviour.md: Step-down commands;
// In-flight operations at step-down), with real processes:
// - a write already applied and waiting for replication: ok:1, n:1 and writeConcernError 189
//   PrimarySteppedDown (+ RetryableWriteError for a retryable write), for a replSetStepDown and
//   for a primary that loses its majority;
// - a new write afterwards: 10107 NotWritablePrimary, on the very connection that ran
//   replSetStepDown (mongod 4.2+ keeps it open);
// - a write that reaches the data after the step-down (in flight across it): 11602
//   InterruptedDueToReplStateChange, labelled RetryableWriteError when retryable.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <string>

#include "base/error_codes.h"
#include "base/failpoint.h"
#include "bson/codec.h"
#include "command/command.h"
#include "data/store.h"
#include "server/reply_envelope.h"
#include "server/tests/raw_client.h"
#include "server/tests/sim_set.h"

namespace mongosim::testing {
namespace {

using bson::Document;
using bson::V;

bson::Value session_id(char fill) {
  return V(Document{{"id", bson::Value::binary(4, std::string(16, fill))}});
}

Document retryable_insert(int32_t id, const Document& write_concern, char session) {
  return Document{{"insert", V("c")},
                  {"documents", V(bson::Array{V(Document{{"_id", V(id)}})})},
                  {"lsid", session_id(session)},
                  {"txnNumber", V(int64_t{1})},
                  {"writeConcern", V(write_concern)}};
}

bool has_label(const Document& reply, const std::string& label) {
  const bson::Value* labels = reply.get("errorLabels");
  if (labels == nullptr) return false;
  const auto& a = labels->as_array();
  return std::any_of(a.begin(), a.end(),
                     [&](const bson::Value& v) { return v.as_string() == label; });
}

// True once member i's own data holds {_id: id} in test.c (the write was applied there).
bool holds(const SimSet& set, int i, int32_t id) {
  return set.has_document(i, "test", "c", V(id));
}

void expect_stepped_down_wce(const Document& reply) {
  EXPECT_TRUE(is_ok(reply)) << bson::to_json(reply);
  EXPECT_EQ(reply.get("n")->number_as_double(), 1) << bson::to_json(reply);
  const bson::Value* wce = reply.get("writeConcernError");
  ASSERT_NE(wce, nullptr) << bson::to_json(reply);
  EXPECT_EQ(wce->as_document().get("code")->number_as_double(), code::kPrimarySteppedDown);
  EXPECT_EQ(wce->as_document().get("errmsg")->as_string(),
            "Primary stepped down while waiting for replication");
  EXPECT_TRUE(has_label(reply, "RetryableWriteError")) << bson::to_json(reply);
}

TEST(StepDown, WaitingWriteGets189AndTheStepDownConnectionStaysOpenFor10107) {
  SimSet set({.members = 3});
  int primary = set.primary();
  ASSERT_GE(primary, 0);
  // One secondary paused: w:3 cannot be satisfied, yet the primary keeps its majority and the
  // other secondary is an electable, caught-up target for the step-down.
  int paused = (primary + 2) % set.size();
  set.pause(paused);
  Document w3{{"w", V(int32_t{3})}};
  auto waiting = std::async(std::launch::async, [&] {
    RawClient client(set.member(primary).port());
    return client.command(retryable_insert(1, w3, 'a'), "test",
                          static_cast<int>(kConvergeTimeout.count()));
  });
  ASSERT_TRUE(poll_until(after(kConvergeTimeout), [&] { return holds(set, primary, 1); }));

  RawClient admin(set.member(primary).port());
  Document step_down = admin.command(Document{{"replSetStepDown", V(int32_t{30})},
                                              {"secondaryCatchUpPeriodSecs", V(int32_t{10})}});
  EXPECT_TRUE(is_ok(step_down)) << bson::to_json(step_down) << set.logs();
  expect_stepped_down_wce(waiting.get());

  // The same connection answers the next write with 10107, labelled because it is retryable.
  Document refused =
      admin.command(retryable_insert(2, Document{{"w", V(int32_t{1})}}, 'b'), "test");
  EXPECT_FALSE(is_ok(refused));
  EXPECT_EQ(refused.get("code")->number_as_double(), code::kNotWritablePrimary);
  EXPECT_EQ(refused.get("errmsg")->as_string(), "not master");  // this raw client sent no helloOk
  EXPECT_TRUE(has_label(refused, "RetryableWriteError")) << bson::to_json(refused);
  set.resume(paused);
  EXPECT_GE(set.wait_for_primary(after(kConvergeTimeout), primary), 0) << set.logs();
}

TEST(StepDown, PrimaryThatLosesItsMajorityFailsTheWaitingWriteWith189) {
  SimSet set({.members = 3});
  int primary = set.primary();
  ASSERT_GE(primary, 0);
  // One secondary paused: the w:3 insert is applied and waits, the primary still has its
  // majority. Only once it holds the write is the second paused (with both paused first, a run
  // slower than the election timeout would have its primary step down before the insert
  // arrives, and the insert would get 10107).
  set.pause((primary + 1) % set.size());
  auto waiting = std::async(std::launch::async, [&] {
    RawClient client(set.member(primary).port());
    // The reply comes only with the step-down: wait as long as the set may take to converge.
    return client.command(retryable_insert(1, Document{{"w", V(int32_t{3})}}, 'c'), "test",
                          static_cast<int>(kConvergeTimeout.count()));
  });
  ASSERT_TRUE(poll_until(after(kConvergeTimeout), [&] { return holds(set, primary, 1); }));
  set.pause((primary + 2) % set.size());
  // After electionTimeoutMillis without a majority the primary relinquishes on its own
  // (docs/mongodb-behaviour.md, Losing the majority).
  expect_stepped_down_wce(waiting.get());
  auto h = set.hello(primary);
  ASSERT_TRUE(h);
  EXPECT_FALSE(h->get("isWritablePrimary")->truthy());
  EXPECT_TRUE(holds(set, primary, 1));  // the write itself stays applied
}

// Priority takeover (docs/mongodb-behaviour.md, Elections): member 2 (priority 3) is paused while
// the others elect a primary among themselves; with the other low-priority member's fetcher
// stopped, an insert with w:3 waits on that primary. Member 2 resumes, catches up and takes over;
// the waiting insert gets 189. The other member keeps answering heartbeats (its fetcher is
// stopped, not its process), so the primary keeps its majority however slow the run: the step-down
// the write sees is the takeover's.
TEST(StepDown, PriorityTakeoverFailsTheWaitingWriteWith189) {
  SimSet set({.members = 3, .priorities = {1, 1, 3}, .start_paused = {2}});
  int primary = set.primary();
  ASSERT_TRUE(primary == 0 || primary == 1) << primary;
  int other = 1 - primary;
  stop_fetcher(set, other);
  auto waiting = std::async(std::launch::async, [&] {
    RawClient client(set.member(primary).port());
    // The reply comes only with the takeover: wait as long as the set may take to converge.
    return client.command(retryable_insert(1, Document{{"w", V(int32_t{3})}}, 'd'), "test",
                          static_cast<int>(kConvergeTimeout.count()));
  });
  ASSERT_TRUE(poll_until(after(kConvergeTimeout), [&] { return holds(set, primary, 1); }));
  set.resume(2);
  expect_stepped_down_wce(waiting.get());
  fail_point(set, other, "stopReplProducer", V("off"));
  EXPECT_EQ(set.wait_for_primary(after(kConvergeTimeout), primary), 2) << set.logs();
}

// The data write path: a write that passed the dispatcher's not-primary check but reaches the
// data after the member stopped being primary is interrupted, not applied.
TEST(StepDownInFlight, WriteReachingTheDataAfterStepDownGets11602AndIsNotApplied) {
  ServerClock clock;
  FailPoints failpoints;
  bool writable = true;
  data::StoreOptions options;
  options.clock = &clock;
  options.failpoints = &failpoints;
  options.can_accept_writes = [&] { return writable; };
  data::Store store(options);
  CommandRegistry registry;
  store.register_commands(registry);
  const CommandSpec* insert = registry.find("insert");
  ASSERT_NE(insert, nullptr);
  auto run = [&](int32_t id) {
    CommandContext ctx;
    ctx.db = "test";
    ctx.name = "insert";
    ctx.now_ms = clock.now_ms();
    ctx.body =
        Document{{"insert", V("c")}, {"documents", V(bson::Array{V(Document{{"_id", V(id)}})})}};
    return insert->handler(ctx);
  };
  run(1);
  OpTime before = store.last_applied();
  writable = false;  // the step-down happens while the command is in flight
  try {
    run(2);
    FAIL() << "the insert was applied after the step-down";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), code::kInterruptedDueToReplStateChange);
    EXPECT_STREQ(e.what(), "operation was interrupted");
  }
  EXPECT_EQ(store.last_applied(), before);  // nothing reached the oplog
  store.stop();

  // A retryable write interrupted this way carries RetryableWriteError (docs/mongodb-behaviour.md,
  // Error labels).
  server::LabelInputs labels;
  labels.retryable_write = true;
  labels.code = code::kInterruptedDueToReplStateChange;
  auto computed = server::compute_error_labels(labels);
  EXPECT_NE(std::find(computed.begin(), computed.end(), "RetryableWriteError"), computed.end());
}

}  // namespace
}  // namespace mongosim::testing
