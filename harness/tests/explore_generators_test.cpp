// locklab explore's generators and TOML writer: every generated scenario is valid (it parses
// back, its faults and clients come from the space, its windows fit the run and its kinds fit the
// cluster, and this machine's backend accepts it in preflight) and round-trips through the writer
// and the parser; the scenario library round-trips too (random mixes and fault parameters, which
// the generators do not draw). What the model leaves out: whether the generated runs pass — that
// is the explorations' own tests (explore_run_test, the ctest explore.* runs).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "checker/checker.h"
#include "client/client_manifest.h"
#include "client/clients.h"
#include "explore/generators.h"
#include "explore/scenario_writer.h"
#include "explore/space.h"
#include "run/backend.h"
#include "run/run.h"
#include "temp_dir.h"

namespace locklab {
namespace {

namespace fs = std::filesystem;
using testkit::TempDir;

// Every fault kind and every lock client, as if all could run here.
ExploreSpace everything(ExplorePins pins = {}) {
  return make_space(
      pins, [](FaultKind) { return std::string(); },
      [](const std::string&) { return std::string(); });
}

ExplorePins members_pin(int members) {
  ExplorePins pins;
  pins.members = members;
  return pins;
}

ExplorePins faults_pin(std::string fault) {
  ExplorePins pins;
  pins.faults = {std::move(fault)};
  return pins;
}

rc::Gen<ExplorePins> pins_gen() {
  return rc::gen::exec([] {
    ExplorePins pins;
    if (*rc::gen::arbitrary<bool>()) {
      std::vector<std::string> names;
      for (const FaultKindRow& row : fault_kinds()) names.emplace_back(row.name);
      pins.faults = *rc::gen::unique<std::vector<std::string>>(rc::gen::elementOf(names));
    }
    if (*rc::gen::arbitrary<bool>()) pins.members = *rc::gen::element(1, 3, 5);
    if (*rc::gen::arbitrary<bool>()) pins.write_concern_w = *rc::gen::element(0, 1);
    if (*rc::gen::arbitrary<bool>()) pins.honour_lost = *rc::gen::arbitrary<bool>();
    if (*rc::gen::arbitrary<bool>()) {
      pins.properties =
          *rc::gen::unique<std::vector<std::string>>(rc::gen::elementOf(all_properties()));
    }
    if (*rc::gen::arbitrary<bool>()) {
      pins.clients = *rc::gen::nonEmpty(rc::gen::unique<std::vector<std::string>>(
          rc::gen::element<std::string>("mongolock", "npm-distributed-locks-mongodb", "square")));
    }
    if (pins.clients == std::vector<std::string>{"mongolock"} && *rc::gen::arbitrary<bool>()) {
      pins.backoff = *rc::gen::element(Backoff::kRandom, Backoff::kAdaptive, Backoff::kNotify);
    }
    return pins;
  });
}

void expect_round_trip(const Scenario& s) {
  const std::string text = scenario_to_toml(s, "a comment\n\nover lines");
  Scenario back;
  try {
    back = parse_scenario(text, s.path);
  } catch (const ScenarioError& e) {
    RC_FAIL(std::string(e.what()) + "\n" + text);
  }
  RC_ASSERT(to_json(back) == to_json(s));
}

// Pins make_space accepts: a pinned property that applies to no workload of the pinned clients
// is refused (ExploreSpace.PinsThatCannotBeMetAreRefusedByName), so such draws are discarded.
ExploreSpace space_of(const ExplorePins& pins) {
  std::optional<ExploreSpace> space;
  try {
    space = everything(pins);
  } catch (const std::invalid_argument& e) {
    RC_DISCARD(e.what());
  }
  RC_ASSERT(space.has_value());
  return *space;
}

RC_GTEST_PROP(ExploreGenerators, GeneratedScenariosRoundTripThroughTheWriter, ()) {
  const ExplorePins pins = *pins_gen();
  const Scenario s = *scenario_gen(space_of(pins));
  expect_round_trip(s);
}

RC_GTEST_PROP(ExploreGenerators, GeneratedScenariosStayInsideTheSpaceAndThePins, ()) {
  const ExplorePins pins = *pins_gen();
  const ExploreSpace space = space_of(pins);
  const Scenario s = *scenario_gen(space);
  RC_ASSERT(std::count(space.clients.begin(), space.clients.end(), s.workload.client) == 1);
  if (pins.members) RC_ASSERT(s.cluster.members == *pins.members);
  if (pins.write_concern_w) RC_ASSERT(s.lock.write_concern_w == *pins.write_concern_w);
  if (pins.honour_lost) RC_ASSERT(s.workload.honour_lost == *pins.honour_lost);
  if (pins.backoff) RC_ASSERT(s.lock.backoff == *pins.backoff);
  // Judged on the pinned properties that apply to the case (never on none), or on every one
  // that applies when none is pinned.
  if (pins.properties.empty()) {
    RC_ASSERT(s.check.properties.empty());
  } else {
    RC_ASSERT(!s.check.properties.empty());
    const auto applying = properties_applying_to(to_string(s.workload.kind),
                                                 find_client(s.workload.client)->fencing_tokens);
    for (const std::string& p : s.check.properties) {
      RC_ASSERT(std::count(pins.properties.begin(), pins.properties.end(), p) == 1);
      RC_ASSERT(std::count(applying.begin(), applying.end(), p) == 1);
    }
  }
  RC_ASSERT(s.workload.workers >= 1 && s.workload.workers <= kExploreMaxWorkers);
  RC_ASSERT(static_cast<int>(s.nemesis.schedule.size()) <= kExploreMaxFaults);
  for (const FaultSpec& f : s.nemesis.schedule) {
    RC_ASSERT(std::count(space.faults.begin(), space.faults.end(), f.fault) == 1);
    RC_ASSERT(fault_row(f.fault).members_min <= s.cluster.members);
    RC_ASSERT(f.at_ms + f.duration_ms <= s.workload.duration_ms);
    RC_ASSERT(f.duration_ms >= kExploreMinFaultMs);
  }
  // The time after the last heal (the run's tail and the quiet phase) outlasts the liveness
  // bound the run will judge its last heal by (every clock fault before it widens it), so
  // recovery is judged; and no longer than that needs.
  int64_t last_heal_ms = 0;
  for (const FaultSpec& f : s.nemesis.schedule)
    last_heal_ms = std::max(last_heal_ms, f.at_ms + f.duration_ms);
  const int64_t after_heal_ms = s.workload.duration_ms + s.nemesis.quiet_ms - last_heal_ms;
  const CheckConfig config = check_config(s);
  int64_t moved_ms = 0;
  for (const FaultSpec& f : s.nemesis.schedule) {
    if (std::count(config.clock_fault_kinds.begin(), config.clock_fault_kinds.end(),
                   std::string(fault_row(f.fault).name)) == 0)
      continue;
    for (const char* key : {"offset_ms", "jump_ms", "clock_ms"})
      moved_ms += f.params.contains(key) ? std::abs(f.params[key].get<int64_t>()) : 0;
  }
  RC_ASSERT(after_heal_ms > config.liveness_bound_ns / 1'000'000 + moved_ms);
  RC_ASSERT(s.nemesis.quiet_ms == 0 || after_heal_ms == recovery_window_ms(s));
}

// The space this machine offers: what the generators draw from it passes the run's preflight.
RC_GTEST_PROP(ExploreGenerators, MachineBackendAcceptsEveryGeneratedScenario, ()) {
  static const ExploreSpace space =
      make_space({}, machine_fault_support(), machine_client_support());
  Scenario s = *scenario_gen(space);
  s = parse_scenario(scenario_to_toml(s), s.path);
  RunOptions options;
  const BackendChoice backend = choose_backend(options, s);
  Supervisor none;
  const auto db = make_db(options, s, backend, scenario_db_config(s), none);
  try {
    preflight(s, *db);
  } catch (const std::exception& e) {
    RC_FAIL(std::string("preflight refused: ") + e.what());
  }
  RC_ASSERT(client_unavailable(*find_client(s.workload.client), ClientEnvironment::current()) ==
            "");
}

// A client whose lease comes in whole seconds (npm) has its holds drawn over the lease it
// grants, up to twice it, so a hold outlasts the lease in some cases; every other client keeps
// the compressed holds (at most 150 ms).
TEST(ExploreGenerators, ACoarseLeaseClientsHoldsAreDrawnOverTheLeaseItGrants) {
  ExplorePins npm_pin;
  npm_pin.clients = {"npm-distributed-locks-mongodb"};
  ExplorePins mongolock_pin;
  mongolock_pin.clients = {"mongolock"};
  int past_the_lease = 0;
  for (uint64_t k = 0; k < 200; ++k) {
    const rc::Random random(rc::Random::Key{k, 4, 5, 6});
    const Scenario npm = scenario_gen(everything(npm_pin))(random, 50).value();
    const int64_t lease_ms = (npm.lock.expiry_ms + 999) / 1000 * 1000;
    EXPECT_LE(npm.workload.critical_section_ms, 2 * lease_ms);
    EXPECT_GE(npm.workload.duration_ms, kExploreMinRunMs + 2 * lease_ms);
    if (npm.workload.critical_section_ms > lease_ms) ++past_the_lease;
    const Scenario own = scenario_gen(everything(mongolock_pin))(random, 50).value();
    EXPECT_LE(own.workload.critical_section_ms, 150);
  }
  EXPECT_GT(past_the_lease, 50) << "about half of npm's holds should outlast its lease";
}

// Sizes grow with RapidCheck's size: the same random sources at size 0 and at size 100.
// A client.toml outside the source tree is written by its path (a repro must find it in a fresh
// process); the source tree's are written by name, as the table's clients are.
TEST(ExploreGenerators, ACaseNamesAManifestOutsideTheSourceTreeByItsPath) {
  TempDir dir;
  std::ofstream(dir.file("w.sh")) << "#!/bin/sh\nexit 0\n";
  std::ofstream(dir.file("client.toml"))
      << "name = \"generated-outside\"\nprogram = \"w.sh\"\nworkloads = [\"mutex\"]\n"
         "fencing_tokens = false\n";
  const std::string path = manifest_path_of(load_client_manifest(dir.file("client.toml")));
  ExplorePins outside;
  outside.clients = {"generated-outside"};
  const Scenario s = scenario_gen(everything(outside))(rc::Random(), 10).value();
  EXPECT_EQ(s.workload.client, "generated-outside");
  EXPECT_EQ(s.workload.client_manifest, path);
  ExplorePins lorehov;
  lorehov.clients = {"python-lorehov"};
  EXPECT_EQ(scenario_gen(everything(lorehov))(rc::Random(), 10).value().workload.client_manifest,
            "");
}

TEST(ExploreGenerators, CasesGrowWithTheSize) {
  const ExploreSpace space = everything(members_pin(3));
  int small_workers = 0, small_faults = 0, big_workers = 0, big_faults = 0;
  int64_t small_run = 0, big_run = 0;
  for (uint64_t k = 0; k < 200; ++k) {
    const rc::Random random(rc::Random::Key{k, 1, 2, 3});
    const Scenario small = scenario_gen(space)(random, 0).value();
    const Scenario big = scenario_gen(space)(random, 100).value();
    small_workers = std::max(small_workers, small.workload.workers);
    small_faults = std::max(small_faults, static_cast<int>(small.nemesis.schedule.size()));
    // A coarse-lease client's run is two granted leases longer at every size.
    const ClientSpec& client = *find_client(small.workload.client);
    const int64_t lease_extra_ms =
        client.lease_granularity_ms > 0 ? 2 * granted_lease_ms(client, small.lock.expiry_ms) : 0;
    small_run = std::max(small_run, small.workload.duration_ms - lease_extra_ms);
    big_workers = std::max(big_workers, big.workload.workers);
    big_faults = std::max(big_faults, static_cast<int>(big.nemesis.schedule.size()));
    big_run = std::max(big_run, big.workload.duration_ms);
  }
  EXPECT_LE(small_workers, 2);
  EXPECT_LE(small_faults, 1);
  EXPECT_EQ(small_run, kExploreMinRunMs);
  EXPECT_EQ(big_workers, kExploreMaxWorkers);
  EXPECT_EQ(big_faults, kExploreMaxFaults);
  EXPECT_GT(big_run, 4 * kExploreMinRunMs / 2);
}

// Every kind of the fault table is drawn somewhere (none is silently unreachable).
TEST(ExploreGenerators, EveryFaultKindOfTheTableIsDrawn) {
  const ExploreSpace space = everything(members_pin(5));
  std::set<FaultKind> seen;
  for (uint64_t k = 0; k < 2000 && seen.size() < fault_kinds().size(); ++k) {
    const Scenario s = scenario_gen(space)(rc::Random(rc::Random::Key{k, 7, 7, 7}), 100).value();
    for (const FaultSpec& f : s.nemesis.schedule) seen.insert(f.fault);
  }
  for (const FaultKindRow& row : fault_kinds()) {
    EXPECT_TRUE(seen.count(row.kind)) << row.name << " never drawn";
  }
}

// A pinned reply-delay is in every case that has faults, with its own delay (200 ms to a second
// past the lease), whether or not the case has a socket timeout: before, its delay_ms was drawn
// only over a socket timeout, and a case without one silently ran with no fault at all.
TEST(ExploreGenerators, PinnedReplyDelayIsAlwaysDrawnWithADelayTheClientStillHears) {
  const ExploreSpace space = everything(faults_pin("reply-delay"));
  int without_socket_timeout = 0;
  for (uint64_t k = 0; k < 300; ++k) {
    const Scenario s = scenario_gen(space)(rc::Random(rc::Random::Key{k, 3, 1, 4}), 100).value();
    ASSERT_FALSE(s.nemesis.schedule.empty()) << "case " << k << " lost its fault";
    if (s.lock.socket_timeout_ms == 0) ++without_socket_timeout;
    for (const FaultSpec& f : s.nemesis.schedule) {
      ASSERT_EQ(f.fault, FaultKind::kReplyDelay);
      const int64_t delay = f.params.at("delay_ms").get<int64_t>();
      EXPECT_GE(delay, 200);
      EXPECT_LE(delay, s.lock.expiry_ms + 1000);
    }
  }
  EXPECT_GT(without_socket_timeout, 0) << "no case without a socket timeout was drawn";
}

// A seed client is never given adaptive backoff, which distributedlock refuses (the run then
// ended in a harness error) and the others ignore; mongolock still gets both.
TEST(ExploreGenerators, OnlyMongolockIsDrawnAdaptiveBackoff) {
  const ExploreSpace space = everything(members_pin(3));
  std::set<std::string> adaptive_clients;
  for (uint64_t k = 0; k < 400; ++k) {
    const Scenario s = scenario_gen(space)(rc::Random(rc::Random::Key{k, 2, 7, 1}), 50).value();
    if (s.lock.backoff == Backoff::kAdaptive) adaptive_clients.insert(s.workload.client);
  }
  EXPECT_EQ(adaptive_clients, (std::set<std::string>{"mongolock"}));
}

TEST(ExploreGenerators, ScenarioLibraryRoundTripsThroughTheWriter) {
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(LOCKLAB_SOURCE_DIR "/scenarios")) {
    if (entry.path().extension() != ".toml") continue;
    ++files;
    const Scenario s = load_scenario(entry.path().string());
    const std::string text = scenario_to_toml(s);
    Scenario back;
    ASSERT_NO_THROW(back = parse_scenario(text, s.path)) << entry.path() << "\n" << text;
    EXPECT_EQ(to_json(back), to_json(s)) << entry.path() << "\n" << text;
  }
  EXPECT_GT(files, 20);
}

TEST(ExploreSpace, PinsThatCannotBeMetAreRefusedByName) {
  const auto all = [](FaultKind) { return std::string(); };
  const auto none = [](FaultKind) { return std::string("no partition hooks here"); };
  const auto clients = [](const std::string&) { return std::string(); };
  auto error_of = [&](ExplorePins pins, FaultSupport support) {
    try {
      make_space(pins, support, clients);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error_of(faults_pin("partition-halfs"), all)
                .rfind("--faults: unknown fault \"partition-halfs\"", 0),
            0u);
  EXPECT_EQ(error_of(faults_pin("partition-halves"), none),
            "--faults: partition-halves cannot run here: no partition hooks here");
  EXPECT_EQ(error_of(ExplorePins{{"nope"}, {}, {}, {}, {}, {}, {}}, all)
                .rfind("--client: unknown client \"nope\"", 0),
            0u);
  EXPECT_EQ(error_of(ExplorePins{{}, {}, 1, 3, {}, {}, {}}, all),
            "--write-concern: w must be \"majority\" or 1..1");
  // Unpinned, the clusters drawn are those a numbered w can be met on.
  EXPECT_EQ(make_space(ExplorePins{{}, {}, {}, 3, {}, {}, {}}, all, clients).members,
            (std::vector<int>{3, 5}));
  EXPECT_EQ(error_of(ExplorePins{{}, {}, {}, 7, {}, {}, {}}, all),
            "--write-concern 7: explore draws clusters of 5 members at most");
  // A pinned kind no drawn cluster can take would never be drawn (found nothing, tested nothing).
  ExplorePins ring_on_three = faults_pin("partition-ring");
  ring_on_three.members = 3;
  EXPECT_EQ(error_of(ring_on_three, all),
            "--faults: partition-ring needs at least 5 members, and the clusters drawn have 3 at "
            "most (--members 3)");
  ExplorePins halves_on_one;
  halves_on_one.faults = {"pause-worker", "partition-halves"};
  halves_on_one.members = 1;
  EXPECT_EQ(error_of(halves_on_one, all).rfind("--faults: partition-halves needs at least 3", 0),
            0u);
  EXPECT_EQ(error_of(faults_pin("partition-ring"), all), "") << "5 members can be drawn";
  EXPECT_TRUE(make_space({}, none, clients).faults.empty());
  ExplorePins notify_for_all;
  notify_for_all.backoff = Backoff::kNotify;
  EXPECT_EQ(error_of(notify_for_all, all)
                .rfind("--backoff notify is mongolock's: pin --client "
                       "mongolock",
                       0),
            0u);
  notify_for_all.clients = {"mongolock"};
  EXPECT_EQ(error_of(notify_for_all, all), "");
  ExplorePins unknown_property;
  unknown_property.properties = {"tokens.unique", "exclusion.strcit"};
  EXPECT_EQ(error_of(unknown_property, all)
                .rfind("--properties: unknown property "
                       "\"exclusion.strcit\" (known: tokens.unique, ",
                       0),
            0u);
  // The npm client issues no tokens and runs no fenced workload.
  ExplorePins inapplicable;
  inapplicable.clients = {"npm-distributed-locks-mongodb"};
  inapplicable.properties = {"counter.no-lost-updates", "exclusion.fenced"};
  EXPECT_EQ(error_of(inapplicable, all),
            "--properties: exclusion.fenced applies to no workload of the client(s) "
            "npm-distributed-locks-mongodb");
}

// A pin keeps its properties in report order whatever order they were typed in, and a case is
// judged only on those that apply to its workload: the counter property pins the counter
// workload when it is the only one pinned.
TEST(ExploreSpace, PinnedPropertiesDecideWhatACaseIsJudgedOnAndWhichWorkloadsAreDrawn) {
  ExplorePins pins;
  pins.properties = {"counter.no-lost-updates", "tokens.unique"};
  const ExploreSpace space = everything(pins);
  EXPECT_EQ(space.properties,
            (std::vector<std::string>{"tokens.unique", "counter.no-lost-updates"}));
  EXPECT_EQ(judged_properties(space, "mongolock", WorkloadKind::kMutex),
            (std::vector<std::string>{"tokens.unique"}));
  EXPECT_EQ(judged_properties(space, "mongolock", WorkloadKind::kCounter),
            (std::vector<std::string>{"tokens.unique", "counter.no-lost-updates"}));
  EXPECT_FALSE(judges_something(space, "npm-distributed-locks-mongodb", WorkloadKind::kMutex));
  EXPECT_TRUE(
      judges_something(everything(), "npm-distributed-locks-mongodb", WorkloadKind::kMutex));
  pins.properties = {"counter.no-lost-updates"};
  const ExploreSpace counter_only = everything(pins);
  for (int i = 0; i < 30; ++i) {
    const rc::Random random(rc::Random::Key{7, static_cast<uint64_t>(i), 0, 0});
    const Scenario s = scenario_gen(counter_only)(random, 50).value();
    EXPECT_EQ(s.workload.kind, WorkloadKind::kCounter) << s.workload.client;
    EXPECT_EQ(s.check.properties, pins.properties);
  }
}

}  // namespace
}  // namespace locklab
