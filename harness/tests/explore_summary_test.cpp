// locklab explore's summaries and arguments: shard summaries merge into one (counts summed,
// findings and errors kept, the earliest first failure, cases per minute over the summed runner
// time); summaries of different explorations (seed, settings, properties judged, or not one
// split: a shard twice, another shard count) are refused; --shard and
// --time-budget parse or are refused naming the option; the exit code and last line say how many
// cases were not judged, and a run with any is never "nothing found". What this leaves out: running
// shards (the explore.* ctests).
#include <gtest/gtest.h>

#include <fstream>

#include "explore/explore.h"
#include "explore/summary.h"
#include "temp_dir.h"

namespace locklab {
namespace {

nlohmann::json shard(int index, int cases, double seconds, nlohmann::json first) {
  nlohmann::json s = new_summary("locklab explore --shard", 9, index, 2);
  s["cases"] = cases;
  s["elapsed_s"] = seconds;
  s["outcomes"] = {{"valid", cases - 1}, {"invalid", 1}};
  s["findings_by_property"] = {{"exclusion.strict", 1}};
  s["faults_covered"] = {{"pause-worker", cases}};
  s["first_failure_case"] = first;
  s["findings"] = nlohmann::json::array({{{"key", "exclusion.strict"}, {"case", first}}});
  s["shards"][0]["cases"] = cases;
  finish_summary(s);
  return s;
}

TEST(ExploreSummary, ShardSummariesMergeIntoOne) {
  const nlohmann::json merged = merge_summaries({shard(0, 10, 60, 4), shard(1, 20, 60, 3)});
  EXPECT_EQ(merged["cases"], 30);
  EXPECT_DOUBLE_EQ(merged["elapsed_s"].get<double>(), 120);
  EXPECT_DOUBLE_EQ(merged["cases_per_minute"].get<double>(), 15);
  EXPECT_EQ(merged["outcomes"]["valid"], 28);
  EXPECT_EQ(merged["outcomes"]["invalid"], 2);
  EXPECT_EQ(merged["findings_by_property"]["exclusion.strict"], 2);
  EXPECT_EQ(merged["faults_covered"]["pause-worker"], 30);
  EXPECT_EQ(merged["first_failure_case"], 3);
  EXPECT_EQ(merged["findings"].size(), 2u);
  EXPECT_EQ(merged["shards"].size(), 2u);
  EXPECT_EQ(merged["shards_missing"], nlohmann::json::array());
  EXPECT_NE(summary_markdown(merged).find("| cases | 30 |"), std::string::npos);
}

TEST(ExploreSummary, AMergeOfPartOfTheSplitNamesTheShardsItLacks) {
  const nlohmann::json merged = merge_summaries({shard(1, 10, 60, 4)});
  EXPECT_EQ(merged["shards_missing"], nlohmann::json::array({0}));
  EXPECT_NE(summary_markdown(merged).find("| shards | 1 (missing: [0]) |"), std::string::npos)
      << summary_markdown(merged);
}

TEST(ExploreSummary, SummariesOfDifferentExplorationsAreRefused) {
  nlohmann::json other = shard(1, 5, 10, nullptr);
  other["seed"] = 10;
  EXPECT_THROW(merge_summaries({shard(0, 5, 10, nullptr), other}), std::invalid_argument);
  // Shards judged on different properties are different explorations too.
  nlohmann::json narrower = shard(1, 5, 10, nullptr);
  narrower["properties"] = {"tokens.unique"};
  EXPECT_THROW(merge_summaries({shard(0, 5, 10, nullptr), narrower}), std::invalid_argument);
  nlohmann::json also_narrower = shard(0, 5, 10, nullptr);
  also_narrower["properties"] = {"tokens.unique"};
  const nlohmann::json merged = merge_summaries({also_narrower, narrower});
  EXPECT_EQ(merged["properties"], nlohmann::json({"tokens.unique"}));
  EXPECT_NE(summary_markdown(merged).find("| properties judged | tokens.unique |"),
            std::string::npos);
  // One split, each part once: a shard given twice, or shards of different splits, are refused.
  EXPECT_THROW(merge_summaries({shard(0, 5, 10, nullptr), shard(0, 5, 10, nullptr)}),
               std::invalid_argument);
  nlohmann::json of_three = shard(1, 5, 10, nullptr);
  of_three["shards"][0]["count"] = 3;
  EXPECT_THROW(merge_summaries({shard(0, 5, 10, nullptr), of_three}), std::invalid_argument);
  // The same settings typed in another order, with their own --out and --shard, are one
  // exploration; another pin is not.
  nlohmann::json a = shard(0, 5, 10, nullptr);
  nlohmann::json b = shard(1, 5, 10, nullptr);
  a["command"] = "locklab explore --seed 9 --client mongolock --shard 0/2 --out x --cases 20";
  b["command"] = "locklab explore --out=y --cases 20 --shard 1/2 --client mongolock --seed 9";
  EXPECT_EQ(merge_summaries({a, b})["cases"], 10);
  b["command"] = "locklab explore --out=y --cases 20 --shard 1/2 --client square --seed 9";
  try {
    merge_summaries({a, b});
    ADD_FAILURE() << "shards of different clients merged";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("summaries of explorations with different settings", 0),
              0u)
        << e.what();
  }
  nlohmann::json broken = shard(1, 5, 10, nullptr);
  broken.erase("outcomes");
  try {
    merge_summaries({broken});
    FAIL() << "a summary without outcomes merged";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "summary lacks \"outcomes\"");
  }
}

// A shard of 10 cases with no finding, `errors` of them not judged.
nlohmann::json quiet_shard(int index, int errors) {
  nlohmann::json s = new_summary("locklab explore --shard", 9, index, 2);
  s["cases"] = 10;
  s["outcomes"] = {{"valid", 10 - errors}};
  if (errors > 0) s["outcomes"]["harness-error"] = errors;
  for (int i = 0; i < errors; ++i) {
    s["harness_errors"].push_back({{"case", i}, {"detail", "exec: Permission denied"}});
  }
  s["shards"][0]["cases"] = 10;
  return s;
}

TEST(ExploreVerdict, CasesNotJudgedAreNeverNothingFound) {
  ExploreVerdict v = explore_verdict(quiet_shard(0, 0));
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.line, "10 cases, 10 judged, 0 findings");
  v = explore_verdict(quiet_shard(0, 3));
  EXPECT_EQ(v.exit_code, 2);
  EXPECT_EQ(v.line, "10 cases, 7 judged, 3 not judged (harness errors), 0 findings");
  // A merge carries one shard's unjudged cases into the whole exploration's verdict.
  v = explore_verdict(merge_summaries({quiet_shard(0, 0), quiet_shard(1, 1)}));
  EXPECT_EQ(v.exit_code, 2);
  EXPECT_EQ(v.line, "20 cases, 19 judged, 1 not judged (harness errors), 0 findings");
}

// A merge that holds an interrupted shard, or lacks one, covers cases nobody ran.
TEST(ExploreVerdict, APartOfTheExplorationNotRunIsNeverNothingFound) {
  nlohmann::json stopped = quiet_shard(1, 0);
  stopped["interrupted"] = true;
  ExploreVerdict v = explore_verdict(merge_summaries({quiet_shard(0, 0), stopped}));
  EXPECT_EQ(v.exit_code, 2);
  EXPECT_EQ(v.line, "20 cases, 20 judged, 0 findings, interrupted");
  v = explore_verdict(merge_summaries({quiet_shard(0, 0)}));
  EXPECT_EQ(v.exit_code, 2);
  EXPECT_EQ(v.line, "10 cases, 10 judged, 0 findings, shards missing");
}

// A summary with a key of the wrong type is refused naming its file, whichever shard it is.
TEST(ExploreMerge, ABadSummaryIsNamed) {
  testkit::TempDir good;
  testkit::TempDir bad;
  std::ofstream(good.file("summary.json")) << quiet_shard(0, 0).dump();
  nlohmann::json broken = quiet_shard(1, 0);
  broken["cases"] = "ten";
  std::ofstream(bad.file("summary.json")) << broken.dump();
  testing::internal::CaptureStderr();
  const int code = merge_command({good.path(), bad.path()}, good.file("merged"));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find(bad.file("summary.json") + ": "), std::string::npos) << err;
}

TEST(ExploreVerdict, AFindingIsReportedWhateverElseWasNotJudged) {
  nlohmann::json s = shard(0, 10, 60, 4);
  EXPECT_EQ(explore_verdict(s).exit_code, 1);
  EXPECT_EQ(explore_verdict(s).line, "10 cases, 10 judged, 1 finding");
  s["harness_errors"].push_back({{"case", 7}, {"detail", "timeout"}});
  EXPECT_EQ(explore_verdict(s).exit_code, 1);
  EXPECT_EQ(explore_verdict(s).line,
            "10 cases, 9 judged, 1 not judged (harness errors), 1 finding");
}

TEST(ExploreArguments, ShardAndDurationsParseOrNameTheOption) {
  EXPECT_EQ(parse_shard("0/1"), std::make_pair(0, 1));
  EXPECT_EQ(parse_shard("3/4"), std::make_pair(3, 4));
  for (const char* bad : {"4/4", "1", "-1/2", "1/0", "a/b", "1/2x"}) {
    EXPECT_THROW(parse_shard(bad), std::invalid_argument) << bad;
  }
  EXPECT_EQ(parse_duration_ms("90s", "--time-budget"), 90'000);
  EXPECT_EQ(parse_duration_ms("5m", "--time-budget"), 300'000);
  EXPECT_EQ(parse_duration_ms("2h", "--time-budget"), 7'200'000);
  EXPECT_EQ(parse_duration_ms("30", "--time-budget"), 30'000);
  try {
    parse_duration_ms("5 minutes", "--time-budget");
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "--time-budget: expected a duration like 90s, 5m or 2h, got \"5 minutes\"");
  }
  EXPECT_EQ(parse_duration_ms("1.5m", "--shrink-budget"), 90'000);
  // What std::stod would take but nobody means as a budget.
  for (const char* bad : {"nan", "inf", "0x10", "1e3", "-5s", "", "s"}) {
    EXPECT_THROW(parse_duration_ms(bad, "--shrink-budget"), std::invalid_argument) << bad;
  }
}

TEST(ExploreArguments, CaseSizesRampOverAtMostAHundredCasesThenAgain) {
  ExploreOptions o;
  o.cases = 10;  // one ramp over the whole exploration
  EXPECT_EQ(case_size(o, 0), 0);
  EXPECT_EQ(case_size(o, 9), 100);
  o.max_size = 40;
  EXPECT_EQ(case_size(o, 9), 40);
  o.max_size = 100;
  o.cases = 1'000'000;  // make soak: large cases come within the first hundred, then again
  EXPECT_EQ(case_size(o, 0), 0);
  EXPECT_EQ(case_size(o, kSizeRampCasesMax - 1), 100);
  EXPECT_EQ(case_size(o, kSizeRampCasesMax), 0);
  EXPECT_EQ(case_size(o, 2 * kSizeRampCasesMax - 1), 100);
  o.cases = 1;
  EXPECT_EQ(case_size(o, 0), 100);
}

}  // namespace
}  // namespace locklab
