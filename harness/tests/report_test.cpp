// The reports: verdict.json matches the verdict; timeline.html embeds rows in natural order and
// grouped, fault windows of both history vocabularies, every violation with its events placed
// in time, and nothing from the network; the run charts count every acquisition; junit.xml has
// one testcase per property; `locklab check DIR` writes them all and exits with the verdict's
// code. What these leave out: the page's script (the browser tests in tests/browser run it).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "checker/checker.h"
#include "checker/index.h"
#include "checker/synthetic.h"
#include "checker_history_builder.h"
#include "report/charts.h"
#include "report/escape.h"
#include "report/json.h"
#include "report/junit.h"
#include "report/outputs.h"
#include "report/run_model.h"
#include "report/summary.h"
#include "report/timeline.h"
#include "report/timeline_data.h"
#include "run/check_command.h"
#include "run/process.h"
#include "temp_dir.h"

namespace locklab {
namespace {

using testing::HistoryBuilder;

using testkit::TempDir;

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// xmllint's verdict on `text` as an XML file (scripts/install-deps.sh installs xmllint).
void expect_well_formed_xml(const std::string& text) {
  TempDir dir;
  const std::string path = dir.path() + "/file.xml";
  std::ofstream(path) << text;
  const ToolResult lint = run_tool({"xmllint", "--noout", path});
  EXPECT_EQ(lint.code, 0) << lint.output;
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

// The JSON the page draws from, as embedded in it.
nlohmann::json embedded_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"data\">";
  const size_t from = html.find(open);
  EXPECT_NE(from, std::string::npos);
  const size_t to = html.find("</script>", from);
  return nlohmann::json::parse(html.substr(from + open.size(), to - from - open.size()));
}

std::vector<std::string> row_names(const nlohmann::json& data) {
  std::vector<std::string> names;
  for (const auto& row : data["rows"]) names.push_back(row[0].get<std::string>());
  return names;
}

TEST(Report, TimelineHasGroupedRowsAndLinksEveryViolationToItsEvents) {
  std::vector<Event> history = overlapping_history();
  Verdict verdict = check(history, CheckConfig{});
  std::string html = render_timeline_html(history, verdict);
  nlohmann::json data = embedded_data(html);
  EXPECT_EQ(row_names(data), (std::vector<std::string>{"w1", "w2", "w3", "nemesis", "harness"}));
  EXPECT_EQ(data["holds"]["row"].size(), 3u);
  // Every violation is listed, linked from the list, and its events are placed in time.
  const size_t violations = all_violations(verdict).size();
  ASSERT_EQ(violations, 3u);  // strict 2, lost 1
  ASSERT_EQ(data["viol"].size(), violations);
  std::map<int64_t, int64_t> placed;
  for (size_t k = 0; k < data["evt"]["i"].size(); ++k)
    placed[data["evt"]["i"][k].get<int64_t>()] = data["evt"]["t"][k].get<int64_t>();
  for (size_t k = 0; k < violations; ++k) {
    EXPECT_NE(html.find("<li id=\"violation-" + std::to_string(k) + "-item\">"), std::string::npos);
    EXPECT_GE(occurrences(html, "href=\"#violation-" + std::to_string(k) + "\""), 2u)
        << "list and verdict table";
    for (const auto& e : data["viol"][k]["ev"]) {
      ASSERT_TRUE(placed.count(e.get<int64_t>())) << e;
      const Event& event = history[e.get<size_t>()];
      EXPECT_EQ(placed[e.get<int64_t>()], (event.t_ns - history.front().t_ns) / 1000);
    }
  }
  ASSERT_EQ(data["faults"].size(), 1u);
  EXPECT_EQ(data["faults"][0]["label"], "pause-worker w1");
  EXPECT_EQ(data["faults"][0]["rows"], nlohmann::json::array({0}));
}

TEST(Report, TimelineIsSelfContained) {
  std::vector<Event> history = overlapping_history();
  std::string html = render_timeline_html(history, check(history, CheckConfig{}));
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  for (size_t at = html.find("http://"); at != std::string::npos; at = html.find("http://", at + 1))
    EXPECT_EQ(html.compare(at, 26, "http://www.w3.org/2000/svg"), 0) << html.substr(at, 40);
}

TEST(Report, EventTextCannotEndTheDataScript) {
  std::vector<Event> history = overlapping_history();
  history.insert(history.end() - 1, Event{history.back().t_ns,
                                          "harness",
                                          EventType::kInfo,
                                          "note",
                                          "",
                                          std::nullopt,
                                          {{"text", "</script><script>alert(1)</script>"}}});
  std::string html = render_timeline_html(history, check(history, CheckConfig{}));
  EXPECT_EQ(occurrences(html, "<script"), 3u);  // data, error hook, main
  EXPECT_EQ(occurrences(html, "</script>"), 3u);
  bool found = false;
  const nlohmann::json data = embedded_data(html);
  for (const auto& mark : data["marks"])
    found = found || mark[3].get<std::string>().find("</script><script>") != std::string::npos;
  EXPECT_TRUE(found) << "the text survives, escaped";
}

// A right-to-left override (U+202E) in a worker id and an isolate (U+2067) in a lock name
// reach no report: the page's HTML, its data, the summary and junit.xml show their code points,
// so the text after the name keeps its order. Leaves out how a browser lays the result out (the
// browser test report_browser.names measures that).
TEST(Report, BidiControlsInNamesAreShownAsCodePoints) {
  const std::string worker = "w\u202E1", lock = "L\u2067x";
  HistoryBuilder h;
  h.ev(1, "harness", EventType::kInfo, "start", "", std::nullopt,
       {{"check", CheckConfig{}.to_json()}});
  h.acquire(1, 2, worker, lock, 1).fault(10, "pause-worker", "1", worker);
  h.acquire(20, 1100, "w2", lock, 2).release(1200, "w2", lock, 2);
  h.heal(3000, "1", "pause-worker").ev(3001, worker, EventType::kOk, "lost", lock, 1);
  h.ev(20000, "harness", EventType::kInfo, "end");
  const std::vector<Event> history = h.build();
  const Verdict verdict = check(history, CheckConfig{});
  ASSERT_EQ(verdict.overall, Outcome::kInvalid);
  const std::string html = render_timeline_html(history, verdict);
  for (const std::string& text :
       {html, render_summary_md(verdict), render_junit_xml(verdict, "bidi")}) {
    EXPECT_EQ(text.find("\u202E"), std::string::npos);
    EXPECT_EQ(text.find("\u2067"), std::string::npos);
  }
  EXPECT_NE(html.find("w[U+202E]1"), std::string::npos);
  const nlohmann::json data = embedded_data(html);
  bool row = false;
  for (const auto& r : data["rows"]) row = row || r[0] == "w[U+202E]1";
  EXPECT_TRUE(row) << data["rows"].dump();
  EXPECT_EQ(bidi_visible("a\u061Cb\u200Fc\u2069"), "a[U+061C]b[U+200F]c[U+2069]");
  EXPECT_EQ(bidi_visible("\u2060\u202F\u2070"), "\u2060\u202F\u2070") << "neighbours kept";
  EXPECT_EQ(bidi_visible("cut \xE2\x80"), "cut \xE2\x80") << "a truncated sequence is kept";
  EXPECT_EQ(markdown_cell("x\u202Ey|z"), "x[U+202E]y\\|z");
  EXPECT_EQ(xml_escape("<\u202D>"), "&lt;[U+202D]&gt;");
}

TEST(Report, RowsAreInNaturalOrder) {
  HistoryBuilder h;
  for (int w : {10, 2, 1, 11, 3}) h.ev(w, "w" + std::to_string(w), EventType::kInvoke, "acquire");
  h.fault(20, "pause-member", "1", "m10").fault(21, "pause-member", "2", "m2");
  RunModel model = RunModel::build(h.build());
  std::vector<std::string> names;
  for (const ReportRow& row : model.rows) names.push_back(row.name + "/" + row.group);
  EXPECT_EQ(names, (std::vector<std::string>{"w1/workers", "w2/workers", "w3/workers",
                                             "w10/workers", "w11/workers", "m2/members",
                                             "m10/members", "nemesis/nemesis"}));
  EXPECT_TRUE(natural_less("w9", "w10"));
  EXPECT_FALSE(natural_less("w10", "w9"));
  EXPECT_TRUE(natural_less("a", "b1"));
}

// Fault windows of both vocabularies: v1 info/heal info, v2 intent, in force and heal
// outcomes; the primary observed from a v2 role map and a step-down's value.
TEST(Report, FaultWindowsFromBothVocabulariesAndObservedPrimaries) {
  HistoryBuilder h;
  h.ev(1, "harness", EventType::kInfo, "start");
  h.fault(10, "pause-worker", "1", "w1").heal(20, "1", "pause-worker");
  h.ev(30, "nemesis", EventType::kInvoke, "isolate-member", "", std::nullopt,
       {{"window", 2}, {"targets", {"m1"}}, {"planned_ms", 100}});
  h.ev(32, "nemesis", EventType::kOk, "isolate-member", "", std::nullopt,
       {{"window", 2}, {"targets", {"m1"}}, {"roles", {{"m1", "primary"}}}});
  h.ev(130, "nemesis", EventType::kInvoke, "heal", "", std::nullopt, {{"window", 2}});
  h.ev(135, "nemesis", EventType::kOk, "heal", "", std::nullopt, {{"window", 2}});
  h.ev(140, "nemesis", EventType::kInvoke, "kill-member", "", std::nullopt,
       {{"window", 3}, {"targets", {"m0"}}});
  h.ev(141, "nemesis", EventType::kFail, "kill-member", "", std::nullopt,
       {{"window", 3}, {"error", "no such member"}, {"undone", true}});
  h.ev(150, "nemesis", EventType::kOk, "pause-member", "", std::nullopt,
       {{"window", 4}, {"targets", {"m2"}}});
  h.ev(160, "nemesis", EventType::kFail, "heal", "", std::nullopt,
       {{"window", 4}, {"error", "cannot continue"}});
  h.ev(170, "nemesis", EventType::kInfo, "step-down", "", std::nullopt,
       {{"window", 5}, {"action", "step-down"}, {"primary", "m2"}});
  h.ev(200, "harness", EventType::kInfo, "end");
  RunModel model = RunModel::build(h.build());
  ASSERT_EQ(model.windows.size(), 5u);  // the step-down's event opens its window
  const int64_t ms = 1'000'000;
  EXPECT_EQ(model.windows[0].label(), "pause-worker w1");
  EXPECT_EQ(model.windows[0].end_ns, 20 * ms);
  EXPECT_EQ(model.windows[0].status, "healed");
  EXPECT_EQ(model.windows[1].start_ns, 30 * ms);
  EXPECT_EQ(model.windows[1].in_force_ns, 32 * ms);
  EXPECT_EQ(model.windows[1].end_ns, 135 * ms);
  EXPECT_EQ(model.windows[2].status, "failed, undone");
  EXPECT_EQ(model.windows[2].end_ns, 141 * ms);
  EXPECT_EQ(model.windows[3].status, "heal failed: cannot continue");
  EXPECT_EQ(model.windows[3].end_ns, 200 * ms) << "a failed heal never heals";
  EXPECT_EQ(model.windows[4].status, "never healed");
  ASSERT_EQ(model.primaries.size(), 2u);
  EXPECT_EQ(model.primaries[0].member, "m1");
  EXPECT_EQ(model.primaries[1].member, "m2");
  EXPECT_EQ(model.row_of.count("m0"), 1u);
}

TEST(Report, ChartsCountEveryAcquisitionAndDrawEveryWindow) {
  SyntheticParams params;
  params.holds = 500;
  params.faults = 3;
  std::vector<Event> history = make_synthetic_history(params);
  RunModel model = RunModel::build(history);
  size_t acquired = 0;
  for (const Event& e : history) acquired += e.f == "acquire" && e.type == EventType::kOk;
  double counted = 0;
  for (double rate : model.series.acquisitions_per_s)
    counted += rate * static_cast<double>(model.series.bucket_ns) / 1e9;
  EXPECT_NEAR(counted, static_cast<double>(acquired), 1e-6);
  for (double waiting : model.series.waiting_workers) {
    EXPECT_GE(waiting, 0);
    EXPECT_LE(waiting, params.workers);
  }
  for (RunChart chart : {RunChart::kAcquisitions, RunChart::kWaiting}) {
    std::string svg = render_run_chart_svg(model, chart);
    EXPECT_EQ(occurrences(svg, "class=\"band\""), model.windows.size());
    EXPECT_EQ(occurrences(svg, "<polyline"), 1u);
    expect_well_formed_xml(svg);
  }
}

TEST(Report, TimelineOfAValidRunHasNoViolations) {
  SyntheticParams params;
  params.holds = 1000;
  std::vector<Event> history = make_synthetic_history(params);
  Verdict verdict = check(history, synthetic_check_config());
  ASSERT_EQ(verdict.overall, Outcome::kValid);
  std::string html = render_timeline_html(history, verdict);
  nlohmann::json data = embedded_data(html);
  EXPECT_TRUE(data["viol"].empty());
  EXPECT_EQ(html.find("id=\"violations\""), std::string::npos);
  EXPECT_GE(data["holds"]["row"].size(), 1000u);
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
  expect_well_formed_xml(xml);
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
  for (const char* file : {"verdict.json", "summary.md", "timeline.html", "junit.xml",
                           "acquisitions.svg", "waiting.svg"})
    EXPECT_TRUE(std::filesystem::exists(dir.path() + "/" + file)) << file;
  const std::string summary = read_all(dir.path() + "/summary.md");
  EXPECT_NE(summary.find("](acquisitions.svg)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("](waiting.svg)"), std::string::npos) << summary;
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

// A step-down records the primary it stepped down in value.detail.primary (v1 and v2).
TEST(Report, StepDownDetailPrimaryIsObserved) {
  HistoryBuilder h;
  h.ev(1, "harness", EventType::kInfo, "start");
  h.ev(10, "nemesis", EventType::kInfo, "step-down", "", std::nullopt,
       {{"window", 1}, {"detail", {{"primary", "m3"}}}});
  h.ev(20, "harness", EventType::kInfo, "end");
  RunModel model = RunModel::build(h.build());
  ASSERT_EQ(model.primaries.size(), 1u);
  EXPECT_EQ(model.primaries[0].member, "m3");
}

bool valid_utf8(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const unsigned char lead = static_cast<unsigned char>(text[i]);
    const size_t length = lead < 0x80         ? 1
                          : (lead >> 5) == 6  ? 2
                          : (lead >> 4) == 14 ? 3
                          : (lead >> 3) == 30 ? 4
                                              : 0;
    if (length == 0 || i + length > text.size()) return false;
    for (size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return false;
    }
    i += length;
  }
  return true;
}

// A long band label of two-byte characters is shortened on a character boundary.
TEST(Report, BandLabelsAreCutOnCharacterBoundaries) {
  HistoryBuilder h;
  h.ev(1, "harness", EventType::kInfo, "start");
  h.fault(10, "pause-worker", "1", "wωωωωωωωωωωωωωωωωωωω");  // odd byte offset
  h.ev(20, "harness", EventType::kInfo, "end");
  RunModel model = RunModel::build(h.build());
  for (RunChart chart : {RunChart::kAcquisitions, RunChart::kWaiting}) {
    const std::string svg = render_run_chart_svg(model, chart);
    EXPECT_TRUE(valid_utf8(svg));
    EXPECT_NE(svg.find("…"), std::string::npos) << "the label was shortened";
  }
}

// Windows pair as the checker pairs them: a fault without a window id is closed by a heal
// whose value.fault names it.
TEST(Report, FaultWithoutWindowIdIsClosedByItsHeal) {
  HistoryBuilder h;
  h.ev(1, "harness", EventType::kInfo, "start");
  h.ev(10, "nemesis", EventType::kInfo, "pause-worker", "", std::nullopt, {{"targets", {"w1"}}});
  h.ev(20, "nemesis", EventType::kInfo, "heal", "", std::nullopt,
       {{"fault", "pause-worker"}, {"targets", {"w1"}}});
  h.ev(100, "harness", EventType::kInfo, "end");
  const std::vector<Event> history = h.build();
  RunModel model = RunModel::build(history);
  ASSERT_EQ(model.windows.size(), 1u);
  EXPECT_EQ(model.windows[0].status, "healed");
  EXPECT_EQ(model.windows[0].end_ns, 20'000'000);
  const HistoryIndex index = HistoryIndex::build(history);
  ASSERT_EQ(index.windows.size(), 1u);
  EXPECT_EQ(index.windows[0].end_ns, model.windows[0].end_ns) << "same pairing as the checker";
}

// The report draws the checkers' windows, not windows of its own: a v1 fault repeated without a
// window id starts a second window (the report used to fold it into the first), an activation
// naming its window joins it, a heal attempt that fails leaves it open, and a fault undone at
// once is shown (status "failed, undone") though no property blames it.
TEST(Report, WindowsAreTheCheckersWindows) {
  HistoryBuilder h;
  h.ev(1, "harness", EventType::kInfo, "start");
  h.ev(10, "nemesis", EventType::kInfo, "kill-worker", "", std::nullopt, {{"targets", {"w1"}}});
  h.ev(20, "nemesis", EventType::kInfo, "kill-worker", "", std::nullopt, {{"targets", {"w2"}}});
  h.ev(30, "nemesis", EventType::kInvoke, "step-down", "", std::nullopt, {{"window", 7}});
  h.ev(31, "nemesis", EventType::kOk, "step-down", "", std::nullopt,
       {{"window", 7}, {"targets", {"m0"}}});
  h.ev(40, "nemesis", EventType::kFail, "heal", "", std::nullopt,
       {{"window", 7}, {"error", "no answer"}});
  h.ev(50, "nemesis", EventType::kFail, "isolate-member", "", std::nullopt,
       {{"window", 8}, {"undone", true}, {"error", "nft refused"}});
  h.ev(100, "harness", EventType::kInfo, "end");
  const std::vector<Event> history = h.build();
  RunModel model = RunModel::build(history);
  const std::vector<FaultWindow> pairs = collect_windows(history);
  ASSERT_EQ(model.windows.size(), 4u);
  ASSERT_EQ(pairs.size(), model.windows.size());
  for (size_t k = 0; k < pairs.size(); ++k) {
    EXPECT_EQ(model.windows[k].start_ns, pairs[k].start_ns) << k;
    EXPECT_EQ(model.windows[k].end_ns, pairs[k].end_ns) << k;
    EXPECT_EQ(model.windows[k].events, pairs[k].events) << k;
  }
  EXPECT_EQ(model.windows[0].targets, std::vector<std::string>{"w1"});
  EXPECT_EQ(model.windows[1].targets, std::vector<std::string>{"w2"});
  EXPECT_EQ(model.windows[2].in_force_ns, 31'000'000);
  EXPECT_EQ(model.windows[2].status, "heal failed: no answer");
  EXPECT_EQ(model.windows[2].end_ns, 100'000'000) << "a failed heal leaves the window open";
  EXPECT_EQ(model.windows[3].status, "failed, undone");
  EXPECT_EQ(HistoryIndex::build(history).windows.size(), 3u) << "the undone fault blames nothing";
}

// v1 windows without ids overlap on different targets: each heal closes its own (it used to
// close the newer window, leaving the older "never healed" and blamed for later violations).
// A v2 fault that never answered ok was never in force.
TEST(Report, OverlappingWindowsWithoutIdsAndFaultsNeverInForce) {
  HistoryBuilder h;
  h.ev(1, "harness", EventType::kInfo, "start");
  h.ev(100, "nemesis", EventType::kInfo, "pause-worker", "", std::nullopt, {{"targets", {"w1"}}});
  h.ev(200, "nemesis", EventType::kInfo, "pause-worker", "", std::nullopt, {{"targets", {"w2"}}});
  h.ev(600, "nemesis", EventType::kInfo, "heal", "", std::nullopt,
       {{"fault", "pause-worker"}, {"targets", {"w1"}}});
  h.ev(700, "nemesis", EventType::kInfo, "heal", "", std::nullopt,
       {{"fault", "pause-worker"}, {"targets", {"w2"}}});
  h.ev(800, "nemesis", EventType::kInvoke, "kill-worker", "", std::nullopt,
       {{"window", 3}, {"targets", {"w1"}}});
  h.ev(810, "nemesis", EventType::kFail, "kill-worker", "", std::nullopt,
       {{"window", 3}, {"error", "no such process"}});
  h.ev(900, "nemesis", EventType::kOk, "heal", "", std::nullopt, {{"window", 3}});
  h.ev(3000, "harness", EventType::kInfo, "end");
  const std::vector<Event> history = h.build();
  const HistoryIndex index = HistoryIndex::build(history);
  ASSERT_EQ(index.windows.size(), 3u);
  EXPECT_EQ(index.windows[0].end_ns, 600'000'000);
  EXPECT_EQ(index.windows[1].end_ns, 700'000'000);
  RunModel model = RunModel::build(history);
  ASSERT_EQ(model.windows.size(), 3u);
  EXPECT_EQ(model.windows[0].status, "healed");
  EXPECT_EQ(model.windows[1].status, "healed");
  EXPECT_EQ(model.windows[2].status, "never in force; healed");
  EXPECT_EQ(model.windows[2].in_force_ns, model.windows[2].end_ns);
}

// A heal without a window id and without targets (v1) closes the oldest open window of its fault.
TEST(Report, HealWithoutTargetsClosesTheOldestWindowOfItsFault) {
  HistoryBuilder h;
  h.ev(1, "harness", EventType::kInfo, "start");
  h.ev(100, "nemesis", EventType::kInfo, "pause-worker", "", std::nullopt, {{"targets", {"w1"}}});
  h.ev(200, "nemesis", EventType::kInfo, "pause-worker", "", std::nullopt, {{"targets", {"w2"}}});
  h.ev(600, "nemesis", EventType::kInfo, "heal", "", std::nullopt, {{"fault", "pause-worker"}});
  h.ev(3000, "harness", EventType::kInfo, "end");
  const std::vector<FaultWindow> windows = collect_windows(h.build());
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(windows[0].end_ns, 600'000'000);
  EXPECT_EQ(windows[1].heal_event, kNoEvent);
}

// Timestamps at the ends of int64: spans are taken without overflow and the charts keep
// their bucket limit; `locklab check` writes every report.
TEST(CheckCommand, ExtremeTimestampsAreReported) {
  TempDir dir;
  std::ofstream(dir.path() + "/history.jsonl")
      << "{\"t\":-9000000000000000000,\"process\":\"harness\",\"type\":\"info\",\"f\":\"start\","
         "\"value\":{\"scenario\":\"x\",\"seed\":1}}\n"
      << "{\"t\":9000000000000000000,\"process\":\"w1\",\"type\":\"invoke\",\"f\":\"acquire\","
         "\"lock\":\"L\"}\n";
  std::ostringstream out, err;
  CheckCommandOptions options;
  options.out = &out;
  options.err = &err;
  EXPECT_NE(check_run_directory(dir.path(), options), 2) << err.str();
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/timeline.html"));
  std::vector<Event> history = read_history(dir.path() + "/history.jsonl");
  RunModel model = RunModel::build(history);
  EXPECT_EQ(model.span_ns(), INT64_MAX);
  Verdict verdict = check(history, CheckConfig{});
  EXPECT_EQ(verdict.stats.duration_ns, INT64_MAX) << "saturated, not overflowed";
  EXPECT_LE(model.series.acquisitions_per_s.size(), 128u);
  EXPECT_GE(model.series.waiting_workers.back(), 0);
}

// Fault windows close together: every band keeps a label (its number at least) and a title
// that starts with that number.
TEST(Report, CloseFaultBandsAreAllLabelled) {
  HistoryBuilder h;
  h.ev(1, "harness", EventType::kInfo, "start");
  for (int k = 0; k < 6; ++k)
    h.fault(100 + k, "pause-worker", std::to_string(k + 1), "w" + std::to_string(k + 1));
  h.ev(100000, "harness", EventType::kInfo, "end");
  RunModel model = RunModel::build(h.build());
  ASSERT_EQ(model.windows.size(), 6u);
  const std::string svg = render_run_chart_svg(model, RunChart::kAcquisitions);
  EXPECT_EQ(occurrences(svg, "class=\"band-label\""), 6u) << svg;
  for (int k = 1; k <= 6; ++k)
    EXPECT_NE(svg.find("<title>" + std::to_string(k) + ": pause-worker"), std::string::npos);
}

// A torn line (a writer killed inside write(2)) is dropped by read_history; the count must
// reach the verdict and stderr, never vanish. Model: one unterminated prefix at the end of the
// file, as a SIGKILL mid-write leaves it.
TEST(CheckCommand, TornFragmentsAreReported) {
  TempDir dir;
  const std::vector<Event> history = make_synthetic_history(SyntheticParams{});
  {
    HistoryWriter writer(dir.path() + "/history.jsonl");
    for (const Event& event : history) writer.append(event);
  }
  std::ofstream(dir.path() + "/history.jsonl", std::ios::app)
      << to_json_line(history.back()).substr(0, 20);
  std::ostringstream out, err;
  CheckCommandOptions options;
  options.out = &out;
  options.err = &err;
  EXPECT_EQ(check_run_directory(dir.path(), options), 0) << out.str() << err.str();
  EXPECT_NE(err.str().find("1 torn"), std::string::npos) << err.str();
  nlohmann::json json = nlohmann::json::parse(read_all(dir.path() + "/verdict.json"));
  EXPECT_EQ(json["stats"]["torn_fragments"], 1) << json.dump();
}

}  // namespace
}  // namespace locklab
