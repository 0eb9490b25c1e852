// What a real locklab-worker writes to the history against a real mongosim set (one member, on
// loopback): an invoke before every write can reach the server, `lost` only when the worker
// stopped, `lost-ignored` when it goes on, an unknown release as `info`, and the background
// extensions.
//
// Model left out: faults other than the ones each test makes (a fail point, a SIGKILL, a
// force-release), more than one worker, elections.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

#include "checker/history.h"
#include "client/workload.h"
#include "db/db.h"
#include "harness_db.h"
#include "mongolock/provider.h"
#include "programs.h"
#include "run/process.h"
#include "temp_dir.h"
#include "testkit.h"

namespace locklab {
namespace {

using locklab::testkit::after;
using locklab::testkit::poll_until;

constexpr int64_t kWaitMs = 20'000;  // bound on every wait below

// The events of one process with function f, in history order.
std::vector<Event> events_of(const std::vector<Event>& history, const std::string& process,
                             const std::string& f) {
  std::vector<Event> out;
  for (const Event& e : history) {
    if (e.process == process && e.f == f) out.push_back(e);
  }
  return out;
}

class WorkerHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::programs_built()) GTEST_SKIP() << "needs locklab-worker and mongosim built";
    dir_ = std::make_unique<testkit::TempDir>();
    cluster_ = testkit::harness_db(dir_->path(), 1, supervisor_);
    cluster_->start();
  }
  void TearDown() override {
    supervisor_.stop_all(1000);
    if (cluster_) cluster_->stop();
  }

  std::string history_path() const { return dir_->file("history.jsonl"); }
  // The history so far (none before the worker created it).
  std::vector<Event> history() const {
    if (!std::filesystem::exists(history_path())) return {};
    return read_history(history_path());
  }

  // Starts one worker "w1" with the given workload arguments appended.
  pid_t start_worker(const std::vector<std::string>& extra) {
    SpawnOptions spawn;
    spawn.argv = {std::string(LOCKLAB_BIN_DIR) + "/locklab-worker",
                  "--id",
                  "w1",
                  "--uri",
                  cluster_->uri("w1"),
                  "--history",
                  history_path(),
                  "--database",
                  "locklab"};
    spawn.argv.insert(spawn.argv.end(), extra.begin(), extra.end());
    spawn.log_path = dir_->file("w1.log");
    return supervisor_.spawn(spawn);
  }

  void fail_point(const nlohmann::json& data, const nlohmann::json& mode) {
    cluster_->command(0, "admin",
                      {{"configureFailPoint", "failCommand"}, {"mode", mode}, {"data", data}});
  }

  int64_t update_total() const {
    const nlohmann::json status = cluster_->command(0, "admin", {{"serverStatus", 1}});
    return status.value(nlohmann::json::json_pointer("/metrics/commands/update/total"), int64_t{0});
  }

  std::optional<nlohmann::json> document(const std::string& collection, const std::string& id) {
    const nlohmann::json reply =
        cluster_->command(0, "locklab", {{"find", collection}, {"filter", {{"_id", id}}}});
    const auto& batch = reply["cursor"]["firstBatch"];
    if (batch.empty()) return std::nullopt;
    return batch[0];
  }

  std::unique_ptr<testkit::TempDir> dir_;
  Supervisor supervisor_;
  std::unique_ptr<Db> cluster_;
};

// w1 reads 0, sends 1; the update is held server-side; w1 is SIGKILLed; the update lands. The
// history must show the write's invoke (count 1, read 0), or the checker sees an update that no
// write explains. Model: the kill lands while the request is on the server, the one moment an
// indeterminate write exists; a kill before the send is left out.
TEST_F(WorkerHistoryTest, CounterWriteKilledInFlightHasItsInvoke) {
  const int64_t updates_before = update_total();
  fail_point({{"failCommands", {"update"}},
              {"appName", "w1"},
              {"blockConnection", true},
              {"blockTimeMS", 1500}},
             {{"times", 1}});
  const pid_t worker = start_worker({"--kind", "counter", "--critical-section-ms", "0",
                                     "--expiry-ms", "30000", "--operations", "1"});
  // The update reached the server (counted on arrival) and is being held.
  ASSERT_TRUE(poll_until(after(std::chrono::milliseconds(kWaitMs)),
                         [&] { return update_total() > updates_before; }));
  ASSERT_TRUE(supervisor_.signal(worker, SIGKILL));
  ASSERT_TRUE(supervisor_.wait_exit(worker, kWaitMs).has_value());
  ASSERT_TRUE(poll_until(after(std::chrono::milliseconds(kWaitMs)), [&] {
    const auto doc = document(kCounterCollection, kCounterResource);
    return doc && doc->value("count", int64_t{0}) == 1;
  })) << "the held update never landed";

  const std::vector<Event> events = history();
  const std::vector<Event> reads = events_of(events, "w1", "read");
  ASSERT_EQ(reads.size(), 1u);
  EXPECT_EQ(reads[0].value.value("count", int64_t{-1}), 0);
  const std::vector<Event> writes = events_of(events, "w1", "write");
  ASSERT_EQ(writes.size(), 1u) << "the in-flight write left no trace in the history";
  EXPECT_EQ(writes[0].type, EventType::kInvoke);
  EXPECT_EQ(writes[0].value.value("count", int64_t{-1}), 1);
  EXPECT_EQ(writes[0].value.value("read", int64_t{-1}), 0);
  EXPECT_EQ(writes[0].value.value("resource", ""), kCounterResource);
  EXPECT_GT(writes[0].t_ns, reads[0].t_ns);
}

// Runs one fenced operation whose hold is force-released in the middle of its critical
// section (the next extension is refused, the lost notification fires).
std::vector<Event> fenced_operation_lost_midway(WorkerHistoryTest& test, pid_t worker,
                                                const std::function<std::vector<Event>()>& read,
                                                Supervisor& supervisor, Db& cluster) {
  EXPECT_TRUE(poll_until(after(std::chrono::milliseconds(kWaitMs)),
                         [&] { return !events_of(read(), "w1", "acquire").empty(); }));
  EXPECT_TRUE(poll_until(after(std::chrono::milliseconds(kWaitMs)), [&] {
    for (const Event& e : events_of(read(), "w1", "acquire")) {
      if (e.type == EventType::kOk) return true;
    }
    return false;
  }));
  // The owner-checked extension and release now find no hold of theirs.
  mongolock::Options options;
  options.collection = "locks";
  options.create_index = false;
  mongolock::Provider operator_tool(cluster.uri("operator"), "locklab", options);
  EXPECT_TRUE(operator_tool.force_release("L1"));
  EXPECT_TRUE(supervisor.wait_exit(worker, kWaitMs).has_value());
  (void)test;
  return read();
}

// honour_lost = false: the notification is `lost-ignored`, the worker writes on with the token,
// and no `lost` is recorded (a `lost` would end the hold while it still writes).
TEST_F(WorkerHistoryTest, IgnoredLossIsLostIgnoredAndTheWorkerWritesOn) {
  const pid_t worker = start_worker({"--kind", "fenced", "--critical-section-ms", "6000",
                                     "--expiry-ms", "3000", "--extension-cadence-ms", "300",
                                     "--honour-lost", "false", "--operations", "1"});
  const std::vector<Event> events = fenced_operation_lost_midway(
      *this, worker, [this] { return history(); }, supervisor_, *cluster_);
  EXPECT_TRUE(events_of(events, "w1", "lost").empty()) << "an ignored loss recorded as lost";
  const std::vector<Event> ignored = events_of(events, "w1", "lost-ignored");
  ASSERT_EQ(ignored.size(), 1u);
  const std::vector<Event> writes = events_of(events, "w1", "write");
  ASSERT_FALSE(writes.empty());
  EXPECT_EQ(writes[0].type, EventType::kInvoke);
  EXPECT_GT(writes[0].t_ns, ignored[0].t_ns) << "the worker went on writing after the loss";
  EXPECT_EQ(writes[0].token, ignored[0].token);
  // The extension that found the hold gone is an extend fail, after extend invokes and oks.
  const std::vector<Event> extends = events_of(events, "w1", "extend");
  ASSERT_GE(extends.size(), 2u);
  EXPECT_EQ(extends[0].type, EventType::kInvoke);
  bool refused = false;
  for (const Event& e : extends) refused = refused || e.type == EventType::kFail;
  EXPECT_TRUE(refused);
}

// honour_lost = true: `lost` once the critical section stopped, nothing written after it.
TEST_F(WorkerHistoryTest, HonouredLossIsLostAndNothingIsWrittenAfterIt) {
  const pid_t worker =
      start_worker({"--kind", "fenced", "--critical-section-ms", "6000", "--expiry-ms", "3000",
                    "--extension-cadence-ms", "300", "--operations", "1"});
  const std::vector<Event> events = fenced_operation_lost_midway(
      *this, worker, [this] { return history(); }, supervisor_, *cluster_);
  EXPECT_TRUE(events_of(events, "w1", "lost-ignored").empty());
  ASSERT_EQ(events_of(events, "w1", "lost").size(), 1u);
  EXPECT_TRUE(events_of(events, "w1", "write").empty());
  const std::vector<Event> releases = events_of(events, "w1", "release");
  ASSERT_EQ(releases.size(), 2u);
  EXPECT_EQ(releases[1].type, EventType::kFail) << "the hold was gone: a definite refusal";
}

// A release whose connection closes may have been applied: `release info`, not `fail`.
TEST_F(WorkerHistoryTest, ReleaseWithUnknownOutcomeIsInfo) {
  fail_point({{"failCommands", {"update"}}, {"appName", "w1"}, {"closeConnection", true}},
             {{"times", 1}});
  const pid_t worker = start_worker({"--kind", "mutex", "--critical-section-ms", "0", "--expiry-ms",
                                     "30000", "--operations", "1"});
  ASSERT_TRUE(supervisor_.wait_exit(worker, kWaitMs).has_value());
  const std::vector<Event> releases = events_of(history(), "w1", "release");
  ASSERT_EQ(releases.size(), 2u);
  EXPECT_EQ(releases[0].type, EventType::kInvoke);
  EXPECT_EQ(releases[1].type, EventType::kInfo) << releases[1].value.dump();
  EXPECT_TRUE(releases[1].value.contains("error"));
}

}  // namespace
}  // namespace locklab
