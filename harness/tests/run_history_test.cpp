// What `locklab run` itself writes to the history (process "harness"): a start event, written
// once the set is ready, that says what `ok` means (write concern, fencing, honour_lost,
// workload, vocabulary) and how long the set took to come up, `stop` before the
// workers are stopped, and one `final` per resource the workload used, a missing document
// included, with the fenced resource's list of accepted writes.
//
// Model left out: faults (none are planned), elections during the final reads, more writes than
// the resource's list keeps.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include "checker/history.h"
#include "programs.h"
#include "run/process.h"
#include "temp_dir.h"

namespace locklab {
namespace {

// Two workers, one operation each, on four locks: at most two of the four resources are
// written, so at least two final reads find no document.
constexpr const char* kScenario = R"(description = "final reads of every resource"
expect = "valid"
[cluster]
members = 1
[lock]
expiry_ms = 3000
write_concern = 1
fencing = true
[workload]
kind = "fenced"
workers = 2
locks = 4
critical_section_ms = 10
operations = 1
[nemesis]
quiet_ms = 0
[check]
properties = ["tokens.unique", "exclusion.fenced"]
)";

TEST(RunHistory, EveryResourceHasAFinalAndTheStartSaysWhatOkMeans) {
  if (!testing::programs_built()) GTEST_SKIP() << "needs locklab, locklab-worker, mongosim";
  testkit::TempDir dir;
  {
    std::ofstream out(dir.file("finals.toml"));
    out << kScenario;
  }
  const ToolResult r =
      run_tool({std::string(LOCKLAB_BIN_DIR) + "/locklab", "run", dir.file("finals.toml"),
                "--cluster", "loopback", "--seed", "1", "--out", dir.file("run")},
               "", "", 120'000);
  ASSERT_EQ(r.code, 0) << r.output;
  const std::vector<Event> events = read_history(dir.file("run") + "/history.jsonl");
  ASSERT_FALSE(events.empty());

  const Event& start = events.front();
  ASSERT_EQ(start.f, "start");
  EXPECT_EQ(start.value.value("vocabulary", 0), kHistoryVocabulary);
  EXPECT_EQ(start.value["write_concern"], 1);
  EXPECT_EQ(start.value["fencing"], true);
  EXPECT_EQ(start.value["honour_lost"], true);
  EXPECT_EQ(start.value["workload"], "fenced");
  // Written once the set is ready: it says how long that took, and nothing precedes it.
  ASSERT_TRUE(start.value.contains("setup_ms")) << start.value.dump();
  EXPECT_GE(start.value["setup_ms"].get<int64_t>(), 0);

  std::map<std::string, std::vector<std::string>> accepted;  // resource -> write ids, in order
  std::map<std::string, Event> finals;
  int64_t stop_ns = -1, first_final_ns = -1;
  for (const Event& e : events) {
    if (e.f == "write" && e.type == EventType::kOk)
      accepted[e.value.value("resource", "")].push_back(e.value.value("id", ""));
    if (e.process == "harness" && e.f == "final") {
      finals[e.value.value("resource", "")] = e;
      if (first_final_ns < 0) first_final_ns = e.t_ns;
    }
    if (e.process == "harness" && e.f == "stop") stop_ns = e.t_ns;
  }
  // The workers here end on their own (operations = 1); the stop still comes before the reads.
  ASSERT_GE(stop_ns, 0) << "no stop event";
  EXPECT_LE(stop_ns, first_final_ns);

  const std::set<std::string> resources = {"RL1", "RL2", "RL3", "RL4"};
  ASSERT_EQ(finals.size(), resources.size());
  size_t missing = 0;
  for (const std::string& resource : resources) {
    ASSERT_TRUE(finals.count(resource)) << "no final read of " << resource;
    const Event& final_read = finals[resource];
    EXPECT_EQ(final_read.type, EventType::kOk) << final_read.value.dump();
    if (final_read.value.value("missing", false)) {
      ++missing;
      EXPECT_FALSE(accepted.count(resource)) << resource << " had writes but no document";
      continue;
    }
    std::vector<std::string> listed;
    for (const auto& w : final_read.value["writes"]) listed.push_back(w.value("id", ""));
    EXPECT_EQ(listed, accepted[resource]) << resource;
    EXPECT_EQ(final_read.value.value("count", int64_t{-1}),
              static_cast<int64_t>(accepted[resource].size()));
  }
  EXPECT_GE(missing, 2u);
}

}  // namespace
}  // namespace locklab
