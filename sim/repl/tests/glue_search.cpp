// Schedules, runs, search and shrinking for the glue model (see glue_search.h).
#include "glue_search.h"

#include <algorithm>

namespace mongosim::repl::glue {

namespace {

const char* kind_name(FaultKind kind) {
  static const char* names[] = {"isolate", "isolate-primary", "split",    "heal",
                                "pause",   "pause-primary",   "crash",    "crash-primary",
                                "stall",   "clock-offset",    "step-down"};
  return names[static_cast<int>(kind)];
}

const char* thread_name(ThreadKind thread) {
  static const char* names[] = {"writer", "ticker", "flusher", "fetcher"};
  return names[static_cast<int>(thread)];
}

// splitmix64, the schedule generator's own stream (the scheduler's is inside GlueSim).
struct Rng {
  uint64_t state;
  int64_t below(int64_t bound) {
    state += 0x9E3779B97F4A7C15ull;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<int64_t>(z % static_cast<uint64_t>(bound));
  }
  int64_t in(int64_t lo, int64_t hi) { return lo + below(hi - lo + 1); }
};

// The member a *Primary fault targets: the writable primary, else the fault's own member.
int current_primary(const GlueSim& sim, int fallback) {
  int p = sim.writable_primary();
  return p >= 0 ? p : fallback;
}

void apply(GlueSim& sim, const Fault& f) {
  switch (f.kind) {
    case FaultKind::kIsolate:
      sim.isolate(f.member);
      break;
    case FaultKind::kIsolatePrimary:
      sim.isolate(current_primary(sim, f.member));
      break;
    case FaultKind::kSplit:
      sim.split(f.mask);
      break;
    case FaultKind::kHeal:
      sim.heal();
      break;
    case FaultKind::kPause:
      sim.pause(f.member, f.duration_ms);
      break;
    case FaultKind::kPausePrimary:
      sim.pause(current_primary(sim, f.member), f.duration_ms);
      break;
    case FaultKind::kCrash:
      sim.crash(f.member, f.duration_ms);
      break;
    case FaultKind::kCrashPrimary:
      sim.crash(current_primary(sim, f.member), f.duration_ms);
      break;
    case FaultKind::kStall:
      sim.stall(f.member, f.thread, f.duration_ms);
      break;
    case FaultKind::kClockOffset:
      sim.set_clock_offset(f.member, f.offset_ms);
      break;
    case FaultKind::kStepDown:
      if (sim.writable_primary() >= 0) {
        sim.step_down(sim.writable_primary(), std::max<int64_t>(1, f.duration_ms / 1000));
      }
      break;
  }
}

}  // namespace

std::string describe(const Fault& f) {
  std::string out = "+" + std::to_string(f.wait_ms) + "ms " + kind_name(f.kind);
  std::string member = " m" + std::to_string(f.member);
  std::string or_member = " (the writable primary, else m" + std::to_string(f.member) + ")";
  std::string duration = " " + std::to_string(f.duration_ms) + "ms";
  switch (f.kind) {
    case FaultKind::kSplit:
      return out + " mask=" + std::to_string(f.mask);
    case FaultKind::kHeal:
      return out;
    case FaultKind::kStall:
      return out + member + " " + thread_name(f.thread) + duration;
    case FaultKind::kClockOffset:
      return out + member + " " + std::to_string(f.offset_ms) + "ms";
    case FaultKind::kIsolate:
      return out + member;
    case FaultKind::kIsolatePrimary:
      return out + or_member;
    case FaultKind::kPausePrimary:
    case FaultKind::kCrashPrimary:
      return out + or_member + duration;
    case FaultKind::kStepDown:
      return out + " (the writable primary, if any) for " +
             std::to_string(std::max<int64_t>(1, f.duration_ms / 1000)) + "s";
    case FaultKind::kPause:
    case FaultKind::kCrash:
      return out + member + duration;
  }
  return out;
}

std::string describe(const std::vector<Fault>& faults) {
  std::string out;
  for (const Fault& f : faults) out += "  " + describe(f) + "\n";
  return out;
}

std::vector<Fault> random_schedule(uint64_t seed, int members) {
  Rng rng{seed * 0x2545F4914F6CDD1Dull + 17};
  static const FaultKind kinds[] = {
      FaultKind::kIsolate,      FaultKind::kIsolatePrimary, FaultKind::kSplit,
      FaultKind::kHeal,         FaultKind::kPause,          FaultKind::kPausePrimary,
      FaultKind::kPausePrimary, FaultKind::kCrash,          FaultKind::kCrashPrimary,
      FaultKind::kCrashPrimary, FaultKind::kStall,          FaultKind::kStall,
      FaultKind::kClockOffset,  FaultKind::kClockOffset,    FaultKind::kStepDown};
  constexpr int64_t kKinds = sizeof(kinds) / sizeof(kinds[0]);
  std::vector<Fault> faults(static_cast<size_t>(rng.in(1, kMaxFaultsPerSchedule)));
  for (Fault& f : faults) {
    f.kind = kinds[rng.below(kKinds)];
    f.wait_ms = rng.in(0, 8000);
    f.member = static_cast<int>(rng.below(members));
    f.mask = static_cast<uint32_t>(rng.in(1, (1 << members) - 2));
    f.duration_ms = rng.in(0, 12'000);
    f.thread = static_cast<ThreadKind>(rng.below(kThreadKinds));
    f.offset_ms = rng.in(-2500, 2500);
    if (f.kind == FaultKind::kStall) f.duration_ms = rng.in(50, 4000);
  }
  return faults;
}

GlueOptions options_for(GlueVariant glue, uint64_t seed) {
  GlueOptions options;
  options.glue = glue;
  options.seed = seed;
  return options;
}

// After the faults end: three election rounds (timeout + 15% jitter), heartbeats to spread
// the term, and slack for catch-up and the no-op.
int64_t liveness_bound_ms(const GlueOptions& options) {
  return 3 * (options.election_timeout_ms * 115 / 100) + 4 * options.heartbeat_interval_ms + 5000;
}

RunResult run_schedule(GlueVariant glue, uint64_t seed, const std::vector<Fault>& faults,
                       bool trace, uint32_t left_out_fixes) {
  GlueOptions options = options_for(glue, seed);
  options.trace = trace;
  options.left_out_fixes = left_out_fixes;
  GlueSim sim(options);
  sim.run_for(kFirstElectionMs);
  for (const Fault& f : faults) {
    sim.run_for(f.wait_ms);
    apply(sim, f);
  }
  sim.heal();
  int64_t quiet_in_ms = std::max<int64_t>(0, sim.faults_end_ms() - sim.elapsed_ms());
  sim.run_for(quiet_in_ms + liveness_bound_ms(options));
  if (int primary = sim.writable_primary(); primary < 0) {
    sim.add_finding(
        FindingKind::kNoWritablePrimary,
        std::string(primary == -1 ? "no writable primary " : "several writable primaries ") +
            std::to_string(liveness_bound_ms(options)) +
            "ms after the faults ended: " + sim.describe_states());
  }
  sim.stop_writes(true);
  sim.run_for(kSettleMs);
  sim.check_acknowledged_writes_survive();
  return RunResult{sim.findings(), sim.counters(), sim.trace()};
}

// A (primary, term T) is stopped mid-write: its writer passed the check in term T; its clock
// runs ahead (a clock offset, as the harness's clock fault makes), so what it appends later is
// newer than anything B writes meanwhile. B wins term T+1 with C's vote; C's fetcher is then
// descheduled, so C lags and B's w:"majority" writes wait. A resumes with its writer and its
// fetcher descheduled for a moment, so the heartbeat thread first adopts T+1 from B's queued
// heartbeat; then the writer appends in T+1. A's flusher makes those entries durable and its
// heartbeat replies report them; B counts that durable optime and acknowledges. B is killed,
// A wins T+2 with C's vote, and B, restarted, must roll back to A's branch.
RunResult run_deposed_primary_schedule(GlueVariant glue, uint64_t seed) {
  GlueOptions options = options_for(glue, seed);
  options.trace = true;
  GlueSim sim(options);
  auto result = [&] { return RunResult{sim.findings(), sim.counters(), sim.trace()}; };
  sim.run_for(kFirstElectionMs);
  int a = sim.writable_primary();
  if (a < 0) return result();
  for (int i = 0; i < 1000 && !sim.writer_mid_write(a); ++i) sim.run_for(options.slot_ms);
  const int64_t pause_ms = 3 * options.election_timeout_ms;
  const int64_t report_ms = 3 * options.heartbeat_interval_ms;  // A's durable reaches B
  sim.set_clock_offset(a, report_ms + 2000);  // ahead of all B writes before it is killed
  sim.pause(a, pause_ms);
  sim.stall(a, ThreadKind::kWriter, pause_ms + 100);
  sim.stall(a, ThreadKind::kFetcher, pause_ms + report_ms);
  int64_t waited_ms = 0;
  int b = -1;  // A, stopped, still believes it is the writable primary of term T
  for (; b < 0 && waited_ms < pause_ms; waited_ms += options.slot_ms) {
    sim.run_for(options.slot_ms);
    for (int i = 0; i < sim.member_count(); ++i) {
      if (i != a && sim.is_writable_primary(i)) b = i;
    }
  }
  if (b < 0) return result();
  sim.stall(3 - a - b, ThreadKind::kFetcher, pause_ms - waited_ms + report_ms);
  sim.run_for(pause_ms - waited_ms + report_ms);
  sim.crash(b, 4 * options.election_timeout_ms);
  sim.run_for(4 * options.election_timeout_ms + liveness_bound_ms(options));
  sim.stop_writes(true);
  sim.run_for(kSettleMs);
  sim.check_acknowledged_writes_survive();
  return result();
}

namespace {

std::optional<Finding> first_of(const RunResult& run, std::optional<FindingKind> wanted) {
  for (const Finding& f : run.findings) {
    if (!wanted || f.kind == *wanted) return f;
  }
  return std::nullopt;
}

void add(GlueCounters& total, const GlueCounters& c) {
  total.acked_writes += c.acked_writes;
  total.stale_term_appends += c.stale_term_appends;
  total.interrupted_writes += c.interrupted_writes;
  total.dropped_batches += c.dropped_batches;
  total.rollbacks += c.rollbacks;
  total.crashes += c.crashes;
  total.elections_won += c.elections_won;
}

}  // namespace

SearchResult search(GlueVariant glue, std::optional<FindingKind> wanted, int budget,
                    uint64_t first_seed, uint32_t left_out_fixes) {
  SearchResult result;
  for (int i = 0; i < budget; ++i) {
    uint64_t seed = first_seed + static_cast<uint64_t>(i);
    std::vector<Fault> faults = random_schedule(seed, options_for(glue, seed).members);
    RunResult run = run_schedule(glue, seed, faults, false, left_out_fixes);
    ++result.schedules_run;
    add(result.totals, run.counters);
    if (auto f = first_of(run, wanted)) {
      result.found = true;
      result.seed = seed;
      result.faults = std::move(faults);
      result.finding = *f;
      return result;
    }
  }
  return result;
}

std::vector<Fault> shrink(GlueVariant glue, uint64_t seed, std::vector<Fault> faults,
                          FindingKind kind) {
  auto still_fails = [&](const std::vector<Fault>& candidate) {
    return first_of(run_schedule(glue, seed, candidate), kind).has_value();
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t i = 0; i < faults.size(); ++i) {
      std::vector<Fault> candidate = faults;
      candidate.erase(candidate.begin() + static_cast<std::ptrdiff_t>(i));
      if (still_fails(candidate)) {
        faults = std::move(candidate);
        progress = true;
        break;
      }
    }
  }
  for (Fault& f : faults) {  // then round each wait down to whole seconds where that still fails
    int64_t original = f.wait_ms;
    f.wait_ms = original / 1000 * 1000;
    if (f.wait_ms != original && !still_fails(faults)) f.wait_ms = original;
  }
  return faults;
}

}  // namespace mongosim::repl::glue
