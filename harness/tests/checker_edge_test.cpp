// Hand-written histories for the checkers' edge cases, each with its exact expected outcome.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "checker/checker.h"
#include "checker_history_builder.h"

namespace locklab {
namespace {

using testing::config_for;
using testing::HistoryBuilder;
constexpr auto kOk = EventType::kOk;
constexpr auto kInfo = EventType::kInfo;
constexpr auto kFail = EventType::kFail;
constexpr auto kInvoke = EventType::kInvoke;

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
  // Not exercised: reported as not applicable, with the reason, and neutral.
  ASSERT_NE(verdict.find(kCounterNoLostUpdates), nullptr);
  EXPECT_EQ(verdict.find(kCounterNoLostUpdates)->outcome, Outcome::kNotApplicable);
  EXPECT_EQ(verdict.stats.acquisitions, 2u);
}

// Nothing tested proves nothing. Every acquire refused: each property that held, held over
// nothing, so it and the verdict are unknown. Holds but no counter write, or no fenced write:
// the write property is unknown. What shows a violation anyway stays invalid (a counter at 3
// that nobody wrote), and rw-fenced over writes that were all refused unjudged is unknown too.
// Left out: a run whose workers made a few writes (judged as usual).
TEST(CheckerEdge, AHistoryThatTestedNothingIsUnknown) {
  HistoryBuilder refused;
  refused.ev(0, "w1", kInvoke, "acquire", "L").ev(1, "w1", kFail, "acquire", "L");
  refused.ev(2, "w2", kInvoke, "acquire", "L").ev(3, "w2", kFail, "acquire", "L");
  const Verdict verdict = check(refused.build(), CheckConfig{});
  EXPECT_EQ(verdict.overall, Outcome::kUnknown);
  ASSERT_NE(verdict.find(kExclusionStrict), nullptr);
  EXPECT_EQ(verdict.find(kExclusionStrict)->outcome, Outcome::kUnknown);
  EXPECT_NE(verdict.find(kExclusionStrict)->note.find("no acquisition was granted"),
            std::string::npos);
  HistoryBuilder refused_write = refused;  // a write refused without a hold tested nothing
  refused_write.ev(4, "w1", kInvoke, "write", "L", 1, {{"resource", "R"}})
      .ev(5, "w1", kFail, "write", "L", 1, {{"resource", "R"}});
  EXPECT_EQ(outcome_of(refused_write, kExclusionStrict), Outcome::kUnknown);
  HistoryBuilder granted = refused;
  granted.acquire(4, 5, "w1", "L", 1).release(6, "w1", "L", 1);
  EXPECT_EQ(outcome_of(granted, kExclusionStrict), Outcome::kValid);

  auto held = [](const char* workload) {
    HistoryBuilder h;
    h.ev(0, "harness", kInfo, "start", "", std::nullopt,
         {{"vocabulary", 2}, {"workload", workload}});
    h.acquire(1, 2, "w1", "L", 1).release(10, "w1", "L", 1);
    return h;
  };
  HistoryBuilder counter = held("counter"), invented = held("counter");
  counter.final_read(100, "counter", {{"count", 0}});
  invented.final_read(100, "counter", {{"count", 3}});
  EXPECT_EQ(outcome_of(counter, kCounterNoLostUpdates), Outcome::kUnknown);
  EXPECT_EQ(outcome_of(invented, kCounterNoLostUpdates), Outcome::kInvalid);
  HistoryBuilder fenced = held("fenced"), rw = held("rw");
  fenced.final_read(100, "R", {{"missing", true}});
  EXPECT_EQ(outcome_of(fenced, kExclusionFenced), Outcome::kUnknown);
  EXPECT_EQ(outcome_of(rw, kExclusionRwFenced), Outcome::kUnknown);
  // rw-fenced judges accepted writes (stale?) and refusals in a surely live lease (wrong?): a
  // write refused in a hold whose grant names no lease is neither, so it still tested nothing.
  HistoryBuilder refused_in_hold = held("rw"), accepted_in_hold = held("rw");
  for (auto [h, outcome] :
       {std::pair{&refused_in_hold, kFail}, std::pair{&accepted_in_hold, kOk}}) {
    const nlohmann::json write = {{"resource", "R"}, {"id", "w1-1"}};
    h->ev(3, "w1", kInvoke, "write", "L", 1, write).ev(4, "w1", outcome, "write", "L", 1, write);
  }
  EXPECT_EQ(outcome_of(refused_in_hold, kExclusionRwFenced), Outcome::kUnknown);
  EXPECT_EQ(outcome_of(accepted_in_hold, kExclusionRwFenced), Outcome::kValid);
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
  rejected.write(200, 210, "w1", "R", 1, kFail).final_read(300, "R", {{"count", 1}, {"token", 2}});
  concurrent.write(95, 210, "w1", "R", 1, kOk);  // invoked before w2's write completed
  concurrent.final_read(300, "R", {{"count", 2}, {"token", 2}});
  Verdict verdict = check(stale.build(), config_for(kExclusionFenced));
  EXPECT_EQ(verdict.overall, Outcome::kInvalid);
  EXPECT_EQ(first_violation(verdict, kExclusionFenced).events, (std::vector<size_t>{1, 2, 3}));
  EXPECT_EQ(outcome_of(rejected, kExclusionFenced), Outcome::kValid);
  EXPECT_EQ(outcome_of(concurrent, kExclusionFenced), Outcome::kValid);
}

// v1 counter writes (no invoke): two acknowledged writes of 1 are a lost update whatever the
// final value; one after the other (read 0 then read 1) they are not.
TEST(CheckerEdge, LostCounterUpdate) {
  HistoryBuilder h, serial;
  h.ev(0, "w1", kOk, "read", "L", std::nullopt, {{"resource", "counter"}, {"count", 0}});
  h.ev(1, "w2", kOk, "read", "L", std::nullopt, {{"resource", "counter"}, {"count", 0}});
  h.ev(2, "w1", kOk, "write", "L", 1, {{"resource", "counter"}, {"count", 1}});
  h.ev(3, "w2", kOk, "write", "L", 2, {{"resource", "counter"}, {"count", 1}});
  serial.ev(0, "w1", kOk, "read", "L", std::nullopt, {{"resource", "counter"}, {"count", 0}});
  serial.ev(2, "w1", kOk, "write", "L", 1, {{"resource", "counter"}, {"count", 1}});
  serial.ev(3, "w2", kOk, "read", "L", std::nullopt, {{"resource", "counter"}, {"count", 1}});
  serial.ev(4, "w2", kOk, "write", "L", 2, {{"resource", "counter"}, {"count", 2}});
  HistoryBuilder lost = h, overwritten = h, kept = serial, unread = serial;
  lost.final_read(10, "counter", {{"count", 1}});
  overwritten.final_read(10, "counter", {{"count", 2}});
  kept.final_read(10, "counter", {{"count", 2}});
  Verdict verdict = check(lost.build(), config_for(kCounterNoLostUpdates));
  EXPECT_EQ(verdict.overall, Outcome::kInvalid);
  EXPECT_EQ(first_violation(verdict, kCounterNoLostUpdates).events, (std::vector<size_t>{2, 3}));
  EXPECT_EQ(outcome_of(overwritten, kCounterNoLostUpdates), Outcome::kInvalid);
  EXPECT_EQ(outcome_of(kept, kCounterNoLostUpdates), Outcome::kValid);
  EXPECT_EQ(outcome_of(unread, kCounterNoLostUpdates), Outcome::kUnknown);
}

// v2 counter writes: an indeterminate write of the final value applied only when no
// acknowledged write explains that value; two indeterminate writes of it prove only one.
TEST(CheckerEdge, IndeterminateCounterWriteOfTheFinalValue) {
  auto write = [](HistoryBuilder& h, int64_t t, const std::string& p, int64_t read,
                  EventType outcome) {
    nlohmann::json value = {{"resource", "counter"}, {"count", read + 1}, {"read", read}};
    h.ev(t, p, kInvoke, "write", "L", std::nullopt, value).ev(t + 1, p, outcome, "write", "L");
  };
  HistoryBuilder retried, twice;
  write(retried, 0, "w1", 0, kInfo);  // did not apply: w1 re-read 0 and wrote 1 again
  write(retried, 10, "w1", 0, kOk);
  write(twice, 0, "w1", 0, kInfo);
  write(twice, 10, "w2", 0, kInfo);
  for (HistoryBuilder* h : {&retried, &twice}) {
    h->ev(0, "harness", kInfo, "start", "", std::nullopt, {{"vocabulary", 2}});
    h->final_read(100, "counter", {{"count", 1}});
  }
  EXPECT_EQ(outcome_of(retried, kCounterNoLostUpdates), Outcome::kValid);
  EXPECT_EQ(outcome_of(twice, kCounterNoLostUpdates), Outcome::kValid);
  HistoryBuilder invented = twice;
  invented.final_read(200, "counter", {{"count", 5}});
  EXPECT_EQ(outcome_of(invented, kCounterNoLostUpdates), Outcome::kInvalid);
}

// v2 fenced final read: the list of applied write ids gives exact lost and unexpected sets.
TEST(CheckerEdge, FencedFinalWritesList) {
  auto write = [](HistoryBuilder& h, int64_t t, const std::string& p, const std::string& id,
                  int64_t token, EventType outcome) {
    h.ev(t, p, kInvoke, "write", "L", token, {{"resource", "R"}, {"id", id}});
    h.ev(t + 1, p, outcome, "write", "L", token, {{"resource", "R"}});
  };
  HistoryBuilder base;
  base.ev(0, "harness", kInfo, "start", "", std::nullopt, {{"vocabulary", 2}});
  write(base, 10, "w1", "w1-1", 1, kOk);
  write(base, 20, "w2", "w2-1", 2, kInfo);
  write(base, 30, "w3", "w3-1", 3, kFail);
  auto entry = [](const char* id, int64_t token) {
    return nlohmann::json{{"id", id}, {"token", token}};
  };
  HistoryBuilder all = base, lost = base, refused = base, reordered = base, missing = base,
                 unread = base;
  all.final_read(100, "R", {{"writes", {entry("w1-1", 1), entry("w2-1", 2)}}});
  lost.final_read(100, "R", {{"writes", {entry("w2-1", 2)}}});
  refused.final_read(100, "R", {{"writes", {entry("w1-1", 1), entry("w3-1", 3)}}});
  reordered.final_read(100, "R", {{"writes", {entry("w2-1", 2), entry("w1-1", 1)}}});
  missing.final_read(100, "R", {{"missing", true}});
  unread.ev(100, "harness", kInfo, "final", "", std::nullopt, {{"resource", "R"}, {"error", "x"}});
  EXPECT_EQ(outcome_of(all, kExclusionFenced), Outcome::kValid);
  EXPECT_EQ(outcome_of(lost, kExclusionFenced), Outcome::kInvalid);
  EXPECT_EQ(outcome_of(refused, kExclusionFenced), Outcome::kInvalid);
  EXPECT_EQ(outcome_of(reordered, kExclusionFenced), Outcome::kInvalid);
  EXPECT_EQ(outcome_of(missing, kExclusionFenced), Outcome::kInvalid);
  EXPECT_EQ(outcome_of(unread, kExclusionFenced), Outcome::kUnknown);
}

// v2 nemesis windows: a failed heal never heals; a begin that failed and was undone is over.
TEST(CheckerEdge, V2FaultWindows) {
  auto fault = [](HistoryBuilder& h, int64_t t, EventType type, nlohmann::json value) {
    value["window"] = "1";
    h.ev(t, "nemesis", type, "pause-member", "", std::nullopt, std::move(value));
  };
  auto heal = [](HistoryBuilder& h, int64_t t, EventType type) {
    h.ev(t, "nemesis", type, "heal", "", std::nullopt,
         {{"window", "1"}, {"fault", "pause-member"}});
  };
  HistoryBuilder healed, heal_failed, undone;
  for (HistoryBuilder* h : {&healed, &heal_failed, &undone}) {
    h->acquire(0, 1, "w1", "L", 1).release(5, "w1", "L", 1);
    fault(*h, 10, kInvoke, {{"targets", {"m1"}}});
    h->ev(50, "w2", kInvoke, "acquire", "L");
  }
  fault(healed, 20, kOk, {{"targets", {"m1"}}});
  heal(healed, 100, kInvoke);
  heal(healed, 120, kOk);
  fault(heal_failed, 20, kOk, {{"targets", {"m1"}}});
  heal(heal_failed, 100, kInvoke);
  heal(heal_failed, 120, kFail);
  fault(undone, 20, kFail, {{"error", "x"}, {"undone", true}});
  for (HistoryBuilder* h : {&healed, &heal_failed, &undone}) h->ev(3000, "harness", kInfo, "end");
  EXPECT_EQ(outcome_of(healed, kLivenessRecovery), Outcome::kInvalid);       // judged from 120
  EXPECT_EQ(outcome_of(heal_failed, kLivenessRecovery), Outcome::kUnknown);  // never healed
  EXPECT_EQ(outcome_of(undone, kLivenessRecovery), Outcome::kInvalid);       // over at 20
}

TEST(CheckerEdge, LivenessAfterHeal) {
  HistoryBuilder base;
  base.acquire(0, 1, "w1", "L", 1).release(5, "w1", "L", 1);
  base.fault(10, "isolate-worker", "1", "w2").ev(50, "w2", kInvoke, "acquire", "L");
  base.heal(100, "1", "isolate-worker");
  HistoryBuilder stuck = base, short_history = base, recovered = base, refaulted = base;
  stuck.ev(2000, "harness", kInfo, "end");
  short_history.ev(500, "harness", kInfo, "end");
  // w2 asked before the heal: its grant counts because the server confirmed it (release ok).
  recovered.ev(800, "w2", kOk, "acquire", "L", 2).release(900, "w2", "L", 2);
  recovered.ev(2000, "harness", kInfo, "end");
  refaulted.fault(300, "pause-member", "2", "m1").ev(2000, "harness", kInfo, "end");
  Verdict verdict = check(stuck.build(), config_for(kLivenessRecovery));
  EXPECT_EQ(verdict.overall, Outcome::kInvalid);
  EXPECT_EQ(first_violation(verdict, kLivenessRecovery).events, (std::vector<size_t>{5, 6}));
  EXPECT_EQ(outcome_of(short_history, kLivenessRecovery), Outcome::kUnknown);
  EXPECT_EQ(outcome_of(recovered, kLivenessRecovery), Outcome::kValid);
  EXPECT_EQ(outcome_of(refaulted, kLivenessRecovery), Outcome::kUnknown);  // never heals
}

// mongolock.h "Liveness under a clock that is off": a hold granted on a member clock d ahead
// lasts up to d longer, so each heal's bound grows by the movement of the member clock faults
// begun before it, and only those: a lock stuck before the first clock fault is judged by the
// plain bound (a run-wide widening once let it pass as "interrupted" by the later fault).
TEST(CheckerEdge, LivenessBoundGrowsOnlyByTheClockFaultsBeforeTheHeal) {
  CheckConfig config = config_for(kLivenessRecovery);  // 1000 ms
  config.clock_fault_kinds = {"clock-skew"};
  auto skew = [](HistoryBuilder& h, int64_t t_ms, const std::string& window, int64_t offset_ms) {
    h.ev(t_ms, "nemesis", kInfo, "clock-skew", "", std::nullopt,
         {{"window", window}, {"targets", {"m0"}}, {"params", {{"offset_ms", offset_ms}}}});
  };
  // Stuck before the first clock fault: judged by 1000 ms, not 6000.
  HistoryBuilder stuck_early;
  stuck_early.acquire(0, 1, "w1", "L", 1).release(5, "w1", "L", 1);
  stuck_early.fault(10, "isolate-worker", "1", "w2").ev(50, "w2", kInvoke, "acquire", "L");
  stuck_early.heal(100, "1", "isolate-worker");
  skew(stuck_early, 2000, "2", 5000);
  stuck_early.heal(2500, "2", "clock-skew").ev(4000, "w2", kOk, "acquire", "L", 2);
  stuck_early.release(4100, "w2", "L", 2).ev(9000, "harness", kInfo, "end");
  Verdict early = check(stuck_early.build(), config);
  ASSERT_EQ(early.overall, Outcome::kInvalid);
  EXPECT_EQ(first_violation(early, kLivenessRecovery).events, (std::vector<size_t>{5, 6}));
  // After a skew of -5000 ms (a magnitude counts): a grant 3.9 s after the heal is within
  // 1000 + 5000 ms; 6.4 s after it is not; without the kinds named, 3.9 s is too late.
  auto after_skew = [&](int64_t grant_ms) {
    HistoryBuilder h;
    h.acquire(0, 1, "w1", "L", 1).release(5, "w1", "L", 1);
    skew(h, 10, "1", -5000);
    h.ev(50, "w2", kInvoke, "acquire", "L").heal(100, "1", "clock-skew");
    h.ev(grant_ms, "w2", kOk, "acquire", "L", 2).release(grant_ms + 10, "w2", "L", 2);
    return h.ev(9000, "harness", kInfo, "end").build();
  };
  EXPECT_EQ(check(after_skew(4000), config).overall, Outcome::kValid);
  Verdict late = check(after_skew(6500), config);
  EXPECT_EQ(late.overall, Outcome::kInvalid);
  EXPECT_NE(first_violation(late, kLivenessRecovery).message.find("of member clock movement"),
            std::string::npos)
      << first_violation(late, kLivenessRecovery).message;
  EXPECT_EQ(check(after_skew(4000), config_for(kLivenessRecovery)).overall, Outcome::kInvalid);
}

// A stored history's config and params are not trusted: a bound near INT64_MAX cannot overflow
// (the recovery cannot be judged: unknown), a move that is not an integer adds nothing, and a
// huge one is capped at a day.
TEST(CheckerEdge, LivenessBoundAndClockMovesFromAStoredHistorySaturate) {
  auto stuck = [](nlohmann::json offset_ms) {
    HistoryBuilder h;
    h.acquire(0, 1, "w1", "L", 1).release(5, "w1", "L", 1);
    h.ev(10, "nemesis", kInfo, "clock-skew", "", std::nullopt,
         {{"window", "1"}, {"targets", {"m0"}}, {"params", {{"offset_ms", offset_ms}}}});
    h.ev(50, "w2", kInvoke, "acquire", "L").heal(100, "1", "clock-skew");
    return h.ev(5000, "harness", kInfo, "end").build();
  };
  CheckConfig config = config_for(kLivenessRecovery);
  config.clock_fault_kinds = {"clock-skew"};
  EXPECT_EQ(check(stuck("10000"), config).overall, Outcome::kInvalid);  // a string adds nothing
  Verdict huge = check(stuck(std::numeric_limits<int64_t>::min()), config);
  EXPECT_EQ(huge.overall, Outcome::kUnknown);  // a day more: cut short by the history's end
  config.liveness_bound_ns = std::numeric_limits<int64_t>::max() - 1;
  EXPECT_EQ(check(stuck(1000), config).overall, Outcome::kUnknown);
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
  config.clock_fault_kinds = {"clock-skew", "clock-jump"};
  CheckConfig back = CheckConfig::from_json(config.to_json());
  EXPECT_EQ(back.clock_fault_kinds, config.clock_fault_kinds);
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
  EXPECT_NE(message({{"clock_fault_kinds", "clock-skew"}}).find("clock_fault_kinds"),
            std::string::npos);
  EXPECT_NE(message({{"clock_fault_kinds", {3}}}).find("clock_fault_kinds"), std::string::npos);
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

// A violation's cause names the fault windows that intersect its span, which starts at the
// earliest event the violation rests on (docs/properties.md, "cause"). Each history below shows
// its violation only after the heal; the model leaves out the servers (the grants, reads and
// acknowledgements are taken as written), the v2 begin/heal pairs (one `info` event each) and
// every worker and lock not needed for the violation.

// Issue (a), explore case 16: w1 is granted while m0's clock is skewed back, so its lease ends
// early when the heal moves the clock forward; w2 is granted 20 ms after the heal while w1 still
// holds. The old checkers took the span from w2's grant and said "none".
TEST(CheckerCause, OverlapAfterAClockSkewHealNamesTheSkew) {
  const nlohmann::json exclusive = {{"mode", "exclusive"}};
  auto overlap = [&](int64_t heal_ms) {
    HistoryBuilder h;
    h.fault(10, "clock-skew", "1", "m0").heal(heal_ms, "1", "clock-skew");
    h.acquire(90, 100, "w1", "L", 1, exclusive).ev(150, "w2", kInvoke, "acquire", "L");
    h.ev(220, "w2", kOk, "acquire", "L", 2, exclusive);
    return h.release(240, "w1", "L", 1).release(300, "w2", "L", 2);
  };
  for (std::string_view property : {kExclusionStrict, kExclusionRw}) {
    Verdict after_heal = check(overlap(200).build(), config_for(property));
    EXPECT_EQ(after_heal.overall, Outcome::kInvalid) << property;
    EXPECT_EQ(first_violation(after_heal, property).cause, "clock-skew m0 (window 1)") << property;
    // Healed before w1's grant: neither hold was granted under the skew.
    Verdict healed_before = check(overlap(50).build(), config_for(property));
    EXPECT_EQ(first_violation(healed_before, property).cause, "none") << property;
  }
}

// Issue (b), run-counter-unsafe: w3 reads 4 and is paused before it writes; w1, granted once w3's
// lease ran out, reads 4 too. Both writes of 5 come after the heal, but w3's read came before the
// pause: the span runs from the earlier read. The old checker always said "none". A pause of an
// uninvolved worker is no cause.
TEST(CheckerCause, StaleCounterWriteAfterAPauseHealNamesThePause) {
  auto counter = [](int64_t count) {
    return nlohmann::json{{"resource", "counter"}, {"count", count}};
  };
  auto write = [](HistoryBuilder& h, int64_t t, const std::string& p, int64_t read) {
    nlohmann::json value = {{"resource", "counter"}, {"count", read + 1}, {"read", read}};
    h.ev(t, p, kInvoke, "write", "L", std::nullopt, value).ev(t + 2, p, kOk, "write", "L");
  };
  auto lost_update = [&](const std::string& paused) {
    HistoryBuilder h;
    h.ev(0, "harness", kInfo, "start", "", std::nullopt, {{"vocabulary", 2}});
    h.ev(5, "w3", kOk, "read", "L", std::nullopt, counter(4));
    h.fault(10, "pause-worker", "1", paused).heal(1000, "1", "pause-worker");
    write(h, 1001, "w3", 4);
    h.ev(1002, "w1", kOk, "read", "L", std::nullopt, counter(4));
    write(h, 1004, "w1", 4);
    return h.final_read(2000, "counter", {{"count", 5}});
  };
  Verdict paused = check(lost_update("w3").build(), config_for(kCounterNoLostUpdates));
  EXPECT_EQ(paused.overall, Outcome::kInvalid);
  EXPECT_EQ(first_violation(paused, kCounterNoLostUpdates).cause, "pause-worker w3 (window 1)");
  HistoryBuilder other = lost_update("w2");
  other.ev(1500, "w2", kOk, "read", "L", std::nullopt, counter(5));  // w2 is a worker
  Verdict uninvolved = check(other.build(), config_for(kCounterNoLostUpdates));
  EXPECT_EQ(first_violation(uninvolved, kCounterNoLostUpdates).cause, "none");
  // An acknowledged write above the final value: rolled back before the final read, here by an
  // isolation that began after the write completed.
  HistoryBuilder rolled_back;
  rolled_back.ev(0, "w1", kOk, "read", "L", std::nullopt, counter(0));
  write(rolled_back, 1, "w1", 0);
  rolled_back.fault(10, "isolate-member", "2", "m0").heal(500, "2", "isolate-member");
  rolled_back.final_read(1000, "counter", {{"count", 0}});
  Verdict below = check(rolled_back.build(), config_for(kCounterNoLostUpdates));
  EXPECT_EQ(below.overall, Outcome::kInvalid);
  EXPECT_EQ(first_violation(below, kCounterNoLostUpdates).cause, "isolate-member m0 (window 2)");
}

// Issue (c), run-iso-w1-unsafe: w2's write is accepted by the isolated primary (write concern 1)
// and missing from the final list. The old checker always said "none". The span runs to the
// final read: an isolation that begins after the write was acknowledged loses it too; one
// healed before the write is no cause.
TEST(CheckerCause, LostFencedWriteNamesTheIsolation) {
  auto lost_write = [](int64_t fault_ms, int64_t heal_ms) {
    HistoryBuilder h;
    h.ev(0, "harness", kInfo, "start", "", std::nullopt, {{"vocabulary", 2}});
    h.fault(fault_ms, "isolate-member", "1", "m0").heal(heal_ms, "1", "isolate-member");
    for (int64_t k : {1, 2}) {
      const std::string p = "w" + std::to_string(k), id = p + "-1";
      h.ev(50 * k, p, kInvoke, "write", "L", k, {{"resource", "R"}, {"id", id}});
      h.ev(50 * k + 1, p, kOk, "write", "L", k, {{"resource", "R"}});
    }
    return h.final_read(1000, "R", {{"writes", {{{"id", "w1-1"}, {"token", 1}}}}});
  };
  const std::vector<std::tuple<int64_t, int64_t, std::string>> cases = {
      {10, 500, "isolate-member m0 (window 1)"},   // in force while w2-1 was written
      {200, 500, "isolate-member m0 (window 1)"},  // begun after it was acknowledged
      {10, 40, "none"}};                           // healed before it was invoked
  for (const auto& [fault_ms, heal_ms, cause] : cases) {
    Verdict verdict = check(lost_write(fault_ms, heal_ms).build(), config_for(kExclusionFenced));
    EXPECT_EQ(verdict.overall, Outcome::kInvalid) << fault_ms;
    EXPECT_EQ(first_violation(verdict, kExclusionFenced).cause, cause) << fault_ms;
  }
}

}  // namespace
}  // namespace locklab
