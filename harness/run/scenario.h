// A scenario: one experiment, read from a TOML file (scenarios/README.md documents every key).
// It fixes the cluster, the lock options the workers use, the workload, the fault schedule (fixed
// windows or a seeded random mix), the properties to check and the outcome the run must give.
//
// Invariants after a successful load (checked by load_scenario, never re-checked by users):
// every number is inside its documented range, every fault names a known fault kind with only
// the parameters that kind accepts, every property name is known, and exactly one of
// workload.operations / workload.duration_ms is set. Plain data: copy freely, any thread.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "nemesis/fault_kind.h"

namespace locklab {

// Thrown for an unreadable file, a TOML syntax error, an unknown key or a bad value. The message
// reads "FILE:LINE: KEY: what was wrong".
class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// mongolock's wait strategies (mongolock::Backoff); the seed clients wait their own way and
// take only random and adaptive.
enum class Backoff { kRandom, kAdaptive, kDecorrelated, kNotify };
inline constexpr std::string_view kBackoffNames[] = {"random", "adaptive", "decorrelated",
                                                     "notify"};
// The strategy named `name` (one of kBackoffNames); nullopt for any other text.
std::optional<Backoff> backoff_named(std::string_view name);
enum class WorkloadKind { kMutex, kFenced, kCounter, kRw };
enum class Expect { kValid, kInvalid };
enum class Tier { kQuick, kLong };

std::string_view to_string(Backoff backoff);
std::string_view to_string(WorkloadKind kind);
std::string_view to_string(Expect expect);
std::string_view to_string(Tier tier);

struct ClusterSpec {
  int members = 1;
  std::string backend;  // "" = choose (netns when root), "netns" or "loopback"
  int64_t election_timeout_ms = 2000;
};

struct LockSpec {
  int64_t expiry_ms = 2000;
  int64_t extension_cadence_ms = 0;  // 0: the library's default (a third of the expiry)
  Backoff backoff = Backoff::kRandom;
  int64_t busy_wait_min_ms = 10;
  int64_t busy_wait_max_ms = 250;
  int write_concern_w = 0;  // 0 = "majority", otherwise the number of members
  bool fencing = true;      // false: the fenced resource accepts any token (known-unsafe)
  int32_t max_shared = 0;   // rw workload: readers allowed at once per lock (0 = unlimited)
  // The socketTimeoutMS the workers' lock library uses (0: the library's own choice); a
  // command-delay fault delays commands past it.
  int64_t socket_timeout_ms = 0;
  // The lock library's TTL reap delay (Options::reap_after_s); -1: the library's default.
  int64_t reap_after_s = -1;
};

struct WorkloadSpec {
  WorkloadKind kind = WorkloadKind::kMutex;
  // The lock under test: a row of the client table (client/clients.h) that can run `kind`.
  std::string client = "mongolock";
  // When `client` was given as a path to a client.toml: its canonical path; the client is
  // registered under the manifest's name, which `client` then holds.
  std::string client_manifest;
  int client_line = 0;  // where `client` was set (0: the default), for refusals at run time
  int workers = 3;
  int locks = 1;
  int64_t critical_section_ms = 50;
  // false: workers ignore the lost notification and finish their critical section anyway —
  // the known-unsafe pattern must-fail scenarios demonstrate.
  bool honour_lost = true;
  int read_percent = 80;    // rw workload: the share of operations that take a shared hold
  int64_t operations = 0;   // per worker; 0 when the run is timed by duration_ms
  int64_t duration_ms = 0;  // 0 when the run is counted by operations
};

// One fault window. `target` is a worker ("w1"...), a member ("m0"...), "random" (chosen with
// the run's seed), "holder" (a worker holding a lock when the fault starts, else random), or for
// member faults "primary" / "secondaries" (whoever they are when the window opens).
struct FaultSpec {
  int64_t at_ms = 0;
  FaultKind fault = FaultKind::kPauseWorker;
  std::string target;
  int64_t duration_ms = 0;
  nlohmann::json params = nlohmann::json::object();  // fault-specific keys, validated
  int line = 0;                                      // where it was declared
};

struct RandomMixSpec {
  // fault kind -> relative rate, all > 0; in name order (the order the seed draws in)
  std::map<FaultKind, double, FaultKindByName> weights;
  std::string target = "random";
  int64_t start_ms = 1000;
  int64_t end_ms = 0;  // 0: until the workload's duration ends
  int64_t gap_min_ms = 500;
  int64_t gap_max_ms = 2000;
  int64_t duration_min_ms = 500;
  int64_t duration_max_ms = 3000;
};

struct NemesisSpec {
  std::vector<FaultSpec> schedule;
  std::optional<RandomMixSpec> random;
  int64_t quiet_ms = 4000;  // after the last heal: no faults, liveness is judged here
};

struct CheckSpec {
  std::vector<std::string> properties;  // empty: every property that applies to the workload
  int64_t liveness_bound_ms = 0;        // 0: derived (check_config: expiry + election timeout +
                                        // backoff max + critical section; each heal adds the
                                        // moves of member clock faults begun by then, to a set
                                        // bound too)
  int64_t lost_signal_bound_ms = 0;     // 0: derived by the checker
};

struct Scenario {
  std::string path;  // as given to load_scenario
  std::string name;  // file stem unless `name` is set
  std::string description;
  Expect expect = Expect::kValid;
  std::vector<std::string> expect_violated;  // with expect = invalid: these must be violated
  std::vector<std::string> expect_holding;   // these must hold either way
  Tier tier = Tier::kQuick;
  ClusterSpec cluster;
  LockSpec lock;
  WorkloadSpec workload;
  NemesisSpec nemesis;
  CheckSpec check;
};

// `overrides`: "table.key=value" assignments applied on top of the file (locklab run --set), the
// value read as a TOML value, or as a string when it is not one (lock.backoff=notify). An
// override that is malformed, names a table that is not one, or sets a key the scenario does
// not know fails like the file would, naming the --set.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
// The scenario file's text with `overrides` applied (TOML, comments dropped), for the run
// directory's scenario.toml; the file's own text when there are none.
std::string scenario_text(const std::string& path, const std::vector<std::string>& overrides);
// Parses TOML text; `path` names the source in error messages and sets the default name.
Scenario parse_scenario(std::string_view text, const std::string& path,
                        const std::vector<std::string>& overrides = {});

// The scenario as JSON (for verdicts and reports); every field, defaults filled in.
nlohmann::json to_json(const Scenario& scenario);

}  // namespace locklab
