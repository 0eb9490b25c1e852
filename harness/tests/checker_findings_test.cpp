// One small crafted history per checker finding of issue 18 (findings 1-7): each is a shape the
// checkers once judged wrongly (the comment says what they said), with the verdict the history
// proves. The histories are hand-written and sequential: no threads, no crashes beyond the
// events written, and no timing beyond the stated timestamps (all in milliseconds).
#include <gtest/gtest.h>

#include <stdexcept>

#include "checker/checker.h"
#include "checker_history_builder.h"

namespace locklab {
namespace {

using testing::config_for;
using testing::HistoryBuilder;
constexpr auto kOk = EventType::kOk;
constexpr auto kInfo = EventType::kInfo;
constexpr auto kInvoke = EventType::kInvoke;

std::string outcome_of(const HistoryBuilder& builder, std::string_view property) {
  Verdict verdict = check(builder.build(), config_for(property));
  const PropertyResult* result = verdict.find(property);
  return result == nullptr ? "absent" : std::string(to_string(result->outcome));
}

nlohmann::json counter(int64_t count) {
  return {{"resource", "counter"}, {"count", count}};
}

// A counter read-modify-write of one worker: read `read`, write read + 1 with `outcome`.
void counter_write(HistoryBuilder& h, int64_t t, const std::string& p, int64_t read,
                   EventType outcome) {
  h.ev(t, p, kOk, "read", "L", std::nullopt, counter(read));
  h.ev(t + 1, p, kInvoke, "write", "L", std::nullopt, counter(read + 1));
  h.ev(t + 2, p, outcome, "write", "L", std::nullopt, counter(read + 1));
}

// Finding 1a: acknowledged write of 3, final 2, one indeterminate write. The count bound
// (2 ok + 1 unknown) absorbed it: the old checker said valid.
TEST(CheckerFinding1, AcknowledgedWriteAboveTheFinalValueIsLost) {
  HistoryBuilder h;
  counter_write(h, 0, "w1", 0, kOk);
  counter_write(h, 10, "w2", 1, kInfo);
  counter_write(h, 20, "w3", 2, kOk);
  h.final_read(100, "counter", {{"count", 2}});
  EXPECT_EQ(outcome_of(h, kCounterNoLostUpdates), "invalid");
}

// Finding 1b: two acknowledged writes of 1 (both read version 0) and an indeterminate write
// that explains the count: the old checker said valid.
TEST(CheckerFinding1, TwoAcknowledgedWritesOfOneValueAreALostUpdate) {
  HistoryBuilder h;
  counter_write(h, 0, "w1", 0, kOk);
  counter_write(h, 0, "w2", 0, kOk);
  counter_write(h, 20, "w3", 1, kInfo);
  h.final_read(100, "counter", {{"count", 2}});
  EXPECT_EQ(outcome_of(h, kCounterNoLostUpdates), "invalid");
}

// Finding 2: the indeterminate write carries the final token, so it applied; a final count of
// 1 then proves the acknowledged write was lost. The old checker said valid.
TEST(CheckerFinding2, IndeterminateWriteShownByTheFinalTokenApplied) {
  HistoryBuilder h;
  h.write(0, 1, "w1", "R", 1, kOk).write(10, 11, "w2", "R", 2, kInfo);
  h.final_read(100, "R", {{"count", 1}, {"token", 2}});
  EXPECT_EQ(outcome_of(h, kExclusionFenced), "invalid");
}

// Finding 3: fenced writes but no final read: nothing proves the accepted write survived. The
// old checker said valid (with a note).
TEST(CheckerFinding3, NoFinalReadIsUnknown) {
  HistoryBuilder h;
  h.write(0, 1, "w1", "R", 1, kOk).ev(100, "harness", kInfo, "end");
  EXPECT_EQ(outcome_of(h, kExclusionFenced), "unknown");
}

// Finding 4a: w1's acquire was invoked before the heal and granted after it, then lost at
// once; w2 and w3 starve. The old checker counted w1's grant as the recovery: valid.
TEST(CheckerFinding4, StaleAcquireIsNotARecovery) {
  HistoryBuilder h;
  h.fault(10, "isolate-worker", "1", "w1").ev(20, "w1", kInvoke, "acquire", "L");
  h.ev(30, "w2", kInvoke, "acquire", "L").ev(40, "w3", kInvoke, "acquire", "L");
  h.heal(100, "1", "isolate-worker").ev(150, "w1", kOk, "acquire", "L", 2);
  h.ev(151, "w1", kOk, "lost", "L", 2).ev(3000, "harness", kInfo, "end");
  EXPECT_EQ(outcome_of(h, kLivenessRecovery), "invalid");
}

// Finding 4b: w1 starves on L1 while w2 is granted L2. The old checker judged all locks
// together: valid.
TEST(CheckerFinding4, StarvationOnOneLockIsNotHiddenByAnother) {
  HistoryBuilder h;
  h.fault(10, "pause-member", "1", "m1").ev(20, "w1", kInvoke, "acquire", "L1");
  h.heal(100, "1", "pause-member").acquire(200, 210, "w2", "L2", 1);
  h.release(300, "w2", "L2", 1).ev(3000, "harness", kInfo, "end");
  EXPECT_EQ(outcome_of(h, kLivenessRecovery), "invalid");
}

// Finding 4c: the fault never heals, so no recovery is judged. The old checker said valid.
TEST(CheckerFinding4, ZeroJudgedRecoveriesIsUnknown) {
  HistoryBuilder h;
  h.acquire(0, 1, "w1", "L", 1).release(5, "w1", "L", 1);
  h.fault(10, "pause-member", "1", "m1").ev(50, "w1", kInvoke, "acquire", "L");
  h.ev(3000, "harness", kInfo, "end");
  EXPECT_EQ(outcome_of(h, kLivenessRecovery), "unknown");
}

// Finding 4d (unsound): the harness stopped the workers 500 ms after the heal, inside the
// 1000 ms bound; w1's pending acquire was stopped, not starved. The old checker said invalid.
TEST(CheckerFinding4, AcquirePendingAtTheStopIsNotStarved) {
  HistoryBuilder h;
  h.acquire(0, 1, "w1", "L", 1).release(5, "w1", "L", 1);
  h.fault(10, "pause-member", "1", "m1").ev(50, "w1", kInvoke, "acquire", "L");
  h.heal(100, "1", "pause-member");
  h.ev(600, "harness", kInfo, "stop", "", std::nullopt, {{"reason", "end of run"}});
  h.ev(610, "w1", EventType::kFail, "acquire", "L", std::nullopt, {{"reason", "cancelled"}});
  h.ev(2000, "harness", kInfo, "end");
  EXPECT_NE(outcome_of(h, kLivenessRecovery), "invalid");
}

// Finding 5: w1 asked first, w2 was granted token 5 and released, then w1's grant of token 3
// completed. Token order puts w1 first, but w1's lease (from its invoke) was still live when
// w2 was granted. The old checker never compared the two (w1 asked before w2's grant): valid.
TEST(CheckerFinding5, LowerTokenGrantedAcrossAnotherGrant) {
  HistoryBuilder h;
  h.ev(0, "w1", kInvoke, "acquire", "L").acquire(1, 2, "w2", "L", 5, {{"lease_ms", 1000}});
  h.release(10, "w2", "L", 5).ev(12, "w1", kOk, "acquire", "L", 3, {{"lease_ms", 1000}});
  EXPECT_EQ(outcome_of(h, kTokensMonotonic), "invalid");
}

// The same shape under a member clock fault: begun by w1's ok it may have ended w1's lease up
// to twice its move early (CheckConfig::clock_fault_kinds), so no order is ruled out; begun
// after w1's ok, or of a kind not named, it changes nothing.
TEST(CheckerFinding5, OnlyClockFaultsBegunByTheGrantWidenTheLeaseSkew) {
  auto judged = [](std::optional<int64_t> skew_ms, std::vector<std::string> kinds) {
    HistoryBuilder h;
    h.ev(0, "w1", kInvoke, "acquire", "L").acquire(1, 2, "w2", "L", 5, {{"lease_ms", 1000}});
    if (skew_ms) {
      h.ev(*skew_ms, "nemesis", EventType::kInfo, "clock-jump", "", std::nullopt,
           {{"window", "1"}, {"targets", {"m0"}}, {"params", {{"jump_ms", -600}}}});
    }
    h.release(10, "w2", "L", 5).ev(12, "w1", kOk, "acquire", "L", 3, {{"lease_ms", 1000}});
    h.ev(20, "harness", EventType::kInfo, "end");
    CheckConfig config = config_for(kTokensMonotonic);
    config.clock_fault_kinds = std::move(kinds);
    return std::string(to_string(check(h.build(), config).find(kTokensMonotonic)->outcome));
  };
  EXPECT_EQ(judged(std::nullopt, {"clock-jump"}), "invalid");
  EXPECT_EQ(judged(5, {"clock-jump"}), "valid");  // 250 + 1200 ms > the 1000 ms lease
  EXPECT_EQ(judged(15, {"clock-jump"}), "invalid");
  EXPECT_EQ(judged(5, {"clock-skew"}), "invalid");
}

// Finding 6a: w1 gets `lost` but goes on writing with its token (honour_lost = false in a v1
// history) while w2 holds the lock. The old checker ended w1's hold at `lost`: valid.
TEST(CheckerFinding6, WritesAfterLostExtendTheHold) {
  HistoryBuilder h;
  h.acquire(0, 1, "w1", "L", 1).ev(50, "w1", kOk, "lost", "L", 1);
  h.acquire(40, 60, "w2", "L", 2).write(70, 80, "w1", "R", 1, kOk);
  h.release(90, "w1", "L", 1).release(95, "w2", "L", 2);
  EXPECT_EQ(outcome_of(h, kExclusionStrict), "invalid");
}

// Finding 6b: the first other-process hold after w1's (shared) one is another shared hold, not
// a takeover; w3's exclusive grant is, and w1 is never told. The old checker looked only at the
// first other hold: valid.
TEST(CheckerFinding6, LostSignalledLooksAtEveryOtherHold) {
  nlohmann::json shared = {{"mode", "shared"}};
  HistoryBuilder h;
  h.acquire(0, 1, "w1", "L", 1, shared).acquire(5, 10, "w2", "L", 2, shared);
  h.release(20, "w2", "L", 2).acquire(25, 30, "w3", "L", 3).ev(3000, "harness", kInfo, "end");
  EXPECT_EQ(outcome_of(h, kLostSignalled), "invalid");
}

// Finding 6c: a late `lost` for w1's previous token 1 arrives while w1 holds token 3; it must
// not end that hold. The old checker ended it, so w2's overlapping grant looked valid.
TEST(CheckerFinding6, LostMustMatchItsToken) {
  HistoryBuilder h;
  h.acquire(0, 1, "w1", "L", 1).release(10, "w1", "L", 1).acquire(15, 20, "w1", "L", 3);
  h.ev(30, "w1", kOk, "lost", "L", 1).acquire(35, 40, "w2", "L", 4);
  h.ev(3000, "harness", kInfo, "end");
  EXPECT_EQ(outcome_of(h, kExclusionStrict), "invalid");
}

// Finding 7a: unknown has its own exit code (3); the old code gave 2, the harness-error code.
TEST(CheckerFinding7, UnknownHasItsOwnExitCode) {
  EXPECT_EQ(exit_code(Outcome::kValid), 0);
  EXPECT_EQ(exit_code(Outcome::kInvalid), 1);
  EXPECT_EQ(exit_code(Outcome::kUnknown), 3);
}

// Finding 7b: an implicitly selected property without events is reported (not applicable,
// with its reason), never dropped. The old checker left it out of the verdict.
TEST(CheckerFinding7, ImplicitPropertyWithoutEventsIsReported) {
  HistoryBuilder h;
  h.acquire(0, 1, "w1", "L", 1).release(10, "w1", "L", 1);
  Verdict verdict = check(h.build(), CheckConfig{});
  const PropertyResult* counter_result = verdict.find(kCounterNoLostUpdates);
  ASSERT_NE(counter_result, nullptr);
  EXPECT_EQ(to_string(counter_result->outcome), "not-applicable");
  EXPECT_FALSE(counter_result->note.empty());
  EXPECT_EQ(verdict.overall, Outcome::kValid);
}

// Findings of issue 18, second round (P1-P8). Same model as above: hand-written sequential
// histories, no threads, crashes only as written (kill and exit events), no clock skew.
namespace p18 {

HistoryBuilder v2_start(std::string_view workload) {
  HistoryBuilder h;
  h.ev(0, "harness", kInfo, "start", "", std::nullopt,
       {{"vocabulary", 2}, {"workload", std::string(workload)}});
  return h;
}

// A v2 fenced write with its id, accepted unless `outcome` says otherwise.
void fenced(HistoryBuilder& h, int64_t t, const std::string& id, EventType outcome = kOk) {
  h.ev(t, "w1", kInvoke, "write", "L", 1, {{"resource", "r"}, {"id", id}});
  h.ev(t + 1, "w1", outcome, "write", "L", 1, {{"resource", "r"}});
}

nlohmann::json listed(std::initializer_list<const char*> ids) {
  nlohmann::json list = nlohmann::json::array();
  for (const char* id : ids) list.push_back({{"id", id}, {"token", 1}});
  return list;
}

// P1: the final read keeps only the newest writes (count counts them all). w1-1 applied before
// the kept window's first entry: unknown whether it is there, not lost. Old verdict: invalid.
TEST(CheckerFinding18P1, WritesOlderThanTheKeptWindowAreNotLost) {
  HistoryBuilder h = v2_start("fenced");
  h.acquire(10, 11, "w1", "L", 1);
  fenced(h, 12, "w1-1");
  fenced(h, 14, "w1-2");
  fenced(h, 16, "w1-3");
  h.release(20, "w1", "L", 1);
  h.final_read(40, "r", {{"token", 1}, {"count", 3}, {"writes", listed({"w1-2", "w1-3"})}});
  EXPECT_EQ(outcome_of(h, kExclusionFenced), "valid");
}

// P1 companion: w1-3 was invoked after the window's first entry (w1-2) completed, so it
// applied after it and must be in the window: its absence is still a lost write.
TEST(CheckerFinding18P1, WriteNewerThanTheWindowStartIsStillJudged) {
  HistoryBuilder h = v2_start("fenced");
  h.acquire(10, 11, "w1", "L", 1);
  fenced(h, 12, "w1-1");
  fenced(h, 14, "w1-2");
  fenced(h, 16, "w1-3");
  fenced(h, 18, "w1-4");
  h.release(20, "w1", "L", 1);
  h.final_read(40, "r", {{"token", 1}, {"count", 4}, {"writes", listed({"w1-2", "w1-4"})}});
  EXPECT_EQ(outcome_of(h, kExclusionFenced), "invalid");
}

// P2: w2's acquire of L2 was pending when w2 was killed; a dead worker waits for nothing.
// Old verdict: invalid (w2 "waiting" on L2 forever).
TEST(CheckerFinding18P2, KilledWorkerIsNotWaiting) {
  HistoryBuilder h = v2_start("mutex");
  h.acquire(10, 11, "w1", "L1", 1);
  h.ev(15, "w2", kInvoke, "acquire", "L2");
  h.ev(100, "nemesis", kInvoke, "kill-worker", "", std::nullopt,
       {{"window", "1"}, {"targets", {"w2"}}});
  h.ev(101, "nemesis", kOk, "kill-worker", "", std::nullopt,
       {{"window", "1"}, {"targets", {"w2"}}, {"roles", {{"w2", "waiting"}}}});
  h.ev(102, "harness", kInfo, "exit", "", std::nullopt, {{"worker", "w2"}, {"status", "killed"}});
  h.ev(200, "nemesis", kInvoke, "heal", "", std::nullopt,
       {{"window", "1"}, {"fault", "kill-worker"}});
  h.ev(201, "nemesis", kOk, "heal", "", std::nullopt, {{"window", "1"}, {"fault", "kill-worker"}});
  h.release(300, "w1", "L1", 1);
  h.acquire(400, 401, "w1", "L1", 2);
  h.release(5000, "w1", "L1", 2);
  h.ev(5100, "harness", kInfo, "stop", "", std::nullopt, {{"reason", "end"}});
  EXPECT_EQ(outcome_of(h, kLivenessRecovery), "valid");
}

// P3: in v2 `kill-worker info` is a begin that failed and was not undone: w1 was not killed
// and still held L when w2 acquired it. Old verdict: valid (the info ended w1's hold).
TEST(CheckerFinding18P3, FailedKillDoesNotEndTheHold) {
  HistoryBuilder h = v2_start("mutex");
  h.acquire(0, 5, "w1", "L", 1);
  h.ev(100, "nemesis", kInvoke, "kill-worker", "", std::nullopt,
       {{"window", "1"}, {"targets", {"w1"}}});
  h.ev(101, "nemesis", kInfo, "kill-worker", "", std::nullopt,
       {{"window", "1"}, {"targets", {"w1"}}, {"error", "denied"}, {"undone", false}});
  h.acquire(200, 210, "w2", "L", 2);
  h.release(300, "w2", "L", 2);
  h.release(500, "w1", "L", 1);
  EXPECT_EQ(outcome_of(h, kExclusionStrict), "invalid");
}

// P3 companion: a v1 history (no vocabulary) keeps `<fault> info` as the fault's start.
TEST(CheckerFinding18P3, V1KillInfoStillEndsTheHold) {
  HistoryBuilder h;
  h.acquire(0, 5, "w1", "L", 1);
  h.fault(101, "kill-worker", "1", "w1");
  h.acquire(200, 210, "w2", "L", 2);
  h.release(300, "w2", "L", 2);
  EXPECT_EQ(outcome_of(h, kExclusionStrict), "valid");
}

// P5: a final ok with no count, token, writes or missing read nothing. Old verdict: valid.
TEST(CheckerFinding18P5, FinalWithoutFieldsIsUnknown) {
  HistoryBuilder h = v2_start("fenced");
  h.acquire(10, 11, "w1", "L", 1);
  fenced(h, 12, "w1-1");
  h.release(20, "w1", "L", 1);
  h.final_read(40, "r", nlohmann::json::object());
  EXPECT_EQ(outcome_of(h, kExclusionFenced), "unknown");
}

// P6: a v2 fenced write without an id is bad input (it switched the resource to the count
// model, and the count hid nothing here only by luck). Old verdict: valid.
TEST(CheckerFinding18P6, V2WriteWithoutIdIsBadInput) {
  HistoryBuilder h = v2_start("fenced");
  h.acquire(10, 11, "w1", "L", 1);
  fenced(h, 12, "w1-1");
  h.write(14, 15, "w1", "r", 1, kOk);  // no id
  h.release(20, "w1", "L", 1);
  h.final_read(40, "r", {{"token", 1}, {"writes", listed({"w1-1"})}});
  EXPECT_THROW(check(h.build(), config_for(kExclusionFenced)), std::invalid_argument);
}

// A v2 counter write without the value it writes cannot be judged: an acknowledged one then a
// final 0 may be a lost update. Bad input, named; with its count the loss is found.
TEST(CheckerFinding18P6, V2CounterWriteWithoutCountIsBadInput) {
  auto history = [](nlohmann::json written) {
    HistoryBuilder h = v2_start("counter");
    h.acquire(10, 11, "w1", "L", 1);
    h.ev(12, "w1", kInvoke, "write", "L", 1, std::move(written)).ev(13, "w1", kOk, "write", "L", 1);
    h.release(20, "w1", "L", 1);
    h.final_read(40, "counter", {{"count", 0}});
    return h;
  };
  try {
    check(history({{"resource", "counter"}, {"read", 0}}).build(),
          config_for(kCounterNoLostUpdates));
    ADD_FAILURE() << "a counter write without its count was judged";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("a v2 counter write without an integer value.count"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(outcome_of(history({{"resource", "counter"}, {"read", 0}, {"count", 1}}),
                       kCounterNoLostUpdates),
            "invalid");
}

// P6 companion: two writes with one id could hide a lost write (one listed entry matching
// both): bad input.
TEST(CheckerFinding18P6, IdUsedByTwoWritesIsBadInput) {
  HistoryBuilder h = v2_start("fenced");
  h.acquire(10, 11, "w1", "L", 1);
  fenced(h, 12, "w1-1");
  fenced(h, 14, "w1-1");
  h.release(20, "w1", "L", 1);
  h.final_read(40, "r", {{"token", 1}, {"writes", listed({"w1-1"})}});
  EXPECT_THROW(check(h.build(), config_for(kExclusionFenced)), std::invalid_argument);
}

// P7: malformed fields are bad input, not judged. Old verdicts: invalid (lost), judged.
TEST(CheckerFinding18P7, MalformedFinalAndStartFieldsAreBadInput) {
  HistoryBuilder writes = v2_start("fenced");
  writes.acquire(10, 11, "w1", "L", 1);
  fenced(writes, 12, "w1-1");
  writes.final_read(40, "r", {{"token", 1}, {"count", 1}, {"writes", "oops"}});
  EXPECT_THROW(check(writes.build(), config_for(kExclusionFenced)), std::invalid_argument);
  HistoryBuilder count = v2_start("counter");
  count.final_read(40, "counter", {{"count", "3"}});
  EXPECT_THROW(check(count.build(), config_for(kCounterNoLostUpdates)), std::invalid_argument);
  HistoryBuilder start;
  start.ev(0, "harness", kInfo, "start", "", std::nullopt, {{"vocabulary", "2"}});
  start.acquire(10, 11, "w1", "L", 1);
  EXPECT_THROW(check(start.build(), config_for(kExclusionStrict)), std::invalid_argument);
  try {
    check(writes.build(), config_for(kExclusionFenced));
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("writes"), std::string::npos) << error.what();
  }
}

// P4: w2 read 1 before w3's write of 1 was invoked, so w1's indeterminate write of 1 applied;
// w3's acknowledged write of 1 then applied too: one update was lost. Old verdict: valid.
// Left out: reads served by a write later rolled back (they still prove it applied once).
TEST(CheckerFinding18P4, ReadProvesAnIndeterminateWriteApplied) {
  HistoryBuilder h = v2_start("counter");
  auto write = [&](int64_t t, const std::string& p, int64_t read, EventType outcome) {
    h.ev(t, p, kOk, "read", "L", std::nullopt, counter(read));
    h.ev(t + 1, p, kInvoke, "write", "L", std::nullopt,
         {{"resource", "counter"}, {"count", read + 1}, {"read", read}});
    h.ev(t + 2, p, outcome, "write", "L", std::nullopt, {{"resource", "counter"}});
  };
  write(10, "w1", 0, kInfo);
  h.ev(20, "w2", kOk, "read", "L", std::nullopt, counter(1));
  write(30, "w3", 0, kOk);
  write(40, "w2", 1, kOk);
  h.final_read(100, "counter", {{"count", 2}});
  EXPECT_EQ(outcome_of(h, kCounterNoLostUpdates), "invalid");
}

// P4 companion: when the read could have been served by either write of 1, neither is proven.
TEST(CheckerFinding18P4, ReadWithTwoCandidatesProvesNothing) {
  HistoryBuilder h = v2_start("counter");
  auto write = [&](int64_t t, const std::string& p, int64_t read, EventType outcome) {
    h.ev(t, p, kOk, "read", "L", std::nullopt, counter(read));
    h.ev(t + 1, p, kInvoke, "write", "L", std::nullopt,
         {{"resource", "counter"}, {"count", read + 1}, {"read", read}});
    h.ev(t + 2, p, outcome, "write", "L", std::nullopt, {{"resource", "counter"}});
  };
  write(10, "w1", 0, kInfo);
  write(30, "w3", 0, kOk);
  h.ev(35, "w2", kOk, "read", "L", std::nullopt, counter(1));
  write(40, "w2", 1, kOk);
  h.final_read(100, "counter", {{"count", 2}});
  EXPECT_EQ(outcome_of(h, kCounterNoLostUpdates), "valid");
}

}  // namespace p18
}  // namespace
}  // namespace locklab
