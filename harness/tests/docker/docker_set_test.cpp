// A real 3-member set of mongosim containers on a real Docker daemon (the user's, or one started
// for the test): start, majority write, an nft partition that costs the primary its role,
// pause/unpause, kill/start of every member recovering acknowledged data from the dbpaths, and a
// cleanup that leaves no container, network, volume, image of the run, or started daemon.
//
// What the model leaves out: no concurrent clients (one admin connection at a time), no worker
// containers under faults (the run-level tests cover those), timing of elections is only bounded,
// not measured. Skipped, with the reason, where Docker cannot run.
#include "docker_set.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "db/docker_engine.h"
#include "db/docker_image.h"

namespace locklab {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kElectionWaitMs = 30'000;

std::string temp_dir(const std::string& name) {
  std::string pattern = "/tmp/locklab-dockertest-" + name + "-XXXXXX";
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Polls until `done` or the bound; the bound is a failure, not a verdict on speed.
bool eventually(int64_t timeout_ms, const std::function<bool()>& done) {
  const int64_t deadline = now_ms() + timeout_ms;
  while (now_ms() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

nlohmann::json majority_insert(DockerSet& set, int member, const std::string& id) {
  return set.admin().try_command(member, "locklab_test",
                                 {{"insert", "docs"},
                                  {"documents", nlohmann::json::array({{{"_id", id}}})},
                                  {"writeConcern", {{"w", "majority"}, {"wtimeout", 10'000}}}});
}

std::string labelled(const DockerEngine& engine, const std::vector<std::string>& list) {
  return engine.run(list).output;
}

bool host_has_link_containing(const std::string& text) {
  return run_tool({"ip", "-o", "link"}).output.find(text) != std::string::npos;
}

class DockerSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = docker_unavailable_reason();
    if (!why.empty()) GTEST_SKIP() << "Docker cannot run here: " << why;
  }
};

TEST_F(DockerSetTest, ThreeMembersPartitionPauseKillAndCleanup) {
  const std::string work = temp_dir("set");
  const std::string run_id = "t" + std::to_string(getpid());
  DockerEngine engine = DockerEngine::acquire();
  const pid_t dockerd = engine.dockerd_pid();
  const std::string root = engine.root();
  const BuiltImage image =
      build_image(engine, {{std::string(LOCKLAB_BIN_DIR) + "/mongosim",
                            std::string(LOCKLAB_BIN_DIR) + "/locklab-worker"},
                           std::string(LOCKLAB_SOURCE_DIR) + "/docker/Dockerfile",
                           work + "/image",
                           run_id});
  std::string network_id;
  {
    DockerSetOptions options;
    options.image = image.image;
    options.run_id = run_id;
    options.run_dir = work + "/set";
    DockerSet set(engine, options);
    set.start();
    network_id = engine.checked({"network", "inspect", "-f", "{{.Id}}", set.network()});
    const int p = set.primary();
    ASSERT_GE(p, 0);
    ASSERT_TRUE(reply_ok(majority_insert(set, p, "before-partition")));

    // Partition: the primary cut from both others loses its role; the majority elects another.
    std::vector<DockerSet::Cut> cuts;
    for (int m = 0; m < set.size(); ++m) {
      if (m != p) cuts.push_back({DockerSet::member_role(p), DockerSet::member_role(m)});
    }
    set.cut(cuts);
    const int next = set.wait_for_primary(kElectionWaitMs, p);
    ASSERT_GE(next, 0) << "no new primary while m" << p << " was cut off";
    EXPECT_NE(next, p);
    EXPECT_TRUE(eventually(kElectionWaitMs, [&] { return set.member_state(p) != "primary"; }))
        << "the cut-off member still says it is primary";
    set.uncut(cuts);
    EXPECT_TRUE(set.cut_peers(DockerSet::member_role(p)).empty());
    ASSERT_TRUE(eventually(kElectionWaitMs, [&] { return set.member_state(p) == "secondary"; }))
        << "m" << p << " did not rejoin as secondary after the heal";

    // Pause: the frozen member answers nothing; unpaused, it answers again.
    const int paused = (next + 1) % set.size();
    set.pause_member(paused);
    EXPECT_EQ(engine.checked({"inspect", "-f", "{{.State.Paused}}",
                              set.container(DockerSet::member_role(paused))}),
              "true");
    EXPECT_FALSE(reply_ok(set.admin().try_command(paused, "admin", {{"hello", 1}})));
    set.resume_member(paused);
    EXPECT_TRUE(reply_ok(set.admin().try_command(paused, "admin", {{"hello", 1}})));

    // Kill every member, start them again: the acknowledged write can only come from the
    // bind-mounted dbpaths.
    const int writer = set.wait_for_primary(kElectionWaitMs);
    ASSERT_GE(writer, 0);
    ASSERT_TRUE(reply_ok(majority_insert(set, writer, "before-kill")));
    for (int m = 0; m < set.size(); ++m) set.kill_member(m);
    for (int m = 0; m < set.size(); ++m) {
      EXPECT_FALSE(set.container_running(DockerSet::member_role(m)));
    }
    for (int m = 0; m < set.size(); ++m) set.restart_member(m);
    const int after = set.wait_for_primary(kElectionWaitMs);
    ASSERT_GE(after, 0) << "no primary after kill/start of every member";
    nlohmann::json found;
    ASSERT_TRUE(eventually(kElectionWaitMs, [&] {
      try {
        found = set.admin().read_confirmed(set.wait_for_primary(kElectionWaitMs), "locklab_test",
                                           "docs", "before-kill");
        return !found.is_null();
      } catch (const std::exception&) {
        return false;
      }
    })) << "the acknowledged write did not survive kill/start of every member";
    EXPECT_EQ(found["_id"], "before-kill");
  }  // teardown: containers and the network

  const std::string label = "label=locklab.run=" + run_id;
  EXPECT_EQ(labelled(engine, {"ps", "-aq", "--filter", label}), "");
  EXPECT_EQ(labelled(engine, {"network", "ls", "-q", "--filter", label}), "");
  remove_run_objects(engine, run_id);
  EXPECT_EQ(labelled(engine, {"images", "-q", "--filter", label}), "");
  EXPECT_EQ(labelled(engine, {"volume", "ls", "-q", "--filter", label}), "");
  engine.stop();
  if (dockerd > 0) {
    const char state = process_state(dockerd);
    EXPECT_TRUE(state == 0 || state == 'Z') << "the started dockerd still runs: " << state;
    EXPECT_FALSE(fs::exists(root)) << root;
  }
  EXPECT_FALSE(host_has_link_containing("br-" + network_id.substr(0, 12)))
      << "the network's bridge is left on the host";
  fs::remove_all(work);
}

TEST(DockerPartitionScript, DropsBothDirectionsOnEth0) {
  const std::string script = docker_partition_script("t", {"10.89.1.11", "10.89.1.12"});
  EXPECT_NE(script.find("ip saddr { 10.89.1.11, 10.89.1.12 } drop"), std::string::npos) << script;
  EXPECT_NE(script.find("ip daddr { 10.89.1.11, 10.89.1.12 } drop"), std::string::npos) << script;
  EXPECT_NE(script.find("delete table inet t"), std::string::npos) << script;
}

TEST(DockerIdentity, OwnIsAliveAndAGoneOneIsNot) {
  EXPECT_TRUE(identity_alive(own_identity()));
  EXPECT_FALSE(identity_alive(std::to_string(getpid()) + ".1"));  // same pid, other start time
  EXPECT_FALSE(identity_alive("garbage"));
  EXPECT_FALSE(identity_alive(""));
}

TEST(DockerImage, SharedLibrariesOfMongosimIncludeLibcAndTheLoader) {
  const std::vector<std::string> libs =
      shared_libraries(std::string(LOCKLAB_BIN_DIR) + "/mongosim");
  bool libc = false;
  bool loader = false;
  for (const std::string& l : libs) {
    libc = libc || l.find("libc.so") != std::string::npos;
    loader = loader || l.find("ld-linux") != std::string::npos;
  }
  EXPECT_TRUE(libc);
  EXPECT_TRUE(loader);
  EXPECT_THROW(shared_libraries("/nonexistent/program"), std::runtime_error);
}

}  // namespace
}  // namespace locklab
