// The glue simulation (glue_model.h): a seeded search over fault schedules and thread
// interleavings of a model of the replication glue's threads. Against the glue at b9676d2
// (GlueVariant::kOld) it must find bug A (an acknowledged w:"majority" write lost through a
// deposed primary writing in the new term), bug B (a stale fetch batch breaking oplog order)
// and bug E (a primary in catch-up that never becomes writable) within its budget; against the
// fixed design (kFixed) it must find nothing.
//
// What the model leaves out (see glue_model.h): it runs a model of the threads, not the real
// server code; no documents (bugs C and D cannot show); TTL deletes and the linearizable no-op;
// torn journal records; indeterminate client writes; reconfig.
//
// Budgets: GLUE_SIM_SCHEDULES (default kDefaultSchedules) schedules for the kFixed search; the
// long-tier ctest sim.repl.glue_campaign sets it much higher. Each test prints the schedule
// count, the seed and the shrunk counterexample, so a run can be reproduced exactly.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "glue_search.h"

namespace mongosim::repl::glue {
namespace {

constexpr int kDefaultSchedules = 300;
constexpr int kOldBudget = 1000;  // how many schedules kOld may take to show each bug
constexpr uint64_t kFirstSeed = 1;
constexpr size_t kMaxTraceLinesShown = 40;

int schedules_from_env() {
  const char* v = std::getenv("GLUE_SIM_SCHEDULES");
  if (v == nullptr || *v == '\0') return kDefaultSchedules;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 1 || n > 1'000'000) {
    ADD_FAILURE() << "GLUE_SIM_SCHEDULES=" << v << " is not a count in [1, 1000000]";
    return kDefaultSchedules;
  }
  return static_cast<int>(n);
}

std::string report(const char* what, GlueVariant glue, const SearchResult& r) {
  std::string out = std::string(what) + ": " + (r.found ? "found" : "not found") + " after " +
                    std::to_string(r.schedules_run) + " schedules";
  if (!r.found) return out;
  std::vector<Fault> minimal = shrink(glue, r.seed, r.faults, r.finding.kind);
  out += " (seed " + std::to_string(r.seed) + ")\n  " + finding_name(r.finding.kind) +
         " at t=" + std::to_string(r.finding.at_ms) + "ms: " + r.finding.what + "\n  schedule (" +
         std::to_string(r.faults.size()) + " faults):\n" + describe(r.faults) +
         "  shrunk schedule (" + std::to_string(minimal.size()) + " faults):\n" + describe(minimal);
  RunResult again = run_schedule(glue, r.seed, minimal, /*trace=*/true);
  for (const Finding& f : again.findings) {
    if (f.kind == r.finding.kind) {
      out += "  shrunk run: " + f.what + "\n  shrunk run's events (acknowledgements left out):\n";
      break;
    }
  }
  size_t shown = 0;
  for (const std::string& line : again.trace) {
    if (line.find("acknowledges") != std::string::npos || ++shown > kMaxTraceLinesShown) continue;
    out += "    " + line + "\n";
  }
  return out;
}

void expect_old_glue_finds(FindingKind kind, const char* what) {
  SearchResult r = search(GlueVariant::kOld, kind, kOldBudget, kFirstSeed);
  std::cout << report(what, GlueVariant::kOld, r) << "\n";
  EXPECT_TRUE(r.found) << what << " not found in " << kOldBudget << " schedules";
}

TEST(GlueSimulation, OldGlueLosesAnAcknowledgedMajorityWrite) {
  expect_old_glue_finds(FindingKind::kLostMajorityWrite, "A (kOld)");
}

TEST(GlueSimulation, OldGlueAppendsAStaleFetchBatchOutOfOptimeOrder) {
  expect_old_glue_finds(FindingKind::kOplogOrder, "B (kOld)");
}

TEST(GlueSimulation, OldGlueLeavesAPrimaryInCatchUpUnwritable) {
  expect_old_glue_finds(FindingKind::kNoWritablePrimary, "E (kOld)");
}

bool has_rollback_loss(const RunResult& run) {
  for (const Finding& f : run.findings) {
    if (f.kind == FindingKind::kLostMajorityWrite &&
        f.what.find("rolled back") != std::string::npos)
      return true;
  }
  return false;
}

// Bug A's deposed-primary schedule, scripted (run_deposed_primary_schedule says each
// step): with the old glue the deposed primary appends in the new term, the new primary counts
// its durable optime and acknowledges writes only it has, and they are rolled back after it is
// killed; with the fixed glue the deposed primary's write is interrupted and nothing is lost.
TEST(GlueSimulation, DeposedPrimaryScheduleLosesAcknowledgedWritesOnlyWithTheOldGlue) {
  RunResult old_run = run_deposed_primary_schedule(GlueVariant::kOld, kFirstSeed);
  for (const std::string& line : old_run.trace) {
    if (line.find("acknowledges") == std::string::npos) std::cout << "  kOld " << line << "\n";
  }
  EXPECT_GT(old_run.counters.stale_term_appends, 0);
  EXPECT_TRUE(has_rollback_loss(old_run)) << old_run.findings.size() << " findings";

  RunResult fixed_run = run_deposed_primary_schedule(GlueVariant::kFixed, kFirstSeed);
  for (const Finding& f : fixed_run.findings)
    ADD_FAILURE() << finding_name(f.kind) << ": " << f.what;
  EXPECT_EQ(fixed_run.counters.stale_term_appends, 0);
  EXPECT_GT(fixed_run.counters.interrupted_writes, 0);
  EXPECT_GT(fixed_run.counters.acked_writes, 0);
  EXPECT_GT(fixed_run.counters.rollbacks, 0);
}

// Each part of the fixed design guards something: leaving it out of kFixed brings its bug back
// within the same budget as kOld. The two batch checks (re-validation, full-optime "already
// applied") each stop bug B alone, so only leaving out both brings it back.
TEST(GlueSimulation, EachPartOfTheFixedGlueIsNeeded) {
  struct Case {
    uint32_t left_out;
    FindingKind expected;
    const char* what;
  };
  const Case cases[] = {
      {kFixWriteUnderLock, FindingKind::kLostMajorityWrite, "kFixed without the write lock"},
      {kFixRevalidateBatch | kFixFullOptimeCheck, FindingKind::kOplogOrder,
       "kFixed without either batch check"},
      {kFixCatchUpFetch, FindingKind::kNoWritablePrimary, "kFixed without catch-up fetching"},
  };
  for (const Case& c : cases) {
    SearchResult r = search(GlueVariant::kFixed, c.expected, kOldBudget, kFirstSeed, c.left_out);
    std::cout << c.what << ": " << (r.found ? "found" : "not found") << " after " << r.schedules_run
              << " schedules (seed " << r.seed << ")\n";
    EXPECT_TRUE(r.found) << c.what;
  }
}

// The fixed design must show none of the three, and the search must not be vacuous: the
// schedules acknowledge writes, roll back, crash, and make the fix's mechanisms act.
TEST(GlueSimulation, FixedGlueFindsNoCounterexample) {
  int n = schedules_from_env();
  SearchResult r = search(GlueVariant::kFixed, std::nullopt, n, kFirstSeed);
  std::cout << report("kFixed", GlueVariant::kFixed, r) << "\n";
  const GlueCounters& t = r.totals;
  std::cout << "  totals: acked=" << t.acked_writes << " rollbacks=" << t.rollbacks
            << " crashes=" << t.crashes << " elections=" << t.elections_won
            << " interrupted_writes=" << t.interrupted_writes
            << " dropped_batches=" << t.dropped_batches << "\n";
  EXPECT_FALSE(r.found) << "seed " << r.seed << ": " << finding_name(r.finding.kind) << ": "
                        << r.finding.what << "\n"
                        << describe(r.faults);
  EXPECT_EQ(r.schedules_run, n);
  EXPECT_GT(t.acked_writes, 0);
  EXPECT_GT(t.rollbacks, 0);
  EXPECT_GT(t.crashes, 0);
  EXPECT_GT(t.interrupted_writes, 0);
  EXPECT_GT(t.dropped_batches, 0);
  EXPECT_EQ(t.stale_term_appends, 0);
}

}  // namespace
}  // namespace mongosim::repl::glue
