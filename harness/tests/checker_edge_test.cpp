// Hand-written histories for the checkers' edge cases, each with its exact expected outcome.
#include <gtest/gtest.h>

#include "checker.h"
#include "checker_history_builder.h"

namespace locklab {
namespace {

using testing::HistoryBuilder;
constexpr auto kOk = EventType::kOk;
constexpr auto kInfo = EventType::kInfo;
constexpr auto kFail = EventType::kFail;
constexpr auto kInvoke = EventType::kInvoke;

CheckConfig config_for(std::string_view property) {
  CheckConfig config;
  config.properties = {std::string(property)};
  config.liveness_bound_ns = 1'000'000'000;  // 1000 ms
  config.lost_bound_ns = 100'000'000;        // 100 ms
  return config;
}

Outcome outcome_of(const HistoryBuilder& builder, std::string_view property) {
  Verdict verdict = check(builder.build(), config_for(property));
  const PropertyResult* result = verdict.find(property);
  EXPECT_NE(result, nullptr) << property;
  return result == nullptr ? Outcome::kUnknown : result->outcome;
}

const Violation& first_violation(const Verdict& verdict, std::string_view property) {
  const PropertyResult* result = verdict.find(property);
  EXPECT_NE(result, nullptr);
  EXPECT_FALSE(result->violations.empty());
  static const Violation kNone;
  return result == nullptr || result->violations.empty() ? kNone : result->violations[0];
}

TEST(CheckerEdge, SequentialHoldsAreValidOnEveryProperty) {
  HistoryBuilder h;
  h.acquire(0, 1, "w1", "L", 1).release(10, "w1", "L", 1).acquire(5, 12, "w2", "L", 2);
  h.release(20, "w2", "L", 2);
  Verdict verdict = check(h.build(), CheckConfig{});
  EXPECT_EQ(verdict.overall, Outcome::kValid);
  EXPECT_NE(verdict.find(kExclusionStrict), nullptr);
  EXPECT_EQ(verdict.find(kCounterNoLostUpdates), nullptr);  // not exercised: not reported
  EXPECT_EQ(verdict.stats.acquisitions, 2u);
}

TEST(CheckerEdge, UnknownAcquireIsNotAHold) {
  HistoryBuilder h;
  h.acquire(0, 1, "w1", "L", 1);
  h.ev(2, "w2", kInvoke, "acquire", "L").ev(5, "w2", kInfo, "acquire", "L");
  h.release(10, "w1", "L", 1);
  EXPECT_EQ(outcome_of(h, kExclusionStrict), Outcome::kValid);
  EXPECT_EQ(outcome_of(h, kTokensUnique), Outcome::kValid);
}

TEST(CheckerEdge, UnknownFencedWritesWidenTheFinalCount) {
  HistoryBuilder h;
  h.write(0, 1, "w1", "R", 1, kOk).write(2, 3, "w1", "R", 1, kInfo);
  HistoryBuilder within = h, above = h, below = h;
  within.final_read(10, "R", {{"count", 2}, {"token", 1}});
  above.final_read(10, "R", {{"count", 3}});
  below.final_read(10, "R", {{"count", 0}});
  EXPECT_EQ(outcome_of(within, kExclusionFenced), Outcome::kValid);
  EXPECT_EQ(outcome_of(above, kExclusionFenced), Outcome::kInvalid);
  EXPECT_EQ(outcome_of(below, kExclusionFenced), Outcome::kInvalid);
}

TEST(CheckerEdge, CrashMidHoldEndsTheHold) {
  HistoryBuilder killed, exited, alive;
  for (HistoryBuilder* h : {&killed, &exited, &alive}) h->acquire(0, 1, "w1", "L", 1);
  killed.fault(50, "kill-worker", "1", "w1");
  exited.ev(50, "harness", kInfo, "exit", "", std::nullopt, {{"worker", "w1"}, {"status", 9}});
  for (HistoryBuilder* h : {&killed, &exited, &alive}) {
    h->acquire(40, 60, "w2", "L", 2).ev(100, "harness", kInfo, "end");
  }
  EXPECT_EQ(outcome_of(killed, kExclusionStrict), Outcome::kValid);
  EXPECT_EQ(outcome_of(exited, kExclusionStrict), Outcome::kValid);
  EXPECT_EQ(outcome_of(killed, kLostSignalled), Outcome::kValid);
  Verdict verdict = check(alive.build(), config_for(kExclusionStrict));
  EXPECT_EQ(verdict.overall, Outcome::kInvalid);
  EXPECT_EQ(first_violation(verdict, kExclusionStrict).cause, "none");
  EXPECT_EQ(first_violation(verdict, kExclusionStrict).events, (std::vector<size_t>{1, 3}));
}

TEST(CheckerEdge, EqualTimestampsKeepFileOrder) {
  // w1's grant precedes w2's invoke in the file at the same instant: ordered, so w2 needs a
  // higher token.
  HistoryBuilder ordered;
  ordered.ev(10, "w1", kInvoke, "acquire", "L").ev(10, "w1", kOk, "acquire", "L", 5);
  ordered.ev(10, "w2", kInvoke, "acquire", "L").ev(20, "w2", kOk, "acquire", "L", 4);
  EXPECT_EQ(outcome_of(ordered, kTokensMonotonic), Outcome::kInvalid);
  // w2's invoke first: concurrent with w1's acquisition, any order of tokens is allowed.
  HistoryBuilder concurrent;
  concurrent.ev(10, "w1", kInvoke, "acquire", "L").ev(10, "w2", kInvoke, "acquire", "L");
  concurrent.ev(10, "w1", kOk, "acquire", "L", 5).ev(20, "w2", kOk, "acquire", "L", 4);
  EXPECT_EQ(outcome_of(concurrent, kTokensMonotonic), Outcome::kValid);
  // A release and the next grant at one instant do not overlap.
  HistoryBuilder handover;
  handover.acquire(0, 1, "w1", "L", 1).acquire(2, 10, "w2", "L", 2).release(10, "w1", "L", 1);
  EXPECT_EQ(outcome_of(handover, kExclusionStrict), Outcome::kValid);
}

TEST(CheckerEdge, PausedHolderOverlapsNewHolderWithThePauseAsCause) {
  HistoryBuilder h;
  h.acquire(0, 1, "w1", "L", 1).fault(10, "pause-worker", "7", "w1");
  h.acquire(20, 1100, "w2", "L", 2).heal(2000, "7", "pause-worker");
  h.ev(2001, "w1", kOk, "lost", "L", 1);
  Verdict strict = check(h.build(), config_for(kExclusionStrict));
  EXPECT_EQ(strict.overall, Outcome::kInvalid);
  EXPECT_EQ(first_violation(strict, kExclusionStrict).cause, "pause-worker w1 (window 7)");
  Verdict lost = check(h.build(), config_for(kLostSignalled));
  EXPECT_EQ(lost.overall, Outcome::kInvalid);
  EXPECT_EQ(first_violation(lost, kLostSignalled).cause, "pause-worker w1 (window 7)");
  EXPECT_EQ(outcome_of(h, kTokensMonotonic), Outcome::kValid);
}

TEST(CheckerEdge, TokenRestartingAfterReleaseIsNotMonotonic) {
  HistoryBuilder h;
  h.acquire(0, 1, "w1", "L", 5).release(10, "w1", "L", 5).acquire(20, 21, "w2", "L", 1);
  EXPECT_EQ(outcome_of(h, kTokensMonotonic), Outcome::kInvalid);
  EXPECT_EQ(outcome_of(h, kTokensUnique), Outcome::kValid);
  HistoryBuilder again;
  again.acquire(0, 1, "w1", "L", 1).release(10, "w1", "L", 1).acquire(20, 21, "w2", "L", 1);
  EXPECT_EQ(outcome_of(again, kTokensUnique), Outcome::kInvalid);
  HistoryBuilder other_lock;
  other_lock.acquire(0, 1, "w1", "A", 1).acquire(20, 21, "w2", "B", 1);
  EXPECT_EQ(outcome_of(other_lock, kTokensUnique), Outcome::kValid);
}

TEST(CheckerEdge, StaleFencedWriteAccepted) {
  HistoryBuilder stale, rejected, concurrent;
  for (HistoryBuilder* h : {&stale, &rejected, &concurrent}) h->write(90, 100, "w2", "R", 2, kOk);
  stale.write(200, 210, "w1", "R", 1, kOk);
  rejected.write(200, 210, "w1", "R", 1, kFail);
  concurrent.write(95, 210, "w1", "R", 1, kOk);  // invoked before w2's write completed
  Verdict verdict = check(stale.build(), config_for(kExclusionFenced));
  EXPECT_EQ(verdict.overall, Outcome::kInvalid);
  EXPECT_EQ(first_violation(verdict, kExclusionFenced).events, (std::vector<size_t>{1, 2, 3}));
  EXPECT_EQ(outcome_of(rejected, kExclusionFenced), Outcome::kValid);
  EXPECT_EQ(outcome_of(concurrent, kExclusionFenced), Outcome::kValid);
}

TEST(CheckerEdge, LostCounterUpdate) {
  HistoryBuilder h;
  h.ev(0, "w1", kOk, "read", "L", std::nullopt, {{"resource", "counter"}, {"count", 0}});
  h.ev(1, "w2", kOk, "read", "L", std::nullopt, {{"resource", "counter"}, {"count", 0}});
  h.ev(2, "w1", kOk, "write", "L", 1, {{"resource", "counter"}, {"count", 1}});
  h.ev(3, "w2", kOk, "write", "L", 2, {{"resource", "counter"}, {"count", 1}});
  HistoryBuilder lost = h, kept = h, unread = h;
  lost.final_read(10, "counter", {{"count", 1}});
  kept.final_read(10, "counter", {{"count", 2}});
  Verdict verdict = check(lost.build(), config_for(kCounterNoLostUpdates));
  EXPECT_EQ(verdict.overall, Outcome::kInvalid);
  EXPECT_EQ(first_violation(verdict, kCounterNoLostUpdates).events, (std::vector<size_t>{2, 3, 4}));
  EXPECT_EQ(outcome_of(kept, kCounterNoLostUpdates), Outcome::kValid);
  EXPECT_EQ(outcome_of(unread, kCounterNoLostUpdates), Outcome::kUnknown);
}

TEST(CheckerEdge, LivenessAfterHeal) {
  HistoryBuilder base;
  base.acquire(0, 1, "w1", "L", 1).release(5, "w1", "L", 1);
  base.fault(10, "isolate-worker", "1", "w2").ev(50, "w2", kInvoke, "acquire", "L");
  base.heal(100, "1", "isolate-worker");
  HistoryBuilder stuck = base, short_history = base, recovered = base, refaulted = base;
  stuck.ev(2000, "harness", kInfo, "end");
  short_history.ev(500, "harness", kInfo, "end");
  recovered.ev(800, "w2", kOk, "acquire", "L", 2).ev(2000, "harness", kInfo, "end");
  refaulted.fault(300, "pause-member", "2", "m1").ev(2000, "harness", kInfo, "end");
  Verdict verdict = check(stuck.build(), config_for(kLivenessRecovery));
  EXPECT_EQ(verdict.overall, Outcome::kInvalid);
  EXPECT_EQ(first_violation(verdict, kLivenessRecovery).events, (std::vector<size_t>{5, 6}));
  EXPECT_EQ(outcome_of(short_history, kLivenessRecovery), Outcome::kUnknown);
  EXPECT_EQ(outcome_of(recovered, kLivenessRecovery), Outcome::kValid);
  EXPECT_EQ(outcome_of(refaulted, kLivenessRecovery), Outcome::kValid);
}

// A fault acting again inside its window (continuous step-downs) records more events with the
// same window id: they belong to that window, whose heal is then judged like any other.
TEST(CheckerEdge, EventsInsideAnOpenWindowAreNotNewWindows) {
  HistoryBuilder stuck;
  stuck.acquire(0, 1, "w1", "L", 1).release(5, "w1", "L", 1);
  stuck.fault(10, "step-down", "1", "primary").ev(50, "w2", kInvoke, "acquire", "L");
  stuck.ev(60, "nemesis", kInfo, "step-down", "", std::nullopt, {{"window", "1"}});
  stuck.heal(100, "1", "step-down").ev(2000, "harness", kInfo, "end");
  Verdict verdict = check(stuck.build(), config_for(kLivenessRecovery));
  EXPECT_EQ(verdict.overall, Outcome::kInvalid);
  EXPECT_EQ(first_violation(verdict, kLivenessRecovery).events, (std::vector<size_t>{5, 7}));
}

TEST(CheckerEdge, LivenessWithoutFaultsCountsFromTheFirstAttempt) {
  HistoryBuilder base;
  base.ev(0, "harness", kInfo, "start").ev(5000, "w1", kInvoke, "acquire", "L");
  HistoryBuilder granted = base, starved = base;
  granted.ev(5900, "w1", kOk, "acquire", "L", 1).ev(9000, "harness", kInfo, "end");
  starved.ev(9000, "harness", kInfo, "end");
  EXPECT_EQ(outcome_of(granted, kLivenessRecovery), Outcome::kValid);
  Verdict verdict = check(starved.build(), config_for(kLivenessRecovery));
  EXPECT_EQ(verdict.overall, Outcome::kInvalid);
  EXPECT_EQ(first_violation(verdict, kLivenessRecovery).events, (std::vector<size_t>{1}));
}

TEST(CheckerEdge, LostNotificationBound) {
  HistoryBuilder base;
  base.acquire(0, 1, "w1", "L", 1).fault(5, "isolate-worker", "1", "w1");
  base.acquire(10, 100, "w2", "L", 2);
  HistoryBuilder timely = base, late = base, before = base;
  timely.ev(150, "w1", kOk, "lost", "L", 1);
  late.ev(250, "w1", kOk, "lost", "L", 1);
  before.ev(90, "w1", kOk, "lost", "L", 1);
  for (HistoryBuilder* h : {&timely, &late, &before}) h->ev(3000, "harness", kInfo, "end");
  EXPECT_EQ(outcome_of(timely, kLostSignalled), Outcome::kValid);
  EXPECT_EQ(outcome_of(before, kLostSignalled), Outcome::kValid);
  Verdict verdict = check(late.build(), config_for(kLostSignalled));
  EXPECT_EQ(verdict.overall, Outcome::kInvalid);
  EXPECT_EQ(first_violation(verdict, kLostSignalled).cause, "isolate-worker w1 (window 1)");
}

TEST(CheckerEdge, SharedHoldsMayOverlapOnlyEachOther) {
  nlohmann::json shared = {{"mode", "shared"}};
  HistoryBuilder readers, mixed;
  readers.acquire(0, 1, "w1", "L", 1, shared).acquire(2, 3, "w2", "L", 2, shared);
  mixed.acquire(0, 1, "w1", "L", 1, shared).acquire(2, 3, "w2", "L", 2);
  for (HistoryBuilder* h : {&readers, &mixed}) h->ev(100, "harness", kInfo, "end");
  EXPECT_EQ(outcome_of(readers, kExclusionStrict), Outcome::kValid);
  EXPECT_EQ(outcome_of(mixed, kExclusionStrict), Outcome::kInvalid);
}

TEST(CheckerEdge, ExplicitPropertyWithoutEventsIsUnknown) {
  HistoryBuilder h;
  h.acquire(0, 1, "w1", "L", 1);
  EXPECT_EQ(outcome_of(h, kExclusionFenced), Outcome::kUnknown);
}

TEST(CheckerConfig, RoundTripsThroughJson) {
  CheckConfig config;
  config.properties = {std::string(kTokensUnique), std::string(kLostSignalled)};
  config.liveness_bound_ns = 123;
  config.lost_bound_ns = 456;
  config.counter_resource = "ctr";
  config.violations_kept_max = 7;
  CheckConfig back = CheckConfig::from_json(config.to_json());
  EXPECT_EQ(back.properties, config.properties);
  EXPECT_EQ(back.liveness_bound_ns, 123);
  EXPECT_EQ(back.lost_bound_ns, 456);
  EXPECT_EQ(back.counter_resource, "ctr");
  EXPECT_EQ(back.violations_kept_max, 7u);
}

TEST(CheckerConfig, BadConfigNamesTheKey) {
  auto message = [](const nlohmann::json& json) {
    try {
      CheckConfig::from_json(json);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({{"bogus", 1}}).find("\"bogus\""), std::string::npos);
  EXPECT_NE(message({{"lost_bound_ns", -1}}).find("lost_bound_ns"), std::string::npos);
  EXPECT_NE(message({{"properties", {"tokens.nope"}}}).find("tokens.nope"), std::string::npos);
}

TEST(CheckerConfig, ReadFromTheStartEvent) {
  CheckConfig config;
  config.lost_bound_ns = 42;
  HistoryBuilder h;
  h.ev(0, "harness", kInfo, "start", "", std::nullopt, {{"check", config.to_json()}});
  std::optional<CheckConfig> stored = config_from_history(h.build());
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->lost_bound_ns, 42);
  EXPECT_FALSE(config_from_history({}).has_value());
}

}  // namespace
}  // namespace locklab
