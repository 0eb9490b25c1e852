// The client table and the `[workload] client` key: a scenario naming an unknown client, or a
// client that cannot run its workload, is refused at load with file, line and key; a client
// that cannot run on this machine is refused by `locklab run` before anything starts (exit 77,
// "unsupported"), and `locklab clients` says why. The run-level tests start the real locklab.
// Left out: a client that becomes unavailable during a run (a deleted program mid-run).
#include "client/clients.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "checker/checker.h"
#include "programs.h"
#include "run/process.h"
#include "run/run.h"
#include "run/scenario.h"
#include "temp_dir.h"

namespace locklab {
namespace {

namespace fs = std::filesystem;
constexpr const char* kNodeClient = "npm-distributed-locks-mongodb";

std::string error_of(std::string_view text) {
  try {
    parse_scenario(text, "dir/c.toml");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(Clients, DefaultIsMongolock) {
  Scenario s = parse_scenario("[workload]\nduration_ms = 1000\n", "d.toml");
  EXPECT_EQ(s.workload.client, "mongolock");
  EXPECT_EQ(s.workload.client_line, 0);
  EXPECT_EQ(to_json(s)["workload"]["client"], "mongolock");
}

TEST(Clients, NamedClientIsReadWithItsLine) {
  Scenario s = parse_scenario(
      "[workload]\nkind = \"counter\"\nclient = \"npm-distributed-locks-mongodb\"\n"
      "duration_ms = 1000\n",
      "d.toml");
  EXPECT_EQ(s.workload.client, kNodeClient);
  EXPECT_EQ(s.workload.client_line, 3);
}

TEST(Clients, UnknownClientIsRefusedWithFileLineAndKey) {
  const std::string e = error_of("[workload]\nduration_ms = 1000\nclient = \"nope\"\n");
  EXPECT_NE(e.find("dir/c.toml:3: workload.client: unknown client \"nope\""), std::string::npos)
      << e;
  EXPECT_NE(e.find("mongolock"), std::string::npos) << e;  // lists the known ones
}

TEST(Clients, ClientThatCannotRunTheWorkloadIsRefused) {
  const std::string e = error_of(
      "[workload]\nkind = \"fenced\"\nclient = \"npm-distributed-locks-mongodb\"\n"
      "duration_ms = 1000\n");
  EXPECT_NE(e.find("dir/c.toml:3: workload.client: client \"npm-distributed-locks-mongodb\" "
                   "cannot run the fenced workload"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("issues no tokens"), std::string::npos) << e;
}

TEST(Clients, TableInvariantsHold) {
  std::set<std::string_view> names;
  for (const ClientSpec& c : all_clients()) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_FALSE(c.workloads.empty()) << c.name;
    EXPECT_NE(c.unavailable, nullptr) << c.name;
    if (!c.fencing_tokens) {
      EXPECT_FALSE(client_runs(c, "fenced")) << c.name;
    }
  }
  ASSERT_NE(find_client("mongolock"), nullptr);
  EXPECT_TRUE(find_client("mongolock")->fencing_tokens);
  EXPECT_EQ(find_client("nope"), nullptr);
}

TEST(Clients, UnavailableSaysWhy) {
  testkit::TempDir dir;
  ClientEnvironment env{dir.path(), dir.path(), ""};
  const ClientSpec& node = *find_client(kNodeClient);
  EXPECT_EQ(client_unavailable(node, env), "node not found on PATH");
  const std::string why = client_unavailable(*find_client("mongolock"), env);
  EXPECT_EQ(why, dir.file("locklab-worker") + " not found");
  std::ofstream(dir.file("locklab-worker")) << "#!/bin/sh\n";
  EXPECT_EQ(client_unavailable(*find_client("mongolock"), env),
            dir.file("locklab-worker") + " is not executable");
  fs::permissions(dir.file("locklab-worker"), fs::perms::owner_exec, fs::perm_options::add);
  EXPECT_EQ(client_unavailable(*find_client("mongolock"), env), "");
}

TEST(Clients, FindOnPathSkipsEmptyEntriesAndDirectories) {
  testkit::TempDir dir;
  fs::create_directory(dir.file("tool"));  // a directory is not an executable
  EXPECT_EQ(find_on_path("tool", "::" + dir.path()), "");
  EXPECT_EQ(find_on_path("sh", "/nonexistent::/bin"), "/bin/sh");
}

// The run-level refusals: the real locklab, nothing started (no output directory).
class ClientRun : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!locklab::testing::programs_built()) GTEST_SKIP() << "needs locklab built";
  }
  ToolResult run_with_path(const std::string& path, const std::string& scenario_text) {
    std::ofstream(dir_.file("s.toml")) << scenario_text;
    return run_tool(
        {"/usr/bin/env", "PATH=" + path, std::string(LOCKLAB_BIN_DIR) + "/locklab", "run",
         dir_.file("s.toml"), "--cluster", "loopback", "--out", dir_.file("out")},
        "", "", 60'000);
  }
  testkit::TempDir dir_;
};

TEST_F(ClientRun, UnknownClientIsRefusedBeforeAnythingStarts) {
  const ToolResult r =
      run_with_path("/usr/bin:/bin", "[workload]\nduration_ms = 1000\nclient = \"nope\"\n");
  EXPECT_EQ(r.code, kExitError) << r.output;
  EXPECT_NE(r.output.find("s.toml:3: workload.client: unknown client \"nope\""), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir_.file("out")));
}

TEST_F(ClientRun, UnavailableClientIsNotRunAndSaysWhy) {
  const ToolResult r =
      run_with_path("/nonexistent",
                    "[workload]\nkind = \"mutex\"\nclient = \"npm-distributed-locks-mongodb\"\n"
                    "duration_ms = 1000\n");
  EXPECT_EQ(r.code, kExitNotRun) << r.output;
  EXPECT_NE(r.output.find("locklab: unsupported: " + dir_.file("s.toml") +
                          ":3: workload.client: client \"npm-distributed-locks-mongodb\" is "
                          "unavailable here: node not found on PATH"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir_.file("out")));
}

// A manifest whose own program is missing is a mistake in it: an error (2) naming the manifest
// and the program, not a skip; the same manifest's failing available_if is "not run" (77).
TEST_F(ClientRun, AManifestsMissingProgramIsAnErrorAndItsFailingAvailableIfASkip) {
  // A manifest file, then a run of a scenario naming it.
  auto run_manifest = [this](const std::string& file, const std::string& manifest) {
    std::ofstream(dir_.file(file))
        << manifest << "workloads = [\"mutex\"]\nfencing_tokens = false\n";
    return run_with_path("/usr/bin:/bin",
                         "[workload]\nduration_ms = 1000\nclient = \"" + file + "\"\n");
  };
  const ToolResult typo =
      run_manifest("typo.toml", "name = \"typo-program\"\nprogram = \"wroker.py\"\n");
  EXPECT_EQ(typo.code, kExitError) << typo.output;
  EXPECT_NE(typo.output.find(dir_.file("s.toml") +
                             ":3: workload.client: client \"typo-program\": " + "its manifest " +
                             dir_.file("typo.toml") + " names a program that cannot run: " +
                             dir_.file("wroker.py") + " not found"),
            std::string::npos)
      << typo.output;
  std::ofstream(dir_.file("w.sh")) << "#!/bin/sh\n";
  fs::permissions(dir_.file("w.sh"), fs::perms::owner_exec, fs::perm_options::add);
  const ToolResult absent = run_manifest("absent.toml",
                                         "name = \"absent-module\"\nprogram = \"w.sh\"\n"
                                         "available_if = [\"/bin/sh\", \"-c\", \"exit 1\"]\n");
  EXPECT_EQ(absent.code, kExitNotRun) << absent.output;
  EXPECT_FALSE(fs::exists(dir_.file("out")));
}

TEST_F(ClientRun, ClientsCommandListsAvailabilityAndReason) {
  const ToolResult r = run_tool(
      {"/usr/bin/env", "PATH=/nonexistent", std::string(LOCKLAB_BIN_DIR) + "/locklab", "clients"});
  EXPECT_EQ(r.code, 0) << r.output;
  const size_t mongolock = r.output.find("mongolock\n");
  const size_t node = r.output.find(std::string(kNodeClient) + "\n");
  ASSERT_NE(mongolock, std::string::npos) << r.output;
  ASSERT_NE(node, std::string::npos) << r.output;
  EXPECT_NE(r.output.find("available: yes", mongolock), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("available: no: node not found on PATH", node), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace locklab
