// properties_applying_to: which properties check() judges on a run of each workload, with and
// without fencing tokens, and that it agrees with check() itself on a real-shaped history of
// that workload (a property listed as applying is never reported not-applicable). What the
// model leaves out: runs that never acquire (then nothing but the tokenless rules apply).
#include <gtest/gtest.h>

#include "checker/checker.h"
#include "checker_history_builder.h"

namespace locklab {
namespace {

using Names = std::vector<std::string>;

TEST(PropertiesApplyingTo, EachWorkloadIsJudgedOnItsOwnProperties) {
  EXPECT_EQ(properties_applying_to("mutex", true),
            (Names{"tokens.unique", "tokens.monotonic", "exclusion.strict", "liveness.recovery",
                   "lost.signalled"}));
  EXPECT_EQ(properties_applying_to("fenced", true),
            (Names{"tokens.unique", "tokens.monotonic", "exclusion.fenced", "exclusion.strict",
                   "liveness.recovery", "lost.signalled"}));
  EXPECT_EQ(properties_applying_to("counter", false),
            (Names{"exclusion.strict", "liveness.recovery", "counter.no-lost-updates"}));
  EXPECT_EQ(properties_applying_to("rw", true),
            (Names{"tokens.unique", "tokens.monotonic", "exclusion.fenced", "exclusion.strict",
                   "liveness.recovery", "lost.signalled", "exclusion.rw", "exclusion.rw-fenced"}));
}

// check() on a whole (small) run of each workload reports not-applicable exactly the properties
// outside the set.
TEST(PropertiesApplyingTo, AgreesWithWhatCheckJudgesOnARun) {
  for (const char* workload : {"mutex", "fenced", "counter", "rw"}) {
    for (bool tokens : {true, false}) {
      if (!tokens && std::string(workload) == "fenced") continue;  // no such client
      testing::HistoryBuilder b;
      b.ev(0, "harness", EventType::kInfo, "start", "", std::nullopt,
           {{"vocabulary", 2}, {"workload", workload}, {"tokens", tokens}});
      // A tokenless client's grants say so (value.no_token), as its row requires.
      const std::optional<int64_t> token = tokens ? std::optional<int64_t>(5) : std::nullopt;
      nlohmann::json grant = {{"lease_ms", 1000}, {"mode", "exclusive"}};
      if (!tokens) grant["no_token"] = true;
      b.ev(1, "w1", EventType::kInvoke, "acquire", "L1");
      b.ev(2, "w1", EventType::kOk, "acquire", "L1", token, grant);
      b.ev(3, "w1", EventType::kInvoke, "release", "L1", token);
      b.ev(4, "w1", EventType::kOk, "release", "L1", token);
      const Verdict verdict = check(b.build(), CheckConfig{});
      Names judged;
      for (const PropertyResult& r : verdict.properties) {
        if (r.outcome != Outcome::kNotApplicable) judged.push_back(r.property);
      }
      EXPECT_EQ(judged, properties_applying_to(workload, tokens)) << workload << " " << tokens;
    }
  }
}

}  // namespace
}  // namespace locklab
