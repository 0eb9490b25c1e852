// Locks without fencing tokens (a client whose row says so, or whose grants carry
// value.no_token): the token properties and the lost signal are not applicable, with the
// reason, and exclusion is judged as for any lock. Crafted histories: the model leaves out how
// the events were produced (no real client, no faults).
#include <gtest/gtest.h>

#include "checker/checker.h"
#include "checker_history_builder.h"

namespace locklab {
namespace {

using testing::HistoryBuilder;
constexpr auto kOk = EventType::kOk;
constexpr auto kInvoke = EventType::kInvoke;
constexpr auto kInfo = EventType::kInfo;

// A grant without a token, as the npm client writes it.
HistoryBuilder& grant(HistoryBuilder& h, int64_t invoke_ms, int64_t ok_ms, const std::string& p) {
  h.ev(invoke_ms, p, kInvoke, "acquire", "L1");
  return h.ev(ok_ms, p, kOk, "acquire", "L1", std::nullopt,
              {{"lease_ms", 1000}, {"no_token", true}});
}
HistoryBuilder& release(HistoryBuilder& h, int64_t t_ms, const std::string& p) {
  h.ev(t_ms, p, kInvoke, "release", "L1");
  return h.ev(t_ms + 1, p, kInfo, "release", "L1", std::nullopt, {{"error", "unknown"}});
}

TEST(CheckerTokenless, TokenPropertiesAreNotApplicableAndExclusionIsJudged) {
  HistoryBuilder h;
  grant(h, 0, 1, "w1");
  grant(h, 2, 3, "w2");  // overlaps w1's hold
  release(h, 10, "w1");
  release(h, 12, "w2");
  const Verdict v = check(h.build(), CheckConfig{});
  for (std::string_view p : {kTokensUnique, kTokensMonotonic, kLostSignalled}) {
    const PropertyResult* r = v.find(p);
    ASSERT_NE(r, nullptr) << p;
    EXPECT_EQ(r->outcome, Outcome::kNotApplicable) << p;
    EXPECT_NE(r->note.find("no fencing token"), std::string::npos) << r->note;
  }
  ASSERT_NE(v.find(kExclusionStrict), nullptr);
  EXPECT_EQ(v.find(kExclusionStrict)->outcome, Outcome::kInvalid);
  EXPECT_EQ(v.overall, Outcome::kInvalid);
}

// The overlap's message says the holds carry no token, instead of a "token ?" that reads as a
// token the history lost.
TEST(CheckerTokenless, ExclusionMessageSaysNoToken) {
  HistoryBuilder h;
  grant(h, 0, 1, "w1");
  grant(h, 2, 3, "w2");
  release(h, 10, "w1");
  release(h, 12, "w2");
  const Verdict v = check(h.build(), CheckConfig{});
  const PropertyResult* r = v.find(kExclusionStrict);
  ASSERT_NE(r, nullptr);
  ASSERT_FALSE(r->violations.empty());
  const std::string& message = r->violations[0].message;
  EXPECT_NE(message.find("w2 acquired (no token) while w1 still held it (no token"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find('?'), std::string::npos) << message;
}

TEST(CheckerTokenless, StartEventNamesTheTokenlessClient) {
  HistoryBuilder h;
  h.ev(0, "harness", kInfo, "start", "", std::nullopt,
       {{"vocabulary", 2}, {"workload", "mutex"}, {"client", "c"}, {"tokens", false}});
  grant(h, 1, 2, "w1");
  release(h, 10, "w1");
  grant(h, 11, 12, "w2");
  release(h, 20, "w2");
  const Verdict v = check(h.build(), CheckConfig{});
  const PropertyResult* r = v.find(kTokensUnique);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->outcome, Outcome::kNotApplicable);
  EXPECT_NE(r->note.find("client c"), std::string::npos) << r->note;
  EXPECT_EQ(v.find(kExclusionStrict)->outcome, Outcome::kValid);
}

TEST(CheckerTokenless, OneTokenedGrantKeepsTheTokenPropertiesApplicable) {
  HistoryBuilder h;
  grant(h, 0, 1, "w1");
  release(h, 10, "w1");
  h.acquire(11, 12, "w2", "L1", 1).release(20, "w2", "L1", 1);
  const Verdict v = check(h.build(), CheckConfig{});
  ASSERT_NE(v.find(kTokensUnique), nullptr);
  EXPECT_NE(v.find(kTokensUnique)->outcome, Outcome::kNotApplicable);
}

}  // namespace
}  // namespace locklab
