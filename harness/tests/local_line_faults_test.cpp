// mongolock's local line under member faults, judged by the checkers. The line (mongolock.h
// [notify] "Local line") only forms among threads of one Provider, and a locklab-worker is one
// thread with a Provider of its own, so no scenario ever seats a waiter: here kThreads workload
// loops of the fenced workload (client/workload.h run_workload_threads) share one notify Provider
// against a 3-member mongosim set while the test steps the primary down, pauses a member and
// kills and restarts one, at times drawn from a seed. The history (one process per thread, the
// harness's vocabulary) with a final read of the fenced resource must be valid for what
// mongolock claims under those faults (tokens.unique, tokens.monotonic, exclusion.fenced; the
// last is kept by the resource's own token check, so it fails only through tokens) and for
// exclusion.strict, which mongolock does not claim in general (a request in flight when its
// lease lapses still lands) but which these runs must keep: the client is never paused, critical
// sections last 2 ms, and a hold ends in the history at its release's invoke. The test also
// requires that the line was used (the Provider sent seat releases, the short findAndModify that
// hands the lock to a seat, seen by the driver's command monitoring) and that at least one fault
// hit the primary.
//
// A member is paused or killed for 0.3-4.3 s (the lease is 3 s), so releases sent to a primary
// that stops answering time out with their seat offered (an unknown outcome: the seat's id is
// tombstoned and it attempts again). Checked to fail: a seat handed token 1 by the release that
// granted it (tokens.unique, tokens.monotonic); a wait_in_line that takes an unknown seat outcome
// for a grant; a settle that grants the offered seat when the release went to a waiter of the
// Provider queued on the server.
//
// With LINE_FAULTS_DELAYS=1 (the long tier's campaign) a fourth fault makes the Provider's next
// findAndModify wait 3.5 s inside the primary and then run, after its client gave up at 1.5 s:
// late execution of an attempt, a release or a seat release.
//
// Seed: LINE_FAULTS_SEED, else drawn at random; printed with every failure. Length:
// LINE_FAULTS_SECONDS (default 8; the long tier's campaign runs several seeds longer).
//
// Model left out: the Provider's own process dying or pausing (its seats go with it; the test
// process is the client), partitions between the client and some members, clock faults, fail
// points that refuse the line's own commands (errors, closed connections), holds lost at their
// lease end while their thread runs on (the critical section is 2 ms: a hold outlives its lease
// only when its release is what hangs), late execution in the default suite (the campaign's
// delays cover it), and more than one Provider: another process's holder or queued waiters while
// seats wait (a seat release that did not check its holder passes this test, delays included:
// with one Provider the tombstone of an unknown release's seat and the line's closing at a loss
// stop the late grant; against another Provider's holder nothing would). The seat releases
// counted are sends, not grants; the unknown and line-closing paths are not counted.
#include <gtest/gtest.h>
#include <mongoc/mongoc.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <random>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "checker/checker.h"
#include "checker/history.h"
#include "client/resource_client.h"
#include "client/workload.h"
#include "db/db.h"
#include "harness_db.h"
#include "mongolock/provider.h"
#include "programs.h"
#include "run/process.h"
#include "temp_dir.h"

namespace locklab {
namespace {

constexpr int kThreads = 6;
constexpr int64_t kExpiryMs = 3'000;
constexpr int64_t kCriticalSectionMs = 2;
constexpr int64_t kMemberWaitMs = 20'000;  // bound on a member coming back, a primary appearing
constexpr const char* kDatabase = "locklab";

int64_t env_int(const char* name, int64_t fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::stoll(text) : fallback;
}

// Counts the seat releases a pool sends: findAndModify whose query names `tombstones.id` (only
// the short seat release does: commands.cpp seat_release_command).
class SeatReleaseCounter {
 public:
  explicit SeatReleaseCounter(const std::string& uri_text) {
    bson_error_t error;
    mongoc_uri_t* uri = mongoc_uri_new_with_error(uri_text.c_str(), &error);
    if (uri == nullptr) throw std::invalid_argument(std::string("bad URI: ") + error.message);
    pool_ = mongoc_client_pool_new(uri);
    mongoc_uri_destroy(uri);
    if (pool_ == nullptr) throw std::invalid_argument("no pool for " + uri_text);
    mongoc_apm_callbacks_t* callbacks = mongoc_apm_callbacks_new();
    mongoc_apm_set_command_started_cb(callbacks, &SeatReleaseCounter::started);
    const bool set = mongoc_client_pool_set_apm_callbacks(pool_, callbacks, this);
    mongoc_apm_callbacks_destroy(callbacks);
    if (!set) throw std::logic_error("libmongoc refused the APM callbacks");
  }
  ~SeatReleaseCounter() { mongoc_client_pool_destroy(pool_); }
  SeatReleaseCounter(const SeatReleaseCounter&) = delete;
  SeatReleaseCounter& operator=(const SeatReleaseCounter&) = delete;

  mongoc_client_pool_t* pool() const { return pool_; }
  int64_t seat_releases() const { return seat_releases_.load(); }

 private:
  static void started(const mongoc_apm_command_started_t* event) {
    if (std::string(mongoc_apm_command_started_get_command_name(event)) != "findAndModify") return;
    const bson_t* command = mongoc_apm_command_started_get_command(event);
    bson_iter_t it;
    bson_iter_t query;
    if (bson_iter_init_find(&it, command, "query") && BSON_ITER_HOLDS_DOCUMENT(&it) &&
        bson_iter_recurse(&it, &query) && bson_iter_find(&query, "tombstones.id")) {
      static_cast<SeatReleaseCounter*>(mongoc_apm_command_started_get_context(event))
          ->seat_releases_.fetch_add(1);
    }
  }

  mongoc_client_pool_t* pool_ = nullptr;
  std::atomic<int64_t> seat_releases_{0};
};

class LocalLineFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::programs_built()) GTEST_SKIP() << "needs mongosim built";
    seed_ = static_cast<uint64_t>(env_int("LINE_FAULTS_SEED", 0));
    delays_ = env_int("LINE_FAULTS_DELAYS", 0) != 0;
    if (seed_ == 0) seed_ = std::random_device{}() | 1u;
    dir_ = std::make_unique<testkit::TempDir>();
    cluster_ = testkit::harness_db(dir_->path(), 3, supervisor_);
    cluster_->start();
  }
  void TearDown() override {
    if (cluster_) cluster_->stop();
  }

  // One fault, then its heal, before the next: a majority stays or comes back.
  void one_fault(std::mt19937_64& rng) {
    // Half the pauses and kills hit the primary (a random member misses it 2 times in 3).
    const int primary = cluster_->primary();
    const bool at_primary = primary >= 0 && rng() % 2 == 0;
    const int member = at_primary ? primary : static_cast<int>(rng() % 3);
    if (member == primary) ++primary_faults_;
    const auto lasting = std::chrono::milliseconds(300 + rng() % 4'000);
    const uint64_t kinds = delays_ ? 4 : 3;
    switch (rng() % kinds) {
      case 3: {
        // The Provider's next findAndModify on the primary waits 3.5 s there, then runs: its
        // client gave up at 1.5 s (an unknown outcome) and its lease may have lapsed.
        const int p = cluster_->primary();
        if (p < 0) return;
        const nlohmann::json reply = cluster_->try_command(p, "admin",
                                                           {{"configureFailPoint", "failCommand"},
                                                            {"mode", {{"times", 1}}},
                                                            {"data",
                                                             {{"failCommands", {"findAndModify"}},
                                                              {"blockConnection", true},
                                                              {"blockTimeMS", 3'500},
                                                              {"appName", "line"}}}});
        ++primary_faults_;
        faults_ +=
            " delay m" + std::to_string(p) + (reply.value("ok", 0.0) == 1.0 ? "" : "(refused)");
        return;
      }
      case 0: {
        const int p = cluster_->primary();
        if (p >= 0) {
          const nlohmann::json reply = cluster_->try_command(
              p, "admin", {{"replSetStepDown", 2}, {"secondaryCatchUpPeriodSecs", 1}});
          ++primary_faults_;
          faults_ += " step-down m" + std::to_string(p) +
                     (reply.value("ok", 0.0) == 1.0 ? "" : "(refused)");
        }
        return;
      }
      case 1:
        faults_ +=
            " pause m" + std::to_string(member) + " " + std::to_string(lasting.count()) + "ms";
        cluster_->pause_member(member);
        std::this_thread::sleep_for(lasting);  // the fault's length: this is the workload
        cluster_->resume_member(member);
        return;
      default:
        faults_ +=
            " kill m" + std::to_string(member) + " " + std::to_string(lasting.count()) + "ms";
        cluster_->kill_member(member);
        std::this_thread::sleep_for(lasting);
        cluster_->restart_member(member);
        ASSERT_TRUE(cluster_->wait_answering(member, kMemberWaitMs)) << "member " << member;
        return;
    }
  }

  // The harness's final read of the fenced resource.
  Event final_read(const std::string& resource) {
    const int p = cluster_->wait_for_primary(kMemberWaitMs);
    EXPECT_GE(p, 0) << "no primary for the final read";
    if (p < 0) return {};
    const nlohmann::json doc = cluster_->read_confirmed(p, kDatabase, kFencedCollection, resource);
    return {
        0, "harness", EventType::kOk, "final", "", std::nullopt, fenced_final_value(resource, doc)};
  }

  uint64_t seed_ = 0;
  std::string faults_;      // what one_fault did, for the report
  int primary_faults_ = 0;  // faults that hit the member that was primary
  bool delays_ = false;     // LINE_FAULTS_DELAYS: also delay a findAndModify inside the primary
  Supervisor supervisor_;
  std::unique_ptr<testkit::TempDir> dir_;
  std::unique_ptr<Db> cluster_;
};

TEST_F(LocalLineFaultsTest, ThreadsOfOneProviderKeepTokensAndFencingThroughMemberFaults) {
  SCOPED_TRACE("LINE_FAULTS_SEED=" + std::to_string(seed_));
  const int64_t seconds = env_int("LINE_FAULTS_SECONDS", 8);
  const std::string history_path = dir_->file("history.jsonl");
  std::vector<WorkerConfig> configs;
  for (int k = 1; k <= kThreads; ++k) {
    WorkerConfig c;
    c.id = "t" + std::to_string(k);
    c.uri = cluster_->uri(c.id);
    c.history_path = history_path;
    c.kind = WorkloadKind::kFenced;
    c.critical_section_ms = kCriticalSectionMs;
    c.lock.expiry_ms = kExpiryMs;
    c.seed = seed_ + static_cast<uint64_t>(k);
    configs.push_back(c);
  }
  // Timeouts bounded by the lease, as the Provider bounds those of a pool it makes itself.
  SeatReleaseCounter counter(cluster_->uri("line") +
                             "&socketTimeoutMS=1500&serverSelectionTimeoutMS=1500");
  mongolock::Options options;
  options.expiry_ms = kExpiryMs;
  options.backoff = mongolock::Backoff::kNotify;
  options.collection = "locks";
  {
    mongolock::Provider provider(counter.pool(), kDatabase, options);
    std::stop_source stop;
    std::string workload_error;
    std::jthread workload([&] {
      try {
        run_workload_threads(provider, configs, stop.get_token());
      } catch (const std::exception& e) {
        workload_error = e.what();
      }
    });
    std::mt19937_64 rng(seed_);
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while ((std::chrono::steady_clock::now() < end || primary_faults_ == 0) && !HasFatalFailure()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200 + rng() % 800));  // between faults
      one_fault(rng);
    }
    stop.request_stop();
    workload.join();
    ASSERT_EQ(workload_error, "");
  }  // the loops have released what they held; the Provider is closed
  std::vector<Event> history = read_history(history_path);
  ASSERT_FALSE(history.empty());
  const int64_t first_ns = history.front().t_ns;
  history.insert(history.begin(),
                 Event{first_ns - 1,
                       "harness",
                       EventType::kInfo,
                       "start",
                       "",
                       std::nullopt,
                       {{"vocabulary", 2}, {"workload", "fenced"}, {"tokens", true}}});
  Event final = final_read(resource_name(lock_name(0)));
  final.t_ns = history.back().t_ns + 1;
  history.push_back(final);
  CheckConfig config;
  config.properties = {std::string(kTokensUnique), std::string(kTokensMonotonic),
                       std::string(kExclusionFenced), std::string(kExclusionStrict)};
  const Verdict verdict = check(history, config);
  for (const PropertyResult& p : verdict.properties) {
    EXPECT_EQ(p.outcome, Outcome::kValid)
        << p.property << ": " << p.note
        << (p.violations.empty() ? "" : " first violation: " + p.violations[0].message);
  }
  EXPECT_GE(verdict.stats.acquisitions, 10u) << "too few grants to judge";
  EXPECT_GT(counter.seat_releases(), 0)
      << "no seat was ever handed the lock: the line was not used";
  std::cout << "local line under faults: seed " << seed_ << ", " << verdict.stats.acquisitions
            << " grants, " << verdict.stats.acquisitions_unknown << " unknown, "
            << counter.seat_releases() << " seat releases; faults:" << faults_ << "\nevents:";
  for (const auto& [f, n] : verdict.stats.events_by_f) std::cout << " " << f << " " << n;
  for (const auto& [t, n] : verdict.stats.events_by_type) std::cout << " " << t << " " << n;
  std::cout << "\n";
}

// Bad input to run_workload_threads is refused before any thread starts, naming what was wrong
// (the Provider is made from a URI no server answers: nothing is sent).
TEST(RunWorkloadThreads, RefusesNoConfigsADuplicateIdAndASecondHistory) {
  mongolock::Provider provider("mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=100", kDatabase);
  WorkerConfig a;
  a.id = "t1";
  a.history_path = "/nonexistent/history.jsonl";
  WorkerConfig b = a;
  const auto message = [&](const std::vector<WorkerConfig>& configs) -> std::string {
    try {
      run_workload_threads(provider, configs, {});
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(message({}), "run_workload_threads: no config");
  EXPECT_EQ(message({a, b}), "run_workload_threads: worker id \"t1\" is empty or given twice");
  b.id = "t2";
  b.history_path = "/nonexistent/other.jsonl";
  EXPECT_EQ(message({a, b}), "run_workload_threads: worker t2 has another history path than t1");
}

}  // namespace
}  // namespace locklab
