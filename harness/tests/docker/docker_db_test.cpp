// A real 3-member set of mongosim containers through DockerDb (the `--cluster docker` backend)
// on a real Docker daemon (the user's, or one started for the test): start, majority write, an
// nft cut that costs the primary its role, a worker host cut from one member only, pause/resume,
// kill/restart of every member (one killed while paused, then resumed) recovering acknowledged
// data from the dbpaths, and a teardown that leaves no container, network, volume, image of the
// run, or started daemon.
//
// What the model leaves out: no concurrent clients (one admin connection at a time), no worker
// process (the worker host's namespace is probed with a TCP connect), election timing is only
// bounded, not measured. Skipped, with the reason, where Docker cannot run.
#include "db/docker_db.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <thread>

#include "checker/clock.h"
#include "db/admin.h"
#include "db/docker_engine.h"
#include "db/docker_image.h"
#include "run/backend.h"
#include "run/process.h"
#include "testkit.h"

namespace locklab {
namespace {

using locklab::testkit::after;
using locklab::testkit::poll_until;
constexpr std::chrono::milliseconds kPollMs{100};  // between polls of the waits below

namespace fs = std::filesystem;

constexpr int64_t kElectionWaitMs = 30'000;

nlohmann::json majority_insert(const Db& db, int member, const std::string& id) {
  return db.try_command(member, "locklab_test",
                        {{"insert", "docs"},
                         {"documents", nlohmann::json::array({{{"_id", id}}})},
                         {"writeConcern", {{"w", "majority"}, {"wtimeout", 10'000}}}});
}

// A TCP connect to host:port from inside a namespace file (a container's /proc/<pid>/ns/net).
bool connects_from(const std::string& netns_path, const std::string& host) {
  const size_t colon = host.find(':');
  const std::string probe =
      "exec 3<>/dev/tcp/" + host.substr(0, colon) + "/" + host.substr(colon + 1);
  return run_tool({"nsenter", "--net=" + netns_path, "timeout", "3", "bash", "-c", probe}).code ==
         0;
}

class DockerDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = docker_unavailable_reason();
    if (!why.empty()) GTEST_SKIP() << "Docker cannot run here: " << why;
    dir_ = std::make_unique<testkit::TempDir>("locklab-dockertest-db");
    work_ = dir_->path();
  }
  // One member, the image built here from this build's programs.
  DbConfig one_member() const {
    DbConfig config;
    config.members = 1;
    config.run_prefix = "ll-" + std::to_string(getpid());
    config.data_dir = work_ + "/data";
    config.ready_timeout_ms = 120'000;  // includes building the image on a loaded machine
    return config;
  }
  static DockerDbOptions mongod_image_built_here() {
    DockerDbOptions options;
    options.programs = {std::string(LOCKLAB_BIN_DIR) + "/mongosim",
                        std::string(LOCKLAB_BIN_DIR) + "/locklab-worker"};
    options.dockerfile = std::string(LOCKLAB_SOURCE_DIR) + "/docker/Dockerfile";
    options.kind = ImageKind::kMongod;
    return options;
  }
  std::unique_ptr<testkit::TempDir> dir_;  // removed with the fixture
  std::string work_;
};

TEST_F(DockerDbTest, ThreeMembersCutsPauseKillAndTeardown) {
  DbConfig config;
  config.members = 3;
  config.workers = {"w1"};
  config.run_prefix = "ll-" + std::to_string(getpid());
  config.data_dir = work_ + "/data";
  config.log_dir = work_ + "/logs";
  config.ready_timeout_ms = 120'000;  // includes building the image on a loaded machine
  DockerDbOptions options;
  options.programs = {std::string(LOCKLAB_BIN_DIR) + "/mongosim",
                      std::string(LOCKLAB_BIN_DIR) + "/locklab-worker"};
  options.dockerfile = std::string(LOCKLAB_SOURCE_DIR) + "/docker/Dockerfile";
  DockerDb db(config, options);
  EXPECT_EQ(db.supports(FaultKind::kClockSkew), std::nullopt);
  db.start();
  const std::string host = db.engine()->host();
  const pid_t dockerd = db.engine()->dockerd_pid();
  const std::string root = db.engine()->root();
  const std::string run_id = db.run_id();
  const std::string network_id =
      db.engine()->checked({"network", "inspect", "-f", "{{.Id}}", db.network()});
  Partitions& parts = *db.partitions();

  const int p = db.primary();
  ASSERT_GE(p, 0);
  ASSERT_TRUE(reply_ok(majority_insert(db, p, "before-cut")));

  // A worker host cut from one member only: it still reaches the others.
  const int other = (p + 1) % db.size();
  parts.cut({{"w1", "m" + std::to_string(other)}});
  EXPECT_FALSE(connects_from(db.worker_netns("w1"), db.host(other)));
  EXPECT_TRUE(connects_from(db.worker_netns("w1"), db.host(p)));
  parts.uncut({{"w1", "m" + std::to_string(other)}});
  EXPECT_TRUE(connects_from(db.worker_netns("w1"), db.host(other)));

  // The primary cut from both others loses its role; the majority elects another.
  std::vector<Partitions::Cut> cuts;
  for (int m = 0; m < db.size(); ++m) {
    if (m != p) cuts.push_back({"m" + std::to_string(p), "m" + std::to_string(m)});
  }
  parts.cut(cuts);
  const int next = db.wait_for_primary(kElectionWaitMs, p);
  ASSERT_GE(next, 0) << "no new primary while m" << p << " was cut off";
  EXPECT_TRUE(poll_until(
      after(std::chrono::milliseconds(kElectionWaitMs)),
      [&] { return db.member_state(p) != "primary"; }, kPollMs))
      << "the cut-off member still says it is primary";
  // A cut in force survives the member's restart (a new namespace).
  db.kill_member(p);
  db.restart_member(p);
  ASSERT_TRUE(db.wait_answering(p, kElectionWaitMs));
  const auto knows_primary = [&] {
    const nlohmann::json hello = db.try_command(p, "admin", {{"hello", 1}});
    return reply_ok(hello) && hello.contains("primary");
  };
  EXPECT_FALSE(poll_until(after(std::chrono::milliseconds(3'000)), knows_primary, kPollMs))
      << "m" << p << " heard from the primary although its cuts were in force";
  parts.uncut(cuts);
  EXPECT_TRUE(parts.cut_peers("m" + std::to_string(p)).empty());
  ASSERT_TRUE(poll_until(after(std::chrono::milliseconds(kElectionWaitMs)), knows_primary, kPollMs))
      << "m" << p << " did not hear from the primary after the heal";

  // Pause: the frozen member answers nothing; resumed, it answers again.
  const int frozen = (next + 1) % db.size();
  db.pause_member(frozen);
  EXPECT_TRUE(db.paused(frozen));
  EXPECT_FALSE(reply_ok(db.try_command(frozen, "admin", {{"hello", 1}})));
  db.resume_member(frozen);
  EXPECT_TRUE(reply_ok(db.try_command(frozen, "admin", {{"hello", 1}})));

  // Kill every member and start them again: the acknowledged write can only come from the
  // bind-mounted dbpaths.
  const int writer = db.wait_for_primary(kElectionWaitMs);
  ASSERT_GE(writer, 0);
  ASSERT_TRUE(reply_ok(majority_insert(db, writer, "before-kill")));
  // m0 is paused when killed, as when a kill-member window opens inside a pause-member one.
  db.pause_member(0);
  for (int m = 0; m < db.size(); ++m) db.kill_member(m);
  for (int m = 0; m < db.size(); ++m) EXPECT_FALSE(db.running(m));
  EXPECT_THROW(db.kill_member(0), std::runtime_error);
  for (int m = 0; m < db.size(); ++m) db.restart_member(m);
  // The pause window's end resumes a member that was started again and never frozen since:
  // nothing to thaw, as SIGCONT to a restarted process on the other backends.
  EXPECT_NO_THROW(db.resume_member(0));
  EXPECT_FALSE(db.paused(0));
  nlohmann::json found;
  ASSERT_TRUE(poll_until(
      after(std::chrono::milliseconds(kElectionWaitMs)),
      [&] {
        try {
          found = db.read_confirmed(db.wait_for_primary(kElectionWaitMs), "locklab_test", "docs",
                                    "before-kill");
          return !found.is_null();
        } catch (const std::exception&) {
          return false;
        }
      },
      kPollMs))
      << "the acknowledged write did not survive kill/start of every member";
  EXPECT_EQ(found["_id"], "before-kill");

  db.stop();
  db.teardown();
  EXPECT_TRUE(fs::exists(config.log_dir + "/m0.log"));
  if (dockerd > 0) {
    const char state = process_state(dockerd);
    EXPECT_TRUE(state == 0 || state == 'Z') << "the started dockerd still runs: " << state;
    EXPECT_FALSE(fs::exists(root)) << root;
  } else {
    DockerEngine engine = DockerEngine::attach(host);
    const std::string label = "label=locklab.run=" + run_id;
    EXPECT_EQ(engine.run({"ps", "-aq", "--filter", label}).output, "");
    EXPECT_EQ(engine.run({"network", "ls", "-q", "--filter", label}).output, "");
    EXPECT_EQ(engine.run({"images", "-q", "--filter", label}).output, "");
    EXPECT_EQ(engine.run({"volume", "ls", "-q", "--filter", label}).output, "");
  }
  EXPECT_EQ(run_tool({"ip", "-o", "link"}).output.find("br-" + network_id.substr(0, 12)),
            std::string::npos)
      << "the network's bridge is left on the host";
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The nft rules in force inside a namespace, as nft itself lists them.
std::string ruleset_in(const std::string& netns_path) {
  return run_tool({"nsenter", "--net=" + netns_path, "nft", "list", "ruleset"}).output;
}

// Faults on a killed member: its namespace died with it. Cutting it off, killing it and healing
// must leave no rule naming it in any member (every member is tried, a dead one is skipped), and
// isolating it while it is down is applied when it starts again. Left out: elections and
// clients (the tables are read from outside, not probed with traffic).
TEST_F(DockerDbTest, FaultsOnAKilledMemberLeaveNoStaleRules) {
  DbConfig config;
  config.members = 3;
  config.run_prefix = "ll-" + std::to_string(getpid());
  config.data_dir = work_ + "/data";
  config.ready_timeout_ms = 120'000;
  DockerDbOptions options;
  options.programs = {std::string(LOCKLAB_BIN_DIR) + "/mongosim",
                      std::string(LOCKLAB_BIN_DIR) + "/locklab-worker"};
  options.dockerfile = std::string(LOCKLAB_SOURCE_DIR) + "/docker/Dockerfile";
  DockerDb db(config, options);
  db.start();
  Partitions& parts = *db.partitions();
  const std::string m1_address = db.host(1).substr(0, db.host(1).find(':'));
  const std::vector<Partitions::Cut> cuts = {{"m1", "m0"}, {"m1", "m2"}};
  parts.cut(cuts);
  parts.isolate("m1", IsolationMode::kDrop);
  for (const int m : {0, 2}) {
    EXPECT_NE(ruleset_in(db.netns_of_member(m)).find(m1_address), std::string::npos)
        << "m" << m << " has no rule naming m1 while the cut is in force";
  }
  db.kill_member(1);
  EXPECT_NO_THROW(parts.uncut(cuts));
  EXPECT_NO_THROW(parts.heal("m1"));
  for (const int m : {0, 2}) {
    EXPECT_EQ(ruleset_in(db.netns_of_member(m)).find(m1_address), std::string::npos)
        << "m" << m << " keeps a rule naming m1 after the heal";
  }
  // Isolated while down: written into the new namespace when it starts.
  EXPECT_NO_THROW(parts.isolate("m1", IsolationMode::kDrop));
  EXPECT_TRUE(parts.isolated("m1"));
  db.restart_member(1);
  const std::string isolated_rules = ruleset_in(db.netns_of_member(1));
  EXPECT_NE(isolated_rules.find(config.run_prefix + "-isolate"), std::string::npos)
      << isolated_rules;
  EXPECT_EQ(isolated_rules.find(config.run_prefix + "-part"), std::string::npos) << isolated_rules;
  parts.heal("m1");
  EXPECT_EQ(ruleset_in(db.netns_of_member(1)).find(config.run_prefix), std::string::npos);

  // A container's output over 64 KiB (the cap on a command's captured output) is saved whole,
  // its end included. The container carries the run's label, so teardown removes it.
  const std::string loud = "locklab-" + db.run_id() + "-loud";
  db.engine()->checked({"run", "--name", loud, "--label", "locklab.run=" + db.run_id(), "--network",
                        "none", "--entrypoint", "sh", db.image(), "-c",
                        "i=0; while [ $i -lt 3000 ]; do echo line-$i-of-a-long-log-xxxxxxxxxx; "
                        "i=$((i+1)); done; echo the-end"},
                       120'000);
  const std::string saved = work_ + "/loud.log";
  EXPECT_EQ(db.engine()->run_to_file({"logs", loud}, saved).code, 0);
  EXPECT_GT(fs::file_size(saved), 64u * 1024);
  EXPECT_NE(file_text(saved).find("the-end"), std::string::npos);
  db.stop();
  db.teardown();
}

// A member's wall clock as it reports it (hello's localTime, an ISO-8601 UTC date), in ms.
int64_t member_clock_ms(const Db& db, int member) {
  const nlohmann::json hello = db.command(member, "admin", {{"hello", 1}});
  const std::string text = hello.at("localTime").at("$date").get<std::string>();
  std::tm t{};
  int ms = 0;
  if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &t.tm_year, &t.tm_mon, &t.tm_mday,
                  &t.tm_hour, &t.tm_min, &t.tm_sec, &ms) != 7) {
    throw std::runtime_error("localTime is not an ISO date: " + text);
  }
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&t)) * 1000 + ms;
}

// The image built here run as a mongod image (mongosim under the name mongod, the host's
// libfaketime inside): member clock faults move the member's wall clock through the bind-mounted
// timestamp file, the offset holds across a kill and start, and is taken back. An hour's offset
// against a tolerance of ten minutes: a state check, not a timing one. Left out: the monotonic
// clock (libfaketime is told to leave it, not checked here) and clients other than the admin one.
TEST_F(DockerDbTest, AMongodImageMovesMemberClocksThroughFaketime) {
  const std::string library = find_libfaketime();
  if (library.empty()) GTEST_SKIP() << "libfaketime is not installed on this host";
  const DbConfig config = one_member();
  DockerDbOptions options = mongod_image_built_here();
  options.faketime_library = library;
  DockerDb db(config, options);
  EXPECT_EQ(db.supports(FaultKind::kClockSkew), std::nullopt);
  EXPECT_NE(db.member_program().find("(mongod)"), std::string::npos) << db.member_program();
  db.start();
  constexpr int64_t kHourMs = 3'600'000;
  constexpr int64_t kToleranceMs = 600'000;
  EXPECT_LT(std::llabs(member_clock_ms(db, 0) - locklab::wall_now_ms()), kToleranceMs);
  EXPECT_EQ(db.set_clock_offset(0, kHourMs), 0);
  EXPECT_LT(std::llabs(member_clock_ms(db, 0) - locklab::wall_now_ms() - kHourMs), kToleranceMs);
  db.kill_member(0);
  db.restart_member(0);
  ASSERT_TRUE(poll_until(
      after(std::chrono::milliseconds(kElectionWaitMs)),
      [&] {
        return reply_ok(db.try_command(0, "admin", {{"ping", 1}}));
      },
      kPollMs));
  EXPECT_LT(std::llabs(member_clock_ms(db, 0) - locklab::wall_now_ms() - kHourMs), kToleranceMs)
      << "the offset did not survive the member's restart";
  EXPECT_EQ(db.set_clock_offset(0, 0), kHourMs);
  EXPECT_LT(std::llabs(member_clock_ms(db, 0) - locklab::wall_now_ms()), kToleranceMs);
  db.stop();
  db.teardown();
}

// A faketime library the loader cannot use (here a text file where the library should be; a
// path the image lacks is refused the same way): the loader only warns and the member runs with
// a clock no fault can move, so the start fails naming the option and quoting the loader, rather
// than a run recording clock faults that never happened. Left out: a library that loads but
// ignores the timestamp file (another libfaketime version).
TEST_F(DockerDbTest, AMongodImageWithoutTheNamedFaketimeLibraryFailsToStart) {
  const DbConfig config = one_member();
  DockerDbOptions options = mongod_image_built_here();
  options.faketime_library = work_ + "/libfaketimeMT.so.1";
  std::ofstream(options.faketime_library) << "not a shared library\n";
  DockerDb db(config, options);
  try {
    db.start();
    ADD_FAILURE() << "a member without its faketime library started";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("m0 runs without libfaketime"), std::string::npos) << what;
    EXPECT_NE(what.find("cannot be preloaded"), std::string::npos) << what;
    EXPECT_NE(what.find("--image-faketime " + options.faketime_library), std::string::npos) << what;
  }
  db.stop();
  db.teardown();
}

TEST(DockerDbSupports, MongodImagesRefuseMemberClockFaultsOnly) {
  DbConfig config;
  DockerDbOptions options;
  options.image = "mongo:7.0";
  options.kind = ImageKind::kMongod;
  const DockerDb db(config, options);
  const auto why = db.supports(FaultKind::kClockSkew);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("mongo:7.0"), std::string::npos) << *why;
  EXPECT_NE(why->find("no clock lever"), std::string::npos) << *why;
  EXPECT_TRUE(db.supports(FaultKind::kClockJump).has_value());
  EXPECT_EQ(db.supports(FaultKind::kPartitionHalves), std::nullopt);
  EXPECT_EQ(db.supports(FaultKind::kKillMember), std::nullopt);
  EXPECT_EQ(db.supports(FaultKind::kClockSkewWorker), std::nullopt);
  // Reply relays are the run's children: without its supervisor there is nobody to spawn them.
  const auto no_relays = db.supports(FaultKind::kReplyDelay);
  ASSERT_TRUE(no_relays.has_value());
  EXPECT_NE(no_relays->find("no supervisor"), std::string::npos) << *no_relays;
  Supervisor supervisor;
  options.supervisor = &supervisor;
  EXPECT_EQ(DockerDb(config, options).supports(FaultKind::kReplyDelay), std::nullopt);
  EXPECT_EQ(db.name(), "docker");
}

TEST(DockerDbSupports, BadConfigurationsAreRefusedAtConstruction) {
  DbConfig config;
  config.members = 9;
  DockerDbOptions options;
  options.image = "mongo:7.0";
  options.kind = ImageKind::kMongod;
  EXPECT_THROW(DockerDb(config, options), std::invalid_argument);
  config.members = 3;
  EXPECT_THROW(DockerDb(config, DockerDbOptions{}), std::invalid_argument);
  // An image without its kind: its name is not taken as a hint, whatever it says.
  options.kind.reset();
  options.image = "locklab/mongosim:1";
  EXPECT_THROW(DockerDb(config, options), std::invalid_argument);
  options.kind = ImageKind::kMongosim;
  EXPECT_EQ(DockerDb(config, options).supports(FaultKind::kClockSkew), std::nullopt);
  options.image = "mongo:7.0";
  EXPECT_EQ(DockerDb(config, options).supports(FaultKind::kClockSkew), std::nullopt)
      << "a mongosim kind is mongosim whatever the image's name";
}

TEST(DockerDbSupports, ImageKindsParseOrNameTheUnknownOne) {
  EXPECT_EQ(parse_image_kind("mongosim"), ImageKind::kMongosim);
  EXPECT_EQ(parse_image_kind("mongod"), ImageKind::kMongod);
  try {
    parse_image_kind("mongo");
    ADD_FAILURE() << "an unknown kind was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown image kind 'mongo' (mongosim or mongod)");
  }
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
