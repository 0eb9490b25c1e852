// The checkers refuse a history whose worker events break their client's rules
// (checker/worker_event.h): an acquire ok without its lock, and a grant whose token contradicts
// the client's row in the client table (tokens omitted, or no_token said, by a client that
// issues them; a token from one that does not). The message names the event's position, its
// worker and the field. Crafted histories: the model leaves out how the events were produced (no
// real client; the run-time refusal of the same lines is in worker_output_test.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "checker/checker.h"
#include "checker_history_builder.h"
#include "run/check_command.h"
#include "temp_dir.h"

namespace locklab {
namespace {

using testing::HistoryBuilder;
constexpr auto kOk = EventType::kOk;
constexpr auto kInvoke = EventType::kInvoke;
constexpr auto kInfo = EventType::kInfo;

HistoryBuilder started(const nlohmann::json& client) {
  HistoryBuilder h;
  nlohmann::json value = {{"vocabulary", 2}, {"workload", "mutex"}};
  value.update(client);
  h.ev(1, "harness", kInfo, "start", "", std::nullopt, value);
  h.ev(2, "w1", kInvoke, "acquire", "L1");
  return h;
}

// The message check() throws for the history, or "" when it is accepted.
std::string refusal(const HistoryBuilder& h) {
  try {
    check(h.build(), CheckConfig{});
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

const nlohmann::json kMongolock = {{"client", "mongolock"}, {"tokens", true}};
const nlohmann::json kSquare = {{"client", "square"}, {"tokens", false}};

TEST(CheckerWorkerEvent, AnAcquireOkWithoutItsLockIsRefused) {
  HistoryBuilder h = started(kMongolock);
  h.ev(3, "w1", kOk, "acquire", "", 7, {{"lease_ms", 1000}});
  EXPECT_EQ(refusal(h),
            "bad history: history event 3 (t=3000000 ns, w1 ok acquire): lock: missing (every "
            "acquire event names the lock it concerns)");
}

TEST(CheckerWorkerEvent, AClientThatIssuesTokensMustCarryThem) {
  HistoryBuilder omitted = started(kMongolock);
  omitted.ev(3, "w1", kOk, "acquire", "L1", std::nullopt, {{"lease_ms", 1000}});
  EXPECT_NE(refusal(omitted).find("history event 3 (t=3000000 ns, w1 ok acquire): token: missing, "
                                  "but client mongolock issues fencing tokens"),
            std::string::npos)
      << refusal(omitted);
  HistoryBuilder said_none = started(kMongolock);
  said_none.ev(3, "w1", kOk, "acquire", "L1", std::nullopt, {{"no_token", true}});
  EXPECT_NE(refusal(said_none).find("w1 ok acquire): token: missing"), std::string::npos)
      << refusal(said_none);
  HistoryBuilder both = started(kMongolock);
  both.ev(3, "w1", kOk, "acquire", "L1", 7, {{"no_token", true}});
  EXPECT_NE(refusal(both).find("w1 ok acquire): value.no_token: true"), std::string::npos)
      << refusal(both);
  HistoryBuilder good = started(kMongolock);
  good.ev(3, "w1", kOk, "acquire", "L1", 7, {{"lease_ms", 1000}});
  EXPECT_EQ(refusal(good), "");
}

// The row decides, not the start event's copy of it: mongolock issues tokens even when a start
// event says otherwise.
TEST(CheckerWorkerEvent, TheClientTableDecidesForAKnownClient) {
  HistoryBuilder h = started({{"client", "mongolock"}, {"tokens", false}});
  h.ev(3, "w1", kOk, "acquire", "L1", std::nullopt, {{"no_token", true}});
  EXPECT_NE(refusal(h).find("token: missing"), std::string::npos) << refusal(h);
}

TEST(CheckerWorkerEvent, AClientWithoutTokensSaysSoAndCarriesNone) {
  HistoryBuilder token = started(kSquare);
  token.ev(3, "w1", kOk, "acquire", "L1", 7, {{"no_token", true}});
  EXPECT_NE(refusal(token).find("w1 ok acquire): token: 7, but client square issues no fencing "
                                "tokens"),
            std::string::npos)
      << refusal(token);
  HistoryBuilder silent = started(kSquare);
  silent.ev(3, "w1", kOk, "acquire", "L1", std::nullopt, {{"lease_ms", 1000}});
  EXPECT_NE(refusal(silent).find("w1 ok acquire): value.no_token: missing"), std::string::npos)
      << refusal(silent);
  HistoryBuilder good = started(kSquare);
  good.ev(3, "w1", kOk, "acquire", "L1", std::nullopt, {{"no_token", true}});
  EXPECT_EQ(refusal(good), "");
}

// A history that does not name its client (version 1, or written by hand) is judged as before:
// a grant may carry a token or say it has none.
TEST(CheckerWorkerEvent, AHistoryWithoutItsClientAcceptsEitherGrant) {
  HistoryBuilder h;
  h.ev(1, "w1", kInvoke, "acquire", "L1");
  h.ev(3, "w1", kOk, "acquire", "L1", 7, {{"lease_ms", 1000}});
  h.ev(3, "w2", kInvoke, "acquire", "L2");
  h.ev(4, "w2", kOk, "acquire", "L2", std::nullopt, {{"no_token", true}});
  EXPECT_EQ(refusal(h), "");
}

// `locklab check` on a run directory: exit 2, the message on its error stream.
TEST(CheckerWorkerEvent, LocklabCheckExitsTwoNamingTheEvent) {
  testkit::TempDir dir;
  {
    HistoryWriter history(dir.file("history.jsonl"));
    for (const Event& e : [] {
           HistoryBuilder h = started(kMongolock);
           h.ev(3, "w1", kOk, "acquire", "L1", std::nullopt, {{"lease_ms", 1000}});
           return h.build();
         }()) {
      history.append(e);
    }
  }
  std::ostringstream out, err;
  CheckCommandOptions options;
  options.out = &out;
  options.err = &err;
  const CheckCommandResult r = run_check_command(dir.path(), options);
  EXPECT_EQ(r.exit_code, kExitError);
  EXPECT_NE(err.str().find("history event 3 (t=3000000 ns, w1 ok acquire): token: missing"),
            std::string::npos)
      << err.str();
}

}  // namespace
}  // namespace locklab
