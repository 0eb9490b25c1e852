#include "explore/shrink.h"

#include <algorithm>
#include <cassert>

#include "checker/clock.h"
#include "explore/generators.h"
#include "explore/scenario_writer.h"

namespace locklab {
namespace {

// Worker and member targets beyond the new counts become "random".
void retarget(Scenario& s) {
  for (FaultSpec& f : s.nemesis.schedule) {
    if (target_error(f.fault, f.target, s.cluster.members, s.workload.workers)) f.target = "random";
  }
}

// Keeps `c` when it is valid (through the writer and the parser) and smaller than `s`.
void offer(std::vector<Scenario>& out, const Scenario& s, Scenario c) {
  retarget(c);
  // A cut fault or a shorter run moves the time after the last heal: the quiet phase follows,
  // as the generator derived it.
  c.nemesis.quiet_ms = quiet_ms_for(c);
  if (!(size_of(c) < size_of(s))) return;
  try {
    Scenario parsed = parse_scenario(scenario_to_toml(c), c.path);
    parsed.path = s.path;
    out.push_back(std::move(parsed));
  } catch (const ScenarioError&) {
    // not a valid scenario (e.g. a fault needing more members): not a candidate
  }
}

void fault_candidates(std::vector<Scenario>& out, const Scenario& s) {
  for (size_t i = 0; i < s.nemesis.schedule.size(); ++i) {
    Scenario c = s;
    c.nemesis.schedule.erase(c.nemesis.schedule.begin() + static_cast<std::ptrdiff_t>(i));
    offer(out, s, std::move(c));
  }
}

void window_candidates(std::vector<Scenario>& out, const Scenario& s) {
  for (size_t i = 0; i < s.nemesis.schedule.size(); ++i) {
    const FaultSpec& f = s.nemesis.schedule[i];
    if (f.duration_ms > kExploreMinFaultMs) {
      Scenario c = s;
      c.nemesis.schedule[i].duration_ms = std::max(kExploreMinFaultMs, f.duration_ms / 2);
      offer(out, s, std::move(c));
    }
  }
}

}  // namespace

ScenarioSize size_of(const Scenario& s) {
  ScenarioSize z;
  z.faults = static_cast<int>(s.nemesis.schedule.size());
  z.workers = s.workload.workers;
  z.members = s.cluster.members;
  z.locks = s.workload.locks;
  for (const FaultSpec& f : s.nemesis.schedule) {
    z.fault_ms += f.duration_ms;
    z.at_ms += f.at_ms;
  }
  z.run_ms = s.workload.duration_ms;
  return z;
}

std::string describe(const ScenarioSize& z) {
  return std::to_string(z.faults) + " faults, " + std::to_string(z.workers) + " workers, " +
         std::to_string(z.members) + " members, " + std::to_string(z.locks) + " locks, " +
         std::to_string(z.fault_ms) + " ms of faults, " + std::to_string(z.run_ms) + " ms run";
}

std::vector<Scenario> shrink_candidates(const Scenario& s) {
  std::vector<Scenario> out;
  fault_candidates(out, s);
  if (s.workload.workers > 1) {
    Scenario c = s;
    --c.workload.workers;
    offer(out, s, std::move(c));
  }
  if (s.cluster.members > 1) {
    Scenario c = s;
    c.cluster.members = std::max(1, s.cluster.members - 2);
    if (c.lock.write_concern_w > c.cluster.members) c.lock.write_concern_w = c.cluster.members;
    offer(out, s, std::move(c));
  }
  if (s.workload.locks > 1) {
    Scenario c = s;
    --c.workload.locks;
    offer(out, s, std::move(c));
  }
  window_candidates(out, s);
  if (s.workload.duration_ms > kExploreMinRunMs) {
    int64_t needed = kExploreMinRunMs;
    for (const FaultSpec& f : s.nemesis.schedule)
      needed = std::max(needed, f.at_ms + f.duration_ms);
    Scenario c = s;
    c.workload.duration_ms = std::max(needed, s.workload.duration_ms / 2);
    offer(out, s, std::move(c));
  }
  return out;
}

namespace {

// Runs the candidate up to K times; the failing outcome, or nullopt when none of them failed.
std::optional<CaseOutcome> fails(const Scenario& c, uint64_t seed, const std::string& key,
                                 const CaseRunner& runner, const ShrinkOptions& o, int step,
                                 int index, ShrinkResult& r) {
  for (int attempt = 0; attempt < o.reruns; ++attempt) {
    if (o.stop && o.stop()) return std::nullopt;
    const std::string dir = o.run_dir ? o.run_dir(step, index, attempt) : "";
    CaseOutcome outcome = runner(c, seed, dir);
    ++r.runs;
    if (matches(outcome, key)) return outcome;
  }
  return std::nullopt;
}

void confirm(ShrinkResult& r, uint64_t seed, const std::string& key, const CaseRunner& runner,
             const ShrinkOptions& o) {
  for (int i = 0; i < o.confirm_runs; ++i) {
    if (o.stop && o.stop()) return;
    const std::string dir = o.run_dir ? o.run_dir(-1, 0, i) : "";
    CaseOutcome outcome = runner(r.minimal, seed, dir);
    ++r.confirm_runs;
    if (matches(outcome, key)) {
      ++r.confirm_failed;
      r.last_confirm_failure = outcome;
    }
  }
}

}  // namespace

ShrinkResult shrink(const Scenario& failing, const CaseOutcome& original, uint64_t seed,
                    const CaseRunner& runner, const ShrinkOptions& o,
                    const std::string& given_key) {
  assert(o.reruns >= 1);
  const std::string key = given_key.empty() ? finding_key(original) : given_key;
  assert(matches(original, key));
  const int64_t deadline = o.budget_ms > 0 ? steady_now_ms() + o.budget_ms : INT64_MAX;
  ShrinkResult r;
  r.minimal = failing;
  r.failing = original;
  bool progressed = true;
  while (progressed) {
    progressed = false;
    const std::vector<Scenario> candidates = shrink_candidates(r.minimal);
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (r.steps >= o.max_steps || steady_now_ms() >= deadline || (o.stop && o.stop())) {
        r.complete = false;
        break;
      }
      ++r.candidates;
      auto outcome = fails(candidates[i], seed, key, runner, o, r.steps, static_cast<int>(i), r);
      if (outcome) {
        r.minimal = candidates[i];
        r.failing = *outcome;
        ++r.steps;
        progressed = true;
        break;
      }
    }
    if (!r.complete) break;
  }
  confirm(r, seed, key, runner, o);
  return r;
}

}  // namespace locklab
