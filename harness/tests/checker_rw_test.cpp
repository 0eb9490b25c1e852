// exclusion.rw and exclusion.rw-fenced on crafted reader/writer histories: each history is one
// shape the properties must judge (an overlap, a reader above max_shared, a current reader
// fenced out by another reader's higher token, a stale writer accepted), next to the same shape
// made legal. Hand-written and sequential: no threads, no crashes, no clock skew beyond the
// stated timestamps (milliseconds); leases are 2000 ms unless a test says otherwise.
#include <gtest/gtest.h>

#include "checker/checker.h"
#include "checker_history_builder.h"

namespace locklab {
namespace {

using testing::config_for;
using testing::HistoryBuilder;
constexpr auto kOk = EventType::kOk;
constexpr auto kFail = EventType::kFail;

nlohmann::json mode(const char* m, int64_t max_shared = 0, int64_t lease_ms = 2000) {
  return {{"lease_ms", lease_ms}, {"mode", m}, {"max_shared", max_shared}};
}

const PropertyResult& result_of(const HistoryBuilder& h, std::string_view property,
                                Verdict& verdict) {
  verdict = check(h.build(), config_for(property));
  const PropertyResult* result = verdict.find(property);
  EXPECT_NE(result, nullptr);
  return *result;
}

std::string outcome_of(const HistoryBuilder& h, std::string_view property) {
  Verdict verdict;
  return std::string(to_string(result_of(h, property, verdict).outcome));
}

// A lock without tokens (the square client's S/X locks): the overlap's message says "no token"
// rather than a "token ?" that reads as a token the history lost.
TEST(ExclusionRw, ATokenlessWriterOverlappingAReaderSaysNoToken) {
  HistoryBuilder h;
  nlohmann::json shared = mode("shared");
  nlohmann::json exclusive = mode("exclusive");
  shared["no_token"] = true;
  exclusive["no_token"] = true;
  h.ev(0, "w1", EventType::kInvoke, "acquire", "L");
  h.ev(1, "w1", kOk, "acquire", "L", std::nullopt, shared);
  h.ev(2, "w2", EventType::kInvoke, "acquire", "L");
  h.ev(3, "w2", kOk, "acquire", "L", std::nullopt, exclusive);
  h.ev(10, "w1", EventType::kInvoke, "release", "L");
  h.ev(11, "w1", kOk, "release", "L");
  h.ev(12, "w2", EventType::kInvoke, "release", "L");
  h.ev(13, "w2", kOk, "release", "L");
  Verdict verdict;
  const PropertyResult& result = result_of(h, kExclusionRw, verdict);
  EXPECT_EQ(result.outcome, Outcome::kInvalid);
  ASSERT_EQ(result.violation_count, 1u);
  EXPECT_NE(result.violations[0].message.find("w2 (exclusive, no token) acquired while w1"),
            std::string::npos)
      << result.violations[0].message;
}

TEST(ExclusionRw, ReadersTogetherThenAWriterAreValid) {
  HistoryBuilder h;
  h.acquire(0, 1, "w1", "L", 5, mode("shared"));
  h.acquire(2, 3, "w2", "L", 5, mode("shared"));
  h.release(10, "w1", "L", 5);
  h.release(12, "w2", "L", 5);
  h.acquire(13, 20, "w3", "L", 6, mode("exclusive"));
  h.release(30, "w3", "L", 6);
  EXPECT_EQ(outcome_of(h, kExclusionRw), "valid");
}

TEST(ExclusionRw, AWriterOverlappingAReaderIsInvalid) {
  HistoryBuilder h;
  h.acquire(0, 1, "w1", "L", 5, mode("shared"));
  h.acquire(2, 3, "w2", "L", 6, mode("exclusive"));
  h.release(10, "w1", "L", 5);
  h.release(12, "w2", "L", 6);
  Verdict verdict;
  const PropertyResult& result = result_of(h, kExclusionRw, verdict);
  EXPECT_EQ(result.outcome, Outcome::kInvalid);
  ASSERT_EQ(result.violation_count, 1u);
  EXPECT_NE(result.violations[0].message.find("w2 (exclusive, token 6) acquired while w1"),
            std::string::npos)
      << result.violations[0].message;
}

TEST(ExclusionRw, AReaderOverlappingAWriterIsInvalid) {
  HistoryBuilder h;
  h.acquire(0, 1, "w1", "L", 6, mode("exclusive"));
  h.acquire(2, 3, "w2", "L", 7, mode("shared"));
  h.release(10, "w1", "L", 6);
  h.release(12, "w2", "L", 7);
  EXPECT_EQ(outcome_of(h, kExclusionRw), "invalid");
}

TEST(ExclusionRw, ReadersAboveMaxSharedAreInvalidAndAtItValid) {
  HistoryBuilder at_limit;
  at_limit.acquire(0, 1, "w1", "L", 5, mode("shared", 2));
  at_limit.acquire(2, 3, "w2", "L", 5, mode("shared", 2));
  at_limit.release(10, "w1", "L", 5);
  at_limit.acquire(11, 12, "w3", "L", 5, mode("shared", 2));  // after w1 left: two at once
  at_limit.release(20, "w2", "L", 5);
  at_limit.release(21, "w3", "L", 5);
  EXPECT_EQ(outcome_of(at_limit, kExclusionRw), "valid");

  HistoryBuilder above;
  above.acquire(0, 1, "w1", "L", 5, mode("shared", 2));
  above.acquire(2, 3, "w2", "L", 5, mode("shared", 2));
  above.acquire(4, 5, "w3", "L", 5, mode("shared", 2));
  above.release(10, "w1", "L", 5);
  above.release(11, "w2", "L", 5);
  above.release(12, "w3", "L", 5);
  Verdict verdict;
  const PropertyResult& result = result_of(above, kExclusionRw, verdict);
  EXPECT_EQ(result.outcome, Outcome::kInvalid);
  ASSERT_EQ(result.violation_count, 1u);
  EXPECT_NE(result.violations[0].message.find("3 shared holds at once, above max_shared 2"),
            std::string::npos)
      << result.violations[0].message;
}

// Two live readers with tokens 5 and 6 (one token per hold): the later reader writes first, so
// the resource refuses the earlier, current reader. With epoch tokens both carry 5 and both
// writes are accepted.
TEST(ExclusionRwFenced, ACurrentReaderRefusedForAnotherReadersTokenIsInvalid) {
  HistoryBuilder h;
  h.acquire(0, 1, "w1", "L", 5, mode("shared"));
  h.acquire(2, 3, "w2", "L", 6, mode("shared"));
  h.write(10, 11, "w2", "RL", 6, kOk);
  h.write(20, 21, "w1", "RL", 5, kFail);
  h.release(30, "w1", "L", 5);
  h.release(31, "w2", "L", 6);
  Verdict verdict;
  const PropertyResult& result = result_of(h, kExclusionRwFenced, verdict);
  EXPECT_EQ(result.outcome, Outcome::kInvalid);
  ASSERT_EQ(result.violation_count, 1u);
  EXPECT_NE(result.violations[0].message.find("refused the write of w1 (shared, token 5)"),
            std::string::npos)
      << result.violations[0].message;

  HistoryBuilder epochs;
  epochs.acquire(0, 1, "w1", "L", 5, mode("shared"));
  epochs.acquire(2, 3, "w2", "L", 5, mode("shared"));
  epochs.write(10, 11, "w2", "RL", 5, kOk);
  epochs.write(20, 21, "w1", "RL", 5, kOk);
  epochs.release(30, "w1", "L", 5);
  epochs.release(31, "w2", "L", 5);
  EXPECT_EQ(outcome_of(epochs, kExclusionRwFenced), "valid");
}

// A writer's acquire pending at the refusal (granted later) cannot have written: the refused
// current reader is still fenced out only by the other reader's token.
TEST(ExclusionRwFenced, AWriterStillWaitingDoesNotExcuseTheRefusal) {
  HistoryBuilder h;
  h.acquire(0, 1, "w1", "L", 5, mode("shared"));
  h.acquire(2, 3, "w2", "L", 6, mode("shared"));
  h.ev(5, "w3", EventType::kInvoke, "acquire", "L", std::nullopt, {{"mode", "exclusive"}});
  h.write(10, 11, "w2", "RL", 6, kOk);
  h.write(20, 21, "w1", "RL", 5, kFail);
  h.release(30, "w1", "L", 5);
  h.release(31, "w2", "L", 6);
  h.ev(40, "w3", kOk, "acquire", "L", 7, mode("exclusive"));
  h.release(50, "w3", "L", 7);
  EXPECT_EQ(outcome_of(h, kExclusionRwFenced), "invalid");
}

// A reader refused because a writer with a higher token was granted (the exclusion broke, the
// fencing did its work), and a reader refused after its lease surely ran out: both are allowed.
TEST(ExclusionRwFenced, RefusalsAfterANewerWriterOrPastTheLeaseAreValid) {
  HistoryBuilder newer_writer;
  newer_writer.acquire(0, 1, "w1", "L", 5, mode("shared"));
  newer_writer.acquire(2, 3, "w2", "L", 6, mode("exclusive"));
  newer_writer.write(10, 11, "w2", "RL", 6, kOk);
  newer_writer.write(20, 21, "w1", "RL", 5, kFail);
  newer_writer.release(30, "w1", "L", 5);
  newer_writer.release(31, "w2", "L", 6);
  EXPECT_EQ(outcome_of(newer_writer, kExclusionRwFenced), "valid");
  EXPECT_EQ(outcome_of(newer_writer, kExclusionRw), "invalid");

  HistoryBuilder past_lease;  // w1's 100 ms lease ran out (a pause); w2 started a new epoch
  past_lease.acquire(0, 1, "w1", "L", 5, mode("shared", 0, 100));
  past_lease.acquire(200, 201, "w2", "L", 6, mode("shared", 0, 100));
  past_lease.write(210, 211, "w2", "RL", 6, kOk);
  past_lease.write(220, 221, "w1", "RL", 5, kFail);
  past_lease.release(230, "w2", "L", 6);
  EXPECT_EQ(outcome_of(past_lease, kExclusionRwFenced), "valid");
}

// A member clock moved by the refusal may have ended the lease early, by up to twice the move
// (CheckConfig::clock_fault_kinds); one moved after it changes nothing. Model: the fault's
// window and params as the nemesis records them; left out: which member granted the lease.
TEST(ExclusionRwFenced, OnlyClockFaultsBegunByTheRefusalWidenTheLeaseSkew) {
  auto refused_with_skew_at = [](std::optional<int64_t> skew_ms) {
    HistoryBuilder h;
    h.acquire(0, 1, "w1", "L", 5, mode("shared"));
    h.acquire(2, 3, "w2", "L", 6, mode("shared"));
    if (skew_ms) {
      h.ev(*skew_ms, "nemesis", EventType::kInfo, "clock-skew", "", std::nullopt,
           {{"window", "1"}, {"targets", {"m0"}}, {"params", {{"offset_ms", 1500}}}});
    }
    h.write(10, 11, "w2", "RL", 6, kOk);
    h.write(1200, 1201, "w1", "RL", 5, kFail);  // 799 ms before its 2000 ms lease's floor
    h.release(1300, "w1", "L", 5);
    h.release(1301, "w2", "L", 6);
    CheckConfig config = config_for(kExclusionRwFenced);
    config.clock_fault_kinds = {"clock-skew"};
    return std::string(to_string(check(h.build(), config).find(kExclusionRwFenced)->outcome));
  };
  EXPECT_EQ(refused_with_skew_at(std::nullopt), "invalid");
  EXPECT_EQ(refused_with_skew_at(1100), "valid");  // 250 + 3000 ms: the lease may have ended
  EXPECT_EQ(refused_with_skew_at(1250), "invalid");
}

// An extension acknowledged before the write keeps the lease surely live: a refusal then is
// judged (and here invalid), where without the extension it would not be. Leases of 1000 ms,
// the default skew allowance of 250 ms.
TEST(ExclusionRwFenced, AnAcknowledgedExtensionKeepsTheLeaseLive) {
  for (const bool extended : {true, false}) {
    HistoryBuilder h;
    h.acquire(0, 1, "w1", "L", 5, mode("shared", 0, 1000));
    if (extended) {
      h.ev(800, "w1", EventType::kInvoke, "extend", "L", 5);
      h.ev(801, "w1", kOk, "extend", "L", 5, {{"lease_ms", 1000}});
    }
    h.acquire(802, 803, "w2", "L", 6, mode("shared", 0, 1000));
    h.write(810, 811, "w2", "RL", 6, kOk);
    h.write(1200, 1201, "w1", "RL", 5, kFail);  // past 0 + 1000 - 250, before 800 + 1000 - 250
    h.release(1300, "w1", "L", 5);
    h.release(1301, "w2", "L", 6);
    EXPECT_EQ(outcome_of(h, kExclusionRwFenced), extended ? "invalid" : "valid") << extended;
  }
}

// A writer paused past its lease writes after a later epoch's reader wrote a higher token: the
// resource must refuse it. Accepted (a resource without the token check) is invalid.
TEST(ExclusionRwFenced, AStaleWriterAcceptedAfterANewerReaderIsInvalid) {
  HistoryBuilder h;
  h.acquire(0, 1, "w1", "L", 5, mode("exclusive", 0, 100));
  h.acquire(200, 201, "w2", "L", 6, mode("shared", 0, 100));
  h.write(210, 211, "w2", "RL", 6, kOk);
  h.write(220, 221, "w1", "RL", 5, kOk);
  h.release(230, "w2", "L", 6);
  Verdict verdict;
  const PropertyResult& result = result_of(h, kExclusionRwFenced, verdict);
  EXPECT_EQ(result.outcome, Outcome::kInvalid);
  ASSERT_EQ(result.violation_count, 1u);
  EXPECT_NE(result.violations[0].message.find("a stale holder was not fenced"), std::string::npos)
      << result.violations[0].message;

  HistoryBuilder refused = HistoryBuilder();
  refused.acquire(0, 1, "w1", "L", 5, mode("exclusive", 0, 100));
  refused.acquire(200, 201, "w2", "L", 6, mode("shared", 0, 100));
  refused.write(210, 211, "w2", "RL", 6, kOk);
  refused.write(220, 221, "w1", "RL", 5, kFail);
  refused.release(230, "w2", "L", 6);
  EXPECT_EQ(outcome_of(refused, kExclusionRwFenced), "valid");
}

// Readers of an older epoch that write after a newer reader epoch are not in conflict with it:
// accepting them is not a stale accept (the resource refuses them anyway by token order).
TEST(ExclusionRwFenced, OlderReaderAcceptedAfterANewerReaderIsNotStale) {
  HistoryBuilder h;
  h.acquire(0, 1, "w1", "L", 5, mode("shared", 0, 100));
  h.acquire(200, 201, "w2", "L", 6, mode("shared", 0, 100));
  h.write(210, 211, "w2", "RL", 6, kOk);
  h.write(220, 221, "w1", "RL", 5, kOk);
  h.release(230, "w2", "L", 6);
  EXPECT_EQ(outcome_of(h, kExclusionRwFenced), "valid");
}

TEST(ExclusionRw, AMutexHistoryIsNotApplicable) {
  HistoryBuilder h;
  h.acquire(0, 1, "w1", "L", 5, {{"lease_ms", 2000}});
  h.release(10, "w1", "L", 5);
  CheckConfig config = config_for(kExclusionRw);
  config.properties.clear();  // implicit selection
  Verdict verdict = check(h.build(), config);
  ASSERT_NE(verdict.find(kExclusionRw), nullptr);
  EXPECT_EQ(verdict.find(kExclusionRw)->outcome, Outcome::kNotApplicable);
  ASSERT_NE(verdict.find(kExclusionRwFenced), nullptr);
  EXPECT_EQ(verdict.find(kExclusionRwFenced)->outcome, Outcome::kNotApplicable);
}

}  // namespace
}  // namespace locklab
