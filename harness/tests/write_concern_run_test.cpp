// A scenario's numbered write concern reaches the workers as that number, for every kind of
// client (locklab-worker, a C++ seed client, the npm and Python adapters where they can run):
// three members, w:3, m2 killed at the start for good. An acquire sent after the kill cannot be
// acknowledged by three members, so none may complete ok; a worker that quietly ran at w:1
// would be granted the lock.
//
// Model left out: acquires completed within half a second of the kill (an acknowledgement m2
// gave before it died may still be on its way), and w:2 (which one dead member does not stop)
// is not told apart from w:1 here.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "checker/history.h"
#include "client/clients.h"
#include "programs.h"
#include "run/process.h"
#include "temp_dir.h"

namespace locklab {
namespace {

std::string scenario_for(const std::string& client) {
  return R"(description = "w:3 with a member down: nothing can be acknowledged"
expect = "valid"
[cluster]
members = 3
backend = "loopback"
[lock]
expiry_ms = 1000
write_concern = 3
[workload]
kind = "mutex"
client = ")" +
         client + R"("
workers = 1
duration_ms = 3000
[nemesis]
quiet_ms = 0
[[nemesis.fault]]
at_ms = 0
fault = "kill-member"
target = "m2"
duration_ms = 3000
restart = false
)";
}

class WriteConcernRunTest : public ::testing::TestWithParam<std::string> {};

TEST_P(WriteConcernRunTest, NoAcquireSentAfterTheKillIsGrantedAtW3) {
  if (!testing::programs_built()) GTEST_SKIP() << "needs locklab and the clients built";
  const ClientSpec& client = *find_client(GetParam());
  const std::string why = client_unavailable(client, ClientEnvironment::current());
  if (!why.empty()) GTEST_SKIP() << GetParam() << " cannot run here: " << why;
  testkit::TempDir dir;
  std::ofstream(dir.file("w3.toml")) << scenario_for(GetParam());
  const ToolResult r = run_tool({std::string(LOCKLAB_BIN_DIR) + "/locklab", "run",
                                 dir.file("w3.toml"), "--seed", "1", "--out", dir.file("run")},
                                "", "", 180'000);
  const std::vector<Event> events = read_history(dir.file("run") + "/history.jsonl");
  ASSERT_FALSE(events.empty()) << r.output;
  EXPECT_EQ(events.front().value["write_concern"], 3);
  int64_t killed_ns = -1;
  for (const Event& e : events) {
    if (e.process == "nemesis" && e.f == "kill-member" && e.type == EventType::kOk) {
      killed_ns = e.t_ns;
    }
  }
  ASSERT_GE(killed_ns, 0) << "the kill never happened: " << r.output;
  // Half a second after the kill no write can still be on its way to a w:3 acknowledgement
  // that m2 gave before it died: an acquire ok from then on was acknowledged without m2.
  const int64_t judged_from_ns = killed_ns + 500'000'000;
  // What a failure shows: the run's own events (the workers' and the nemesis's), as times after
  // the kill, and the members' replica-set lines, so a grant can be traced without a re-run.
  const auto story = [&] {
    std::string out = "\n--- events (ms after the kill):\n";
    for (const Event& e : events) {
      if (e.process == "harness") continue;
      out += std::to_string((e.t_ns - killed_ns) / 1'000'000) + " " + to_json_line(e) + "\n";
    }
    for (const char* member : {"m0", "m1", "m2"}) {
      std::ifstream log(dir.file("run") + "/members/" + member + ".log");
      out += std::string("--- ") + member + " (REPL lines):\n";
      for (std::string line; std::getline(log, line);) {
        if (line.find("\"REPL\"") != std::string::npos) out += line.substr(0, 400) + "\n";
      }
    }
    return out;
  };
  int invoked = 0;
  for (const Event& e : events) {
    if (e.f != "acquire") continue;
    if (e.type == EventType::kInvoke) ++invoked;
    if (e.type == EventType::kOk && e.t_ns > judged_from_ns) {
      ADD_FAILURE() << e.process << " was granted the lock at w:3 with a member down ("
                    << (e.t_ns - killed_ns) / 1'000'000
                    << " ms after the kill): it did not run at w:3" << story();
    }
  }
  EXPECT_GT(invoked, 0) << "no acquire was sent: " << r.output;
}

INSTANTIATE_TEST_SUITE_P(Clients, WriteConcernRunTest,
                         ::testing::Values("mongolock", "distributedlock",
                                           "npm-distributed-locks-mongodb", "python-lorehov"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           for (char& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace locklab
