// liveness.recovery: after every heal that leaves no fault active (and after the first acquire
// attempt when the run has no faults at all), if some worker is waiting, some worker acquires
// within CheckConfig::liveness_bound_ns.
//
// Waiting = an acquire invoke still pending at the heal, or invoked within the bound.
// A heal followed by a new fault before the bound elapses is not judged: the new fault may
// rightly block progress (the run's final quiet period is where liveness is always judged).
// A history that ends before the bound elapses gives unknown, never valid.
#include <algorithm>
#include <limits>

#include "checker_index.h"

namespace locklab {
namespace {

struct Attempt {
  int64_t invoke_ns;
  int64_t done_ns;  // max when it never completed
  size_t invoke;
};

// Reference points: heals that leave no fault window open or, in a run without faults, the
// first acquire invoke (workers start after the cluster is up, which may take a while).
std::vector<size_t> reference_points(const HistoryIndex& index) {
  if (index.windows.empty()) {
    for (const Operation& op : index.operations) {
      if (op.f == "acquire" && op.invoke != kNoEvent) return {op.invoke};
    }
    return {};
  }
  std::vector<size_t> heals;
  for (const FaultWindow& window : index.windows) {
    if (window.heal_event == kNoEvent) continue;
    heals.push_back(window.heal_event);
  }
  std::sort(heals.begin(), heals.end());
  std::vector<size_t> starts;
  for (const FaultWindow& window : index.windows) starts.push_back(window.start_event);
  std::sort(starts.begin(), starts.end());
  // Faults still open after heal h: starts at or before h minus heals at or before h.
  std::vector<size_t> points;
  for (size_t rank = 0; rank < heals.size(); ++rank) {
    size_t h = heals[rank];
    size_t started =
        static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), h) - starts.begin());
    if (started == rank + 1) points.push_back(h);
  }
  return points;
}

}  // namespace

PropertyResult check_liveness_recovery(const std::vector<Event>& history, const HistoryIndex& index,
                                       const CheckConfig& config) {
  PropertyResult result{std::string(kLivenessRecovery), Outcome::kValid, "", 0, {}};
  const int64_t bound = config.liveness_bound_ns;
  std::vector<Attempt> attempts;  // in invoke order
  std::vector<int64_t> granted_ns;
  for (const Operation& op : index.operations) {
    if (op.f != "acquire" || op.invoke == kNoEvent) continue;
    int64_t done = op.completion == kNoEvent ? std::numeric_limits<int64_t>::max()
                                             : history[op.completion].t_ns;
    attempts.push_back(Attempt{history[op.invoke].t_ns, done, op.invoke});
    if (op.completion != kNoEvent && history[op.completion].type == EventType::kOk)
      granted_ns.push_back(done);
  }
  std::sort(granted_ns.begin(), granted_ns.end());
  // latest_done[k]: the attempt with the latest completion among attempts[0..k].
  std::vector<size_t> latest_done(attempts.size());
  for (size_t k = 0; k < attempts.size(); ++k) {
    latest_done[k] = k;
    if (k > 0 && attempts[latest_done[k - 1]].done_ns >= attempts[k].done_ns)
      latest_done[k] = latest_done[k - 1];
  }
  std::vector<int64_t> fault_starts;
  for (const FaultWindow& window : index.windows) fault_starts.push_back(window.start_ns);
  std::sort(fault_starts.begin(), fault_starts.end());

  size_t judged = 0, interrupted = 0, unfinished = 0;
  for (size_t point : reference_points(index)) {
    const int64_t from = history[point].t_ns;
    const int64_t until = from + bound;
    // Waiting: invoked by `until` and not completed before `from`.
    auto invoked = std::upper_bound(attempts.begin(), attempts.end(), until,
                                    [](int64_t t, const Attempt& a) { return t < a.invoke_ns; });
    if (invoked == attempts.begin()) continue;
    const Attempt& waiter = attempts[latest_done[(invoked - attempts.begin()) - 1]];
    if (waiter.done_ns < from) continue;  // nobody waiting: nothing to judge
    auto grant = std::lower_bound(granted_ns.begin(), granted_ns.end(), from);
    if (grant != granted_ns.end() && *grant <= until) {
      ++judged;
      continue;
    }
    auto next_fault = std::upper_bound(fault_starts.begin(), fault_starts.end(), from);
    if (next_fault != fault_starts.end() && *next_fault <= until) {
      ++interrupted;
      continue;
    }
    if (index.last_ns < until) {
      ++unfinished;
      if (result.outcome == Outcome::kValid) result.outcome = Outcome::kUnknown;
      continue;
    }
    ++judged;
    const bool is_heal = history[point].f == "heal";
    add_violation(result, config,
                  "no worker acquired within " + ms_text(bound) + " after the " +
                      (is_heal ? "heal at " : "first attempt at ") +
                      ms_text(from - index.first_ns) + ", though " +
                      history[waiter.invoke].process + " was waiting",
                  "none", {point, waiter.invoke});
  }
  result.note = std::to_string(judged) + " recoveries judged, " + std::to_string(interrupted) +
                " interrupted by a new fault, " + std::to_string(unfinished) +
                " cut short by the end of the history";
  if (unfinished > 0 && result.outcome == Outcome::kUnknown)
    result.note += " (unknown: the history ends before the bound elapses)";
  return result;
}

}  // namespace locklab
