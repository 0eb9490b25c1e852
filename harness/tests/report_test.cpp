// The reports: verdict.json matches the verdict, timeline.html has a lane per worker and the
// violation markers, junit.xml has one testcase per property, and `locklab check DIR` exits
// with the verdict's code.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "check_command.h"
#include "checker.h"
#include "checker_history_builder.h"
#include "checker_synthetic.h"
#include "report_json.h"
#include "report_junit.h"
#include "report_outputs.h"
#include "report_summary.h"
#include "report_timeline.h"
#include "temp_dir.h"

namespace locklab {
namespace {

using testing::HistoryBuilder;

using testing::TempDir;

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++count;
  return count;
}

// Two workers overlapping under a pause: exclusion.strict and lost.signalled violated.
std::vector<Event> overlapping_history() {
  HistoryBuilder h;
  h.ev(1, "harness", EventType::kInfo, "start", "", std::nullopt,
       {{"check", CheckConfig{}.to_json()}});
  h.acquire(1, 2, "w1", "L", 1).fault(10, "pause-worker", "1", "w1");
  h.acquire(20, 1100, "w2", "L", 2).release(1200, "w2", "L", 2);
  h.acquire(1300, 1301, "w3", "L", 3).release(1400, "w3", "L", 3);
  h.heal(3000, "1", "pause-worker").ev(3001, "w1", EventType::kOk, "lost", "L", 1);
  h.ev(20000, "harness", EventType::kInfo, "end");
  return h.build();
}

TEST(Report, VerdictJsonMatchesTheVerdict) {
  std::vector<Event> history = overlapping_history();
  Verdict verdict = check(history, CheckConfig{});
  ASSERT_EQ(verdict.overall, Outcome::kInvalid);
  nlohmann::json json = nlohmann::json::parse(verdict_to_json(history, verdict).dump());
  EXPECT_EQ(json["outcome"], "invalid");
  Verdict back = verdict_from_json(json);
  EXPECT_EQ(back.overall, verdict.overall);
  ASSERT_EQ(back.properties.size(), verdict.properties.size());
  for (size_t i = 0; i < back.properties.size(); ++i) {
    EXPECT_EQ(back.properties[i].property, verdict.properties[i].property);
    EXPECT_EQ(back.properties[i].outcome, verdict.properties[i].outcome);
    EXPECT_EQ(back.properties[i].violation_count, verdict.properties[i].violation_count);
    ASSERT_EQ(back.properties[i].violations.size(), verdict.properties[i].violations.size());
    for (size_t v = 0; v < back.properties[i].violations.size(); ++v) {
      EXPECT_EQ(back.properties[i].violations[v].message,
                verdict.properties[i].violations[v].message);
      EXPECT_EQ(back.properties[i].violations[v].events,
                verdict.properties[i].violations[v].events);
    }
  }
  EXPECT_EQ(back.stats.events, history.size());
  EXPECT_EQ(back.stats.acquisitions, 3u);
  // Each violation's events carry their history lines.
  auto strict =
      std::find_if(json["properties"].begin(), json["properties"].end(),
                   [](const nlohmann::json& p) { return p["property"] == "exclusion.strict"; });
  ASSERT_NE(strict, json["properties"].end());
  const nlohmann::json& event = (*strict)["violations"][0]["events"][0];
  EXPECT_EQ(event["line"], to_json_line(history[event["index"].get<size_t>()]));
}

TEST(Report, VerdictJsonReaderNamesMissingKeys) {
  EXPECT_THROW(verdict_from_json(nlohmann::json{{"properties", nlohmann::json::array()}}),
               std::invalid_argument);
}

TEST(Report, TimelineHasALanePerWorkerAndViolationMarkers) {
  std::vector<Event> history = overlapping_history();
  Verdict verdict = check(history, CheckConfig{});
  std::string html = render_timeline_html(history, verdict);
  EXPECT_EQ(occurrences(html, "<g class=\"lane\""), 3u);
  for (const char* worker : {"w1", "w2", "w3"})
    EXPECT_NE(html.find("data-process=\"" + std::string(worker) + "\""), std::string::npos);
  EXPECT_EQ(occurrences(html, "class=\"hold\""), 3u);
  EXPECT_GE(occurrences(html, "class=\"mark\""), 2u);
  EXPECT_EQ(occurrences(html, "<li class=\"violation\""), 3u);  // strict 2, lost 1
  EXPECT_NE(html.find("pause-worker w1"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no network
}

TEST(Report, TimelineOfAValidRunHasNoMarkers) {
  SyntheticParams params;
  params.holds = 1000;
  std::vector<Event> history = make_synthetic_history(params);
  Verdict verdict = check(history, synthetic_check_config());
  ASSERT_EQ(verdict.overall, Outcome::kValid);
  std::string html = render_timeline_html(history, verdict);
  EXPECT_EQ(occurrences(html, "class=\"mark\""), 0u);
  EXPECT_GE(occurrences(html, "class=\"hold\""), 1000u);
}

TEST(Report, JunitHasOneTestcasePerPropertyAndIsWellFormed) {
  std::vector<Event> history = overlapping_history();
  Verdict verdict = check(history, CheckConfig{});
  std::string xml = render_junit_xml(verdict, "locklab");
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 0), 0u);
  EXPECT_EQ(occurrences(xml, "<testcase "), verdict.properties.size());
  EXPECT_EQ(occurrences(xml, "<failure "), 2u);
  // Well-formed: tags balance, and no raw markup leaks from messages.
  EXPECT_EQ(occurrences(xml, "<testsuite "), occurrences(xml, "</testsuite>"));
  EXPECT_EQ(occurrences(xml, "<failure "), occurrences(xml, "</failure>"));
  EXPECT_EQ(xml.find("& "), std::string::npos);
  if (std::system("command -v xmllint >/dev/null 2>&1") == 0) {
    TempDir dir;
    std::string path = dir.path() + "/junit.xml";
    std::ofstream(path) << xml;
    EXPECT_EQ(std::system(("xmllint --noout " + path).c_str()), 0);
  }
}

TEST(Report, SummaryIsATableWithEveryProperty) {
  std::vector<Event> history = overlapping_history();
  Verdict verdict = check(history, CheckConfig{});
  std::string md = render_summary_md(verdict);
  EXPECT_NE(md.find("**invalid**"), std::string::npos);
  for (const PropertyResult& result : verdict.properties)
    EXPECT_NE(md.find("| " + result.property + " |"), std::string::npos) << result.property;
}

TEST(CheckCommand, ChecksAStoredRunAndExitsWithItsCode) {
  TempDir dir;
  {
    HistoryWriter writer(dir.path() + "/history.jsonl");
    for (const Event& event : overlapping_history()) writer.append(event);
  }
  std::ostringstream out, err;
  CheckCommandOptions options;
  options.junit_path = dir.path() + "/junit.xml";
  options.out = &out;
  options.err = &err;
  EXPECT_EQ(check_run_directory(dir.path(), options), 1);
  for (const char* file : {"verdict.json", "summary.md", "timeline.html", "junit.xml"})
    EXPECT_TRUE(std::filesystem::exists(dir.path() + "/" + file)) << file;
  EXPECT_NE(out.str().find("exclusion.strict"), std::string::npos);
  EXPECT_NE(out.str().find("timeline.html"), std::string::npos);
  nlohmann::json json = nlohmann::json::parse(read_all(dir.path() + "/verdict.json"));
  EXPECT_EQ(json["outcome"], "invalid");
}

TEST(CheckCommand, MissingOrMalformedHistoryIsAHarnessError) {
  TempDir dir;
  std::ostringstream out, err;
  CheckCommandOptions options;
  options.out = &out;
  options.err = &err;
  EXPECT_EQ(check_run_directory(dir.path(), options), 2);
  EXPECT_NE(err.str().find("history.jsonl"), std::string::npos);
  std::ofstream(dir.path() + "/history.jsonl") << "{\"t\":1}\n";
  CheckCommandResult result = run_check_command(dir.path(), options);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.error.find("history.jsonl:1"), std::string::npos) << result.error;
}

TEST(CheckCommand, ValidRunExitsZero) {
  TempDir dir;
  {
    HistoryWriter writer(dir.path() + "/history.jsonl");
    for (const Event& event : make_synthetic_history(SyntheticParams{})) writer.append(event);
  }
  std::ostringstream out, err;
  CheckCommandOptions options;
  options.out = &out;
  options.err = &err;
  EXPECT_EQ(check_run_directory(dir.path(), options), 0) << out.str() << err.str();
}

}  // namespace
}  // namespace locklab
