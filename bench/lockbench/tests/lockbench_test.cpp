// lockbench's own tests: the figures from known records (handoff order by token, Jain's index,
// counters that must add up, the server's counted commands split by sender), the strategy table
// and the command line, and cells run against a real mongosim (threads, K locks, processes)
// whose counters must add up: acquisitions = releases = hold records per contender and in total,
// and the commands the clients' pools sent (APM) = the lock commands the server counted.
//
// The model leaves out: timing (no figure is checked against a number: that is the benchmark's
// job, not a test's), failover and faults (a cell runs on a healthy set), crashes of a contender
// mid-hold (a crashed child fails the cell), --uri servers (other clients' commands would make
// the server's count differ), and the three-member set (the same counting, more members).
#include <gtest/gtest.h>
#include <mongoc/mongoc.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "apm_pool.h"
#include "cell.h"
#include "child.h"
#include "clock.h"
#include "config.h"
#include "figures.h"
#include "hand_over_floor.h"
#include "plan.h"
#include "records.h"
#include "server.h"
#include "stats.h"
#include "strategies.h"
#include "testkit.h"

namespace lockbench {
namespace {

// A hold whose release() was called at its release time (a round trip of 0).
Hold hold(int32_t lock, int64_t token, int64_t acquired_ms, int64_t released_ms) {
  return {lock,
          token,
          acquired_ms * kNsPerMs,
          acquired_ms * kNsPerMs,
          released_ms * kNsPerMs,
          released_ms * kNsPerMs};
}

TEST(Stats, NearestRankQuantilesAndJain) {
  const std::vector<double> sorted = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(quantile(sorted, 0.5), 5);
  EXPECT_EQ(quantile(sorted, 0.99), 10);
  EXPECT_EQ(quantile(sorted, 0.0), 1);
  EXPECT_EQ(quantile({}, 0.5), 0);
  EXPECT_DOUBLE_EQ(jain_index({5, 5, 5, 5}), 1.0);
  EXPECT_DOUBLE_EQ(jain_index({8, 0, 0, 0}), 0.25);
  EXPECT_DOUBLE_EQ(jain_index({1, 3}), 16.0 / 20.0);
}

TEST(Figures, HandoffsFollowTokenOrderPerLock) {
  ContenderReport a;
  ContenderReport b;
  // Lock 0: a holds token 1 [0, 10], b token 2 [13, 20], a token 3 [21, 30]. Records of one
  // contender are not in token order across contenders: the figures must sort them.
  a.holds = {hold(0, 1, 0, 10), hold(0, 3, 21, 30)};
  b.holds = {hold(0, 2, 13, 20), hold(1, 7, 5, 6), hold(1, 8, 9, 9)};
  const std::vector<Handoff> h = handoffs({a, b});
  ASSERT_EQ(h.size(), 3U);
  EXPECT_DOUBLE_EQ(h[0].ms, 3);  // a released at 10, b acquired at 13
  EXPECT_FALSE(h[0].same_contender);
  EXPECT_DOUBLE_EQ(h[1].ms, 1);  // b released at 20, a acquired at 21
  EXPECT_DOUBLE_EQ(h[2].ms, 3);  // lock 1: b to b
  EXPECT_TRUE(h[2].same_contender);
}

TEST(Figures, OnlyHandoffsWithSomeoneWaitingAreContended) {
  ContenderReport a;
  ContenderReport b;
  // a holds [0, 10] and [30, 40]; b asks at 5 and gets the lock at 12 (waiting at a's release at
  // 10); a asks again at 25, after b released at 20: nobody waited at 20.
  a.holds = {hold(0, 1, 0, 10),
             Hold{0, 3, 25 * kNsPerMs, 30 * kNsPerMs, 40 * kNsPerMs, 40 * kNsPerMs}};
  b.holds = {Hold{0, 2, 5 * kNsPerMs, 12 * kNsPerMs, 20 * kNsPerMs, 20 * kNsPerMs}};
  // c waits for lock 0 from 35 until the cell ends at 50 (an open wait): a's release at 40.
  ContenderReport c;
  c.open_wait = OpenWait{0, 35 * kNsPerMs, 50 * kNsPerMs};
  ContenderReport d;  // a second hold by a, then d: nobody waits for lock 0 at 40 but c
  d.holds = {Hold{0, 4, 41 * kNsPerMs, 45 * kNsPerMs, 46 * kNsPerMs, 46 * kNsPerMs}};
  const std::vector<Handoff> h = handoffs({a, b, c, d});
  ASSERT_EQ(h.size(), 3U);
  EXPECT_TRUE(h[0].contended);   // a -> b, b waiting since 5
  EXPECT_FALSE(h[1].contended);  // b -> a, nobody waiting at 20
  EXPECT_DOUBLE_EQ(h[1].ms, 10);
  EXPECT_TRUE(h[2].contended);  // a -> d at 40, c waiting since 35
  // A wait for another lock does not count.
  ContenderReport e;
  e.open_wait = OpenWait{1, 15 * kNsPerMs, 50 * kNsPerMs};
  EXPECT_FALSE(handoffs({a, b, e})[1].contended);
}

TEST(Figures, ARepeatedTokenIsAnError) {
  ContenderReport a;
  a.holds = {hold(0, 4, 0, 1), hold(0, 4, 2, 3)};
  EXPECT_THROW(handoffs({a}), std::runtime_error);
}

CellRaw raw_of(std::vector<ContenderReport> contenders) {
  static const Strategy& random = strategy_named("random");
  CellRaw raw;
  raw.spec = {0, "main", &random, Mode::kThreads, static_cast<int>(contenders.size()), 1, 10, 1};
  raw.start_ns = 0;
  raw.stop_ns = kNsPerS;
  raw.contenders = std::move(contenders);
  return raw;
}

TEST(Figures, CountersAddUpOnlyWhenEveryAcquisitionWasReleased) {
  ContenderReport a;
  a.holds = {hold(0, 1, 0, 10), hold(0, 3, 30, 40)};
  a.acquisitions = a.releases = 2;
  ContenderReport b;
  b.holds = {hold(0, 2, 15, 25)};
  b.acquisitions = b.releases = 1;
  FloorResult floor;
  floor.target = "test";
  const auto good = cell_figures(raw_of({a, b}), floor, 1.0);
  EXPECT_TRUE(good["counters"]["add_up"].get<bool>());
  EXPECT_EQ(good["counters"]["acquisitions"].get<int64_t>(), 3);
  EXPECT_DOUBLE_EQ(good["throughput"]["acquisitions_per_s"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(good["throughput"]["hold_bound_per_s"].get<double>(), 1000.0 / 11.0);
  EXPECT_DOUBLE_EQ(good["fairness"]["jain_index"].get<double>(), 9.0 / 10.0);
  EXPECT_DOUBLE_EQ(good["fairness"]["fifo_bound_ms"].get<double>(), 11.0);
  EXPECT_EQ(good["release_ms"]["count"].get<int64_t>(), 3);
  EXPECT_DOUBLE_EQ(good["release_ms"]["max"].get<double>(), 0.0);
  b.releases = 0;  // an acquisition never released
  const auto bad = cell_figures(raw_of({a, b}), floor, 1.0);
  EXPECT_FALSE(bad["counters"]["add_up"].get<bool>());
}

// release_ms is release() called to returned, per hold, in ms and (p50) in floor round trips.
TEST(Figures, ReleaseFiguresAreEachReleaseCallsDuration) {
  ContenderReport a;
  a.holds = {hold(0, 1, 0, 10), hold(0, 3, 30, 40)};
  a.holds[0].release_asked_ns = 9 * kNsPerMs;   // 1 ms
  a.holds[1].release_asked_ns = 37 * kNsPerMs;  // 3 ms
  a.acquisitions = a.releases = 2;
  ContenderReport b;
  b.holds = {hold(0, 2, 15, 25)};
  b.holds[0].release_asked_ns = 23 * kNsPerMs;  // 2 ms
  b.acquisitions = b.releases = 1;
  FloorResult floor;
  floor.target = "test";
  const auto figures = cell_figures(raw_of({a, b}), floor, 0.5);
  const auto& release = figures["release_ms"];
  EXPECT_EQ(release["count"].get<int64_t>(), 3);
  EXPECT_DOUBLE_EQ(release["p50"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(release["max"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(release["p50_over_rtt"].get<double>(), 4.0);
}

TEST(Figures, OpenWaitsCountInTheLongestWait) {
  ContenderReport a;
  a.holds = {hold(0, 1, 0, 900)};
  a.acquisitions = a.releases = 1;
  ContenderReport b;
  b.open_wait = OpenWait{0, 1 * kNsPerMs, 1000 * kNsPerMs};
  FloorResult floor;
  const auto f = cell_figures(raw_of({a, b}), floor, 1.0);
  EXPECT_DOUBLE_EQ(f["fairness"]["longest_wait_ms"].get<double>(), 999.0);
  EXPECT_EQ(f["wait_ms"]["open_at_end"].get<int64_t>(), 1);
}

// The window's end (raw_of: 1000 ms) cuts every wait: one granted after it counts as open, to the
// end (not to its grant), and not among the waits that ended; one granted exactly at the end
// ended inside; one asked after the end counts 0. Omits: the withdrawals that delay such grants.
TEST(Figures, AWaitGrantedAfterTheWindowCountsOnlyToItsEnd) {
  ContenderReport a;  // asked 940, granted 1100: open for 60 ms of the window (160 uncut)
  a.holds = {Hold{0, 1, 940 * kNsPerMs, 1100 * kNsPerMs, 1111 * kNsPerMs, 1110 * kNsPerMs}};
  a.acquisitions = a.releases = 1;
  ContenderReport b;  // asked 950, granted at the end exactly: a 50 ms wait that ended
  b.holds = {Hold{0, 0, 950 * kNsPerMs, 1000 * kNsPerMs, 1003 * kNsPerMs, 1002 * kNsPerMs}};
  b.acquisitions = b.releases = 1;
  ContenderReport c;  // asked after the end (the loop checked the clock just before it)
  c.open_wait = OpenWait{0, 1001 * kNsPerMs, 1020 * kNsPerMs};
  FloorResult floor;
  const auto f = cell_figures(raw_of({a, b, c}), floor, 1.0);
  EXPECT_EQ(f["wait_ms"]["count"].get<int64_t>(), 1);
  EXPECT_DOUBLE_EQ(f["wait_ms"]["max"].get<double>(), 50.0);
  EXPECT_EQ(f["wait_ms"]["open_at_end"].get<int64_t>(), 2);
  EXPECT_DOUBLE_EQ(f["wait_ms"]["longest_including_open"].get<double>(), 60.0);
  EXPECT_DOUBLE_EQ(f["wait_ms"]["longest_first"].get<double>(), 60.0);
  EXPECT_DOUBLE_EQ(f["fairness"]["longest_wait_ms"].get<double>(), 60.0);
  EXPECT_TRUE(f["counters"]["add_up"].get<bool>());  // the late hold is still an acquisition
  // A wait the end cut off counts to the end, not to the contender's giving up.
  c.open_wait = OpenWait{0, 800 * kNsPerMs, 1030 * kNsPerMs};
  const auto g = cell_figures(raw_of({a, b, c}), floor, 1.0);
  EXPECT_DOUBLE_EQ(g["fairness"]["longest_wait_ms"].get<double>(), 200.0);
  EXPECT_DOUBLE_EQ(g["wait_ms"]["longest_first"].get<double>(), 200.0);
}

// The same rule for single events: a handoff granted, a hold whose release was called, a
// release that returned after the window's end is left out (and the handoff counted apart).
TEST(Figures, HandoffsHoldsAndReleasesAfterTheWindowAreLeftOut) {
  ContenderReport a;
  a.holds = {Hold{0, 1, 0, 10 * kNsPerMs, 21 * kNsPerMs, 20 * kNsPerMs},
             Hold{0, 3, 990 * kNsPerMs, 995 * kNsPerMs, 1500 * kNsPerMs, 1400 * kNsPerMs}};
  a.acquisitions = a.releases = 2;
  ContenderReport b;  // waits from 5, granted at 22 (handoff 1 ms); then granted after the end
  b.holds = {Hold{0, 2, 5 * kNsPerMs, 22 * kNsPerMs, 31 * kNsPerMs, 30 * kNsPerMs},
             Hold{0, 4, 999 * kNsPerMs, 1600 * kNsPerMs, 1700 * kNsPerMs, 1650 * kNsPerMs}};
  b.acquisitions = b.releases = 2;
  FloorResult floor;
  const auto f = cell_figures(raw_of({a, b}), floor, 1.0);
  EXPECT_EQ(f["handoff_ms"]["count"].get<int64_t>(), 1);  // 1 -> 2; 2 -> 3 had nobody waiting
  EXPECT_EQ(f["handoff_ms"]["after_window"].get<int64_t>(), 1);  // 3 -> 4, granted at 1600
  EXPECT_DOUBLE_EQ(f["handoff_ms"]["max"].get<double>(), 1.0);
  EXPECT_EQ(f["held_ms"]["count"].get<int64_t>(), 2);  // release called at 1400 and 1650: out
  EXPECT_DOUBLE_EQ(f["held_ms"]["max"].get<double>(), 10.0);
  EXPECT_EQ(f["release_ms"]["count"].get<int64_t>(), 2);
  EXPECT_DOUBLE_EQ(f["release_ms"]["max"].get<double>(), 1.0);
}

TEST(ServerCount, SubtractsOwnStatusMonitoringAndMemberTraffic) {
  ServerSnapshot before;
  before.opcounters = {{"command", 100}, {"update", 10}, {"query", 1}};
  before.commands = {{"findAndModify", 50}, {"hello", 7}, {"serverStatus", 3}};
  before.status_calls = 1;
  ServerSnapshot after;
  after.opcounters = {{"command", 100 + 20 + 2 + 3 + 1}, {"update", 15}, {"query", 1}};
  after.commands = {{"findAndModify", 70},
                    {"hello", 9},
                    {"serverStatus", 4},
                    {"replSetHeartbeat", 3},
                    {"update", 5}};
  after.status_calls = 1;
  const ServerCount c = count_between(before, after);
  EXPECT_EQ(c.opcounters_sum, 31);
  EXPECT_EQ(c.own_status_calls, 1);
  EXPECT_EQ(c.monitoring, 2);
  EXPECT_EQ(c.members_internal, 3);
  EXPECT_EQ(c.lock_commands, 25);  // 20 findAndModify + 5 updates
}

TEST(Records, TextRoundTripsAndBadLinesNameTheirPlace) {
  ContenderReport r;
  r.holds = {hold(2, 9, 1, 2)};
  r.holds[0].release_asked_ns = 2 * kNsPerMs - 7;
  r.open_wait = OpenWait{2, 5, 6};
  r.acquisitions = r.releases = 1;
  r.commands_sent = {{"findAndModify", 3}, {"update", 1}};
  const ContenderReport back = from_text(to_text(r), "x");
  ASSERT_EQ(back.holds.size(), 1U);
  EXPECT_EQ(back.holds[0].token, 9);
  EXPECT_EQ(back.holds[0].released_ns, 2 * kNsPerMs);
  EXPECT_EQ(back.holds[0].release_asked_ns, 2 * kNsPerMs - 7);
  EXPECT_EQ(back.open_wait->given_up_ns, 6);
  EXPECT_EQ(back.commands_sent, r.commands_sent);
  try {
    from_text("T 1 1\nH 1 2 x\n", "child-3");
    FAIL() << "a malformed line was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("child-3:2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(from_text("H 0 1 1 1 1 1\n", "cut"), std::runtime_error);       // no T line
  EXPECT_THROW(from_text("H 0 1 1 1 1\nT 1 1\n", "old"), std::runtime_error);  // 5 fields
}

TEST(Strategies, UnknownAndRepeatedNamesAreRefusedAndEveryStrategyIsAvailable) {
  try {
    pick_strategies({"exponential"});
    FAIL() << "an unknown strategy was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("decorrelated"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("notify"), std::string::npos) << e.what();
  }
  EXPECT_THROW(pick_strategies({"random", "random"}), std::invalid_argument);
  EXPECT_EQ(pick_strategies({"random", "notify"}).size(), 2U);
  std::vector<std::string> names;
  for (const Strategy* s : available_strategies()) names.emplace_back(s->name);
  EXPECT_EQ(names, (std::vector<std::string>{"random", "adaptive", "decorrelated", "notify"}));
}

Config parse(std::vector<std::string> args) {
  args.insert(args.begin(), "lockbench");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  Config c;
  EXPECT_TRUE(parse_config(static_cast<int>(argv.size()), argv.data(), c));
  return c;
}

void expect_refused(std::vector<std::string> args, const std::string& names) {
  try {
    parse(std::move(args));
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
  }
}

TEST(Config, BadInputNamesTheFlag) {
  expect_refused({"--contention", "4,0"}, "--contention");
  expect_refused({"--strategies", "notify,backwards"}, "backwards");
  expect_refused({"--mode", "fibres"}, "--mode");
  expect_refused({"--min-ms", "900"}, "--min-ms");
  expect_refused({"--seconds-per-cell", "0"}, "--seconds-per-cell");
  expect_refused({"--uri", "mongodb://h/", "--members", "3"}, "--members");
  expect_refused({"--slices", "regions"}, "--slices");
  expect_refused({"--slices", "none,locks"}, "--slices");
}

TEST(Plan, DefaultMatrixIsTheMainGridPlusSlices) {
  const Config c = parse({});
  const std::vector<CellSpec> cells = build_plan(c.axes);
  const size_t strategies = available_strategies().size();
  size_t main = 0;
  size_t three = 0;
  for (const CellSpec& cell : cells) {
    if (cell.plan == "main") ++main;
    if (cell.members == 3) ++three;
    EXPECT_EQ(cell.index, &cell - cells.data());
  }
  EXPECT_EQ(main, 21 * strategies);
  EXPECT_EQ(cells.size(), 29 * strategies);
  EXPECT_EQ(three, 3 * strategies);
  EXPECT_EQ(cells.back().members, 3);  // grouped by server, one member first
  const Config quick = parse({"--quick"});
  EXPECT_EQ(build_plan(quick.axes).size(), 4 * strategies);
}

// Cells against a real one-member mongosim.
class Cells : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (locklab::testkit::mongosim_program().empty()) return;
    target_ = Target::start_mongosim(1).release();
    settings_.run_id = "test" + std::to_string(::getpid());
    settings_.seconds_per_cell = 0.8;
    settings_.gap_ms = 1;
    settings_.busy_wait_min_ms = 2;
    settings_.busy_wait_max_ms = 20;
    settings_.self_exe = LOCKBENCH_PATH;
    work_ = new locklab::testkit::TempDir("lockbench_test");
    settings_.work_dir = work_->path();
    prepare_server(target_->client_uri("lockbench-test"), settings_);
  }
  static void TearDownTestSuite() {
    delete target_;
    delete work_;
  }
  void SetUp() override {
    if (target_ == nullptr) GTEST_SKIP() << "this build has no mongosim";
  }
  // Runs a cell and checks everything that must add up; returns its figures.
  static nlohmann::ordered_json run_and_check(const CellSpec& spec) {
    const CellRaw raw = run_cell(*target_, settings_, spec);
    EXPECT_TRUE(raw.errors.empty()) << raw.errors.front();
    EXPECT_EQ(raw.contenders.size(), static_cast<size_t>(spec.contenders));
    int64_t acquisitions = 0;
    for (const ContenderReport& c : raw.contenders) {
      EXPECT_EQ(c.error, "");
      EXPECT_EQ(c.acquisitions, c.releases);
      EXPECT_EQ(c.acquisitions, static_cast<int64_t>(c.holds.size()));
      acquisitions += c.acquisitions;
    }
    EXPECT_GT(acquisitions, 0);
    EXPECT_EQ(raw.server.lock_commands, total(raw.client_commands));
    EXPECT_GE(raw.client_commands.count("findAndModify"), 1U);
    FloorResult floor;
    floor.target = target_->describe();
    const auto f = cell_figures(raw, floor, 0.1);  // also: tokens never repeat per lock
    EXPECT_TRUE(f["counters"]["add_up"].get<bool>());
    EXPECT_TRUE(f["server"]["commands_match"].get<bool>());
    // Every release is one update the server counted.
    EXPECT_EQ(raw.server.per_command.at("update"), acquisitions);
    return f;
  }
  // Sets mongosim's failCommand fail point (configureFailPoint's JSON).
  static void fail_point(const char* json) {
    mongoc_client_t* client =
        mongoc_client_new(target_->client_uri("lockbench-fail-point").c_str());
    ASSERT_NE(client, nullptr);
    bson_error_t error;
    bson_t* command = bson_new_from_json(reinterpret_cast<const uint8_t*>(json), -1, &error);
    ASSERT_NE(command, nullptr) << error.message;
    const bool ok =
        mongoc_client_command_simple(client, "admin", command, nullptr, nullptr, &error);
    bson_destroy(command);
    mongoc_client_destroy(client);
    ASSERT_TRUE(ok) << error.message;
  }
  // A number field of the hand-over floor's document, read from the server; -1 when the field
  // (or the document) is missing.
  static int64_t floor_field(const std::string& lock_name, const char* field) {
    mongoc_client_t* client = mongoc_client_new(target_->client_uri("lockbench-read").c_str());
    mongoc_collection_t* collection =
        mongoc_client_get_collection(client, settings_.database.c_str(), "lockbench_hand_over");
    bson_t* filter = BCON_NEW("_id", BCON_UTF8(lock_name.c_str()));
    mongoc_cursor_t* cursor =
        mongoc_collection_find_with_opts(collection, filter, nullptr, nullptr);
    const bson_t* doc = nullptr;
    bson_iter_t it;
    int64_t value = -1;
    if (mongoc_cursor_next(cursor, &doc) && bson_iter_init_find(&it, doc, field)) {
      value = bson_iter_as_int64(&it);
    }
    mongoc_cursor_destroy(cursor);
    bson_destroy(filter);
    mongoc_collection_destroy(collection);
    mongoc_client_destroy(client);
    return value;
  }
  static inline Target* target_ = nullptr;
  static inline RunSettings settings_;
  static inline locklab::testkit::TempDir* work_ = nullptr;
};

TEST_F(Cells, ThreadsOnOneLockAddUp) {
  run_and_check({0, "main", &strategy_named("random"), Mode::kThreads, 4, 1, 1, 1});
}

TEST_F(Cells, ThreadsOnSeveralLocksAddUp) {
  const auto f =
      run_and_check({1, "locks", &strategy_named("decorrelated"), Mode::kThreads, 5, 2, 1, 1});
  EXPECT_EQ(f["locks"].get<int>(), 2);
}

TEST_F(Cells, ProcessesAddUp) {
  run_and_check({2, "processes", &strategy_named("adaptive"), Mode::kProcesses, 3, 1, 1, 1});
}

// A contender that cannot start is named with how it ended and what it wrote: /bin/sh stands in
// for lockbench and refuses the "--child" flag (exit 2, a message on stderr) before any "ready".
TEST_F(Cells, AProcessThatEndsBeforeReadyIsNamedWithItsStderr) {
  RunSettings broken = settings_;
  broken.self_exe = "/bin/sh";
  try {
    run_cell(*target_, broken,
             {3, "processes", &strategy_named("random"), Mode::kProcesses, 2, 1, 1, 1});
    FAIL() << "the cell ran with contenders that never started";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("contender process 0 ended with exit 2 before its 'ready' line"),
              std::string::npos)
        << message;
    const size_t stderr_at = message.find("its stderr: ");
    ASSERT_NE(stderr_at, std::string::npos) << message;
    EXPECT_GT(message.size(), stderr_at + 12) << "the child's stderr is not quoted: " << message;
  }
}

// A contender thread whose warm-up fails is named, and the cell ends with its error instead of
// running: mongosim's failCommand fail point refuses the first findAndModify lockbench's pool
// sends (a warm-up's: nothing else sends one before the window). The other threads, already
// warmed up and waiting for the window, get none and end (a hang here is the test's timeout);
// the server counts no lock command beyond the warm-ups' (at most an acquire and a release
// each), where a cell that ran would count hundreds. The model omits a warm-up that hangs rather
// than fails (try_acquire's own timeout bounds it) and a thread that cannot be started (the
// same "no window" path, by WindowOrNone; not injected here).
TEST_F(Cells, AThreadWhoseWarmUpFailsIsNamedAndTheCellEnds) {
  fail_point(R"({"configureFailPoint": "failCommand", "mode": {"times": 1}, "data":
      {"failCommands": ["findAndModify"], "errorCode": 2, "appName": "lockbench"}})");
  const int contenders = 3;
  const ServerSnapshot before = target_->snapshot();
  try {
    run_cell(*target_, settings_,
             {4, "main", &strategy_named("random"), Mode::kThreads, contenders, 1, 1, 1});
    ADD_FAILURE() << "the cell ran although a contender's warm-up failed";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("warm-up"), std::string::npos) << message;
    EXPECT_NE(message.find("contender "), std::string::npos) << message;
  }
  const ServerCount c = count_between(before, target_->snapshot());
  fail_point(R"({"configureFailPoint": "failCommand", "mode": "off"})");
  const auto count = [&](const char* name) {
    const auto it = c.per_command.find(name);
    return it == c.per_command.end() ? int64_t{0} : it->second;
  };
  EXPECT_LE(count("findAndModify") + count("update"), 2 * contenders)
      << nlohmann::json(c.per_command).dump();
}

// The hand-over floor on a real mongosim: every hand-over write is on the server (the token it
// kept, and its own findAndModify count, equal the writes sent) and grants follow the asks.
// What the model omits: a second process and a lock's own server-side logic (by design).
TEST_F(Cells, HandOverFloorAddsUpOnTheServerAndIsFifo) {
  const int contenders = 4;
  const ServerSnapshot before = target_->snapshot();
  const HandOverFloor h =
      measure_hand_over_floor(target_->client_uri("lockbench-hof"), settings_.database,
                              "lb-" + settings_.run_id + "-hof", {contenders, 1, 1, 0.5, 1});
  const ServerCount c = count_between(before, target_->snapshot());
  EXPECT_GT(h.acquisitions, contenders);
  EXPECT_EQ(h.writes_sent, h.acquisitions + contenders);  // a warm-up each, a release each
  EXPECT_EQ(h.asks_sent, 0);                              // asks stay in the process
  EXPECT_EQ(h.token_counted, h.writes_sent);
  EXPECT_EQ(h.token_counted, floor_field("lb-" + settings_.run_id + "-hof", "token"));  // read
  // Each write names its writer: the server's holder is the thread of the last write (a write
  // that dropped the $set, or named a fixed thread, fails unless that thread wrote last).
  ASSERT_GE(h.last_writer, 0);
  ASSERT_LT(h.last_writer, contenders);
  EXPECT_EQ(floor_field("lb-" + settings_.run_id + "-hof", "holder"), h.last_writer);
  EXPECT_TRUE(h.add_up);
  EXPECT_TRUE(h.fifo);
  EXPECT_EQ(c.per_command.at("findAndModify"), h.writes_sent);
  EXPECT_EQ(h.waits_ms.size(), static_cast<size_t>(h.acquisitions));
  EXPECT_EQ(h.turns_ms.size() + 1, static_cast<size_t>(h.acquisitions));
  for (const double t : h.turns_ms) EXPECT_GE(t, 1.0);  // each turn holds at least 1 ms
}

// With asks written, every acquisition also wrote its ask to the server before it took its place:
// the document's asks equal the asks sent and the acquisitions, and the server saw both writes.
// What the model omits: that a queued lock's ask also carries the waiter (a bigger document).
TEST_F(Cells, HandOverFloorWithAsksWritesOneAskPerAcquisition) {
  const int contenders = 3;
  const std::string name = "lb-" + settings_.run_id + "-hof-asks";
  const ServerSnapshot before = target_->snapshot();
  HandOverFloorSpec spec{contenders, 1, 1, 0.5, 1};
  spec.asks_written = true;
  const HandOverFloor h = measure_hand_over_floor(target_->client_uri("lockbench-hof-asks"),
                                                  settings_.database, name, spec);
  const ServerCount c = count_between(before, target_->snapshot());
  EXPECT_GT(h.acquisitions, contenders);
  EXPECT_EQ(h.asks_sent, h.acquisitions);
  EXPECT_EQ(h.asks_counted, h.asks_sent);
  EXPECT_EQ(floor_field(name, "asks"), h.asks_sent);
  EXPECT_EQ(h.token_counted, h.writes_sent);
  EXPECT_TRUE(h.add_up);
  EXPECT_TRUE(h.fifo);
  EXPECT_EQ(c.per_command.at("findAndModify"), h.writes_sent + h.asks_sent);
}

// A thread does gap_ms of other work between a hand-over and its next ask, as a cell's contender
// does: each of its rounds takes at least the gap (sleep_until never returns early) and a round
// starts only inside the window, so a thread has at most window / gap + 1 rounds. A floor that
// skipped the gap would hand over thousands of times. An upper bound that holds on any machine,
// however slow. What it omits: a gap that is too long (a cell's own gap is not checked here
// either), and the write concern (one member acknowledges w: 1 and majority alike).
TEST_F(Cells, HandOverFloorKeepsEachThreadsGap) {
  const int contenders = 2;
  const int64_t gap_ms = 50;
  const double seconds = 0.5;
  const HandOverFloor h = measure_hand_over_floor(
      target_->client_uri("lockbench-hof-gap"), settings_.database,
      "lb-" + settings_.run_id + "-hof-gap", {contenders, 0, gap_ms, seconds, 1});
  const auto rounds_max = static_cast<int64_t>(seconds * 1000 / gap_ms) + 1;
  EXPECT_GE(h.acquisitions, contenders);
  EXPECT_LE(h.acquisitions, contenders * rounds_max);
  EXPECT_TRUE(h.add_up);
}

// A failed hand-over write ends the floor with the command named, every thread joined: it does
// not hang waiting for a baton the failed thread would have passed.
TEST_F(Cells, HandOverFloorEndsOnAFailedWriteAndNamesIt) {
  fail_point(R"({"configureFailPoint": "failCommand", "mode": {"skip": 6}, "data":
      {"failCommands": ["findAndModify"], "errorCode": 2, "appName": "lockbench-hof-fail"}})");
  try {
    measure_hand_over_floor(target_->client_uri("lockbench-hof-fail"), settings_.database,
                            "lb-" + settings_.run_id + "-hof-fail", {3, 0, 0, 2.0, 1});
    ADD_FAILURE() << "the floor ran through a failed write";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("hand-over floor: findAndModify (hand-over) failed"),
              std::string::npos)
        << e.what();
  }
  // With asks written, the first write after the 3 warm-ups is an ask: it fails, named as one,
  // and the run still ends.
  fail_point(R"({"configureFailPoint": "failCommand", "mode": {"skip": 3}, "data":
      {"failCommands": ["findAndModify"], "errorCode": 2, "appName": "lockbench-hof-ask"}})");
  HandOverFloorSpec asks{3, 0, 0, 2.0, 1};
  asks.asks_written = true;
  try {
    measure_hand_over_floor(target_->client_uri("lockbench-hof-ask"), settings_.database,
                            "lb-" + settings_.run_id + "-hof-ask", asks);
    ADD_FAILURE() << "the floor ran through a failed ask";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("hand-over floor: findAndModify (ask) failed"),
              std::string::npos)
        << e.what();
  }
  // The first warm-up fails: its thread leaves the start barrier, so the others do not wait
  // for it.
  fail_point(R"({"configureFailPoint": "failCommand", "mode": {"times": 1}, "data":
      {"failCommands": ["findAndModify"], "errorCode": 2, "appName": "lockbench-hof-warm"}})");
  EXPECT_THROW(
      measure_hand_over_floor(target_->client_uri("lockbench-hof-warm"), settings_.database,
                              "lb-" + settings_.run_id + "-hof-warm", {3, 0, 0, 2.0, 1}),
      std::runtime_error);
  fail_point(R"({"configureFailPoint": "failCommand", "mode": "off"})");
  EXPECT_THROW(measure_hand_over_floor(target_->client_uri("x"), "lockbench", "x", {0, 0, 0, 1, 1}),
               std::invalid_argument);
}

// Snapshots further apart than libmongoc's idle-connection check (socketCheckIntervalMS, 5 s
// by default) count no command of lockbench's own: a status client that pinged its idle
// connection made every notify cell count one command per member more than its clients sent.
// The sleep is the idleness under test, not a synchronisation.
TEST_F(Cells, SnapshotsFarApartCountNothingOfTheirOwn) {
  const ServerSnapshot before = target_->snapshot();
  std::this_thread::sleep_for(std::chrono::milliseconds(5'500));
  const ServerCount c = count_between(before, target_->snapshot());
  EXPECT_EQ(c.lock_commands, 0) << nlohmann::json(c.per_command).dump();
}

}  // namespace
}  // namespace lockbench
