// `locklab run SCENARIO.toml`: one experiment from start to verdict.
//
// Phases: load and validate the scenario; sweep stale runs, start the janitor; on the netns
// backend, enter the run's own namespaces (run/sandbox.h: no root needed; everything below happens
// in them until the check); build the network (netns) and start the cluster; start the workers; the
// fault phase (workload.duration_ms, or until every worker finished its operations) with the
// nemesis opening and healing windows; heal everything; the quiet phase (nemesis.quiet_ms, no
// faults, liveness is judged here); stop the workers; final reads; tear down; check the history and
// write the reports.
//
// Output directory (--out, default results/runs/<UTC time>-<scenario>/): scenario.toml, seed,
// versions.json, plan.json (the fault windows), history.jsonl, members/m<i>.log,
// workers/w<i>.log, and what the checker writes (verdict.json, summary.md, timeline.html).
//
// Exit code: 0 valid, 1 a property violated, 2 unknown or harness error. With
// `expectation_gate`, instead: 0 when the outcome matches the scenario's `expect` (and its
// named properties), 1 when it does not, 2 on harness error. Either way 77 (kExitNotRun) when
// the scenario's client cannot run here, before anything starts.
// Thread rules: the process's main thread; at most one run per process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checker/checker.h"
#include "run/scenario.h"

namespace locklab {

struct RunOptions {
  std::string scenario_path;
  std::vector<std::string> overrides;  // --set TABLE.KEY=VALUE, applied to the scenario file
  std::string backend;         // "" = the scenario's, else netns where possible, else loopback
  std::string member_program;  // "" = mongosim next to the locklab binary
  // Non-empty: run against this already-initiated replica set instead of starting members
  // (loopback backend; only faults that need no member process or network: worker faults,
  // step-down, freeze). Its database "locklab" is dropped at the start.
  std::string external_uri;
  // --cluster docker: the members' image; "" = locklab/mongosim built from the local programs.
  std::string image;
  // --cluster docker: what runs the members, "mongosim" or "mongod" (required with --image: an
  // image's name says nothing reliable about its program). "mongod" without --image: the image
  // built here, mongosim run under the name mongod with the host's libfaketime inside.
  std::string image_kind;
  // --cluster docker --image I --image-kind mongod: libfaketime's library inside I (member
  // clock faults through it); "" = none, and member clock faults are refused.
  std::string image_faketime;
  std::optional<uint64_t> seed;
  std::string out_dir;     // "" = results/runs/<UTC time>-<scenario>
  std::string junit_path;  // "" = none
  bool expectation_gate = false;
};

// The configuration a scenario's history is judged with: its properties, and the liveness bound
// it sets or the derived one (the lease the client grants + the election timeout + the longest
// backoff + the critical section), and the fault kinds that move member clocks (the checkers
// widen the liveness bound and the lease skew where they judge by the moves of those begun by
// then: CheckConfig::clock_fault_kinds).
CheckConfig check_config(const Scenario& s);
// The liveness bound at a heal after every fault of s: check_config's plus the schedule's
// member clock movement (what a quiet phase must outlast).
int64_t widest_liveness_bound_ns(const Scenario& s);

// run_scenario's exit code when the scenario was not run because what it needs is missing here
// (its client is unavailable); the automake/ctest convention for "skipped".
inline constexpr int kExitNotRun = 77;

// A run that failed because a member process ended on its own (a signal, an assertion, an exit
// nobody asked for) leaves this file in its output directory: one line, "member m<i> ended
// (<how>)". It tells a member's death (a finding about the member program) from other harness
// errors, for callers that judge many runs (locklab explore).
inline constexpr const char* kMemberDiedFile = "member-died.txt";

int run_scenario(const RunOptions& options);

// Directory holding the running locklab binary (where mongosim and locklab-worker are).
std::string binary_dir();

}  // namespace locklab
