// `locklab run --external-uri`: a replica set the harness did not start (here three mongosim
// members started by the test through MongosimDb, on loopback ports) is used as it is; faults that
// need the members' processes or namespaces are refused before anything starts.
#include <gtest/gtest.h>

#include <filesystem>

#include "db/db.h"
#include "harness_db.h"
#include "programs.h"
#include "run/process.h"
#include "temp_dir.h"

namespace locklab {
namespace {

namespace fs = std::filesystem;

// Three members on 127.0.0.1, initiated and ready; stopped by the destructors.
class ExternalSet {
 public:
  explicit ExternalSet(const std::string& dir) {
    cluster_ = testkit::harness_db(dir, 3, supervisor_);
    cluster_->start();
    // Every member and the set's own name, as a user would write it (no appname: the run adds
    // each worker's).
    uri_ = cluster_->uri("x");
    uri_.erase(uri_.rfind("&appname="));
  }
  ~ExternalSet() { cluster_->stop(); }
  const std::string& uri() const { return uri_; }

 private:
  Supervisor supervisor_;
  std::unique_ptr<Db> cluster_;
  std::string uri_;
};

ToolResult locklab_run(const std::string& scenario, const std::string& uri,
                       const std::string& out) {
  return run_tool(
      {std::string(LOCKLAB_BIN_DIR) + "/locklab", "run",
       std::string(LOCKLAB_SOURCE_DIR) + "/scenarios/" + scenario, "--cluster", "loopback",
       "--external-uri", uri, "--seed", "1", "--out", out, "--expectation-gate"},
      "", "", 170'000);
}

TEST(ExternalCluster, StepDownScenarioRunsAgainstAnExternalSet) {
  if (!testing::programs_built())
    GTEST_SKIP() << "needs locklab, locklab-worker and mongosim built";
  testkit::TempDir dir;
  ExternalSet set(dir.path());
  const ToolResult r = locklab_run("replset-step-down.toml", set.uri(), dir.file("run"));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("expectation (valid): met"), std::string::npos) << r.output;
  // The set was not the harness's: it is still there, and nothing was started in its place.
  EXPECT_FALSE(fs::exists(dir.file("run") + "/members/m0.log"));
}

TEST(ExternalCluster, FaultsThatNeedMembersAreRefused) {
  if (!testing::programs_built())
    GTEST_SKIP() << "needs locklab, locklab-worker and mongosim built";
  testkit::TempDir dir;
  const ToolResult r =
      locklab_run("replset-kill-member.toml",
                  "mongodb://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3/?replicaSet=rs0", dir.file("run"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("kill-member is not possible on an external cluster"), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir.file("run") + "/history.jsonl"));
}

}  // namespace
}  // namespace locklab
