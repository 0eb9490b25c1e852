// liveness.recovery (docs/properties.md): after every heal that leaves no fault active (and
// after the first acquire attempt when the run has no faults at all), for each lock on which
// some worker is waiting, some worker acquires that lock within CheckConfig::liveness_bound_ns.
//
// Judged lock by lock: a grant of one lock says nothing about another.
// Waiting = an acquire invoke of the lock still pending at the heal, or invoked within the
// bound. A recovery is a grant within the bound whose acquire was invoked at or after the heal,
// or, invoked before it, whose hold the server later confirmed (its release completed ok): a
// reply to a request sent before the heal and lost at once proves nothing.
// The bound at a reference point is CheckConfig::liveness_bound_ns plus the clock movement of
// every fault of CheckConfig::clock_fault_kinds begun by then (ClockMoves): a hold
// granted on a member clock d ahead outlives its lease by up to d, so a recovery judged before
// the first clock fault gets the plain bound.
// Not judged: a heal followed by a new fault before the bound elapses (the new fault may rightly
// block progress), and a bound cut short by the harness's `stop` or the history's end (the
// workers were stopped, not starved): those give unknown when nothing else fails. Zero judged
// recoveries is unknown, never valid.
#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

#include "checker/index.h"

namespace locklab {
namespace {

struct Attempt {
  int64_t invoke_ns;
  int64_t done_ns;  // max when it never completed
  size_t invoke;
};

struct Grant {
  int64_t ok_ns;
  int64_t invoke_ns;  // min when the grant has no invoke
  bool confirmed;     // the hold's release completed ok
};

struct LockAttempts {
  std::vector<Attempt> attempts;    // in invoke order
  std::vector<size_t> latest_done;  // latest_done[k]: latest completion among attempts[0..k]
  std::vector<Grant> grants;        // in ok order
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

std::map<std::string, LockAttempts> attempts_per_lock(const std::vector<Event>& history,
                                                      const HistoryIndex& index) {
  std::unordered_map<size_t, const Hold*> hold_of;  // acquire ok -> hold
  for (const Hold& hold : index.holds) hold_of[hold.acquire_ok] = &hold;
  std::map<std::string, LockAttempts> locks;
  for (const Operation& op : index.operations) {
    if (op.f != "acquire" || op.process == "nemesis") continue;
    LockAttempts& lock = locks[op.lock];
    // An attempt never completed ends with its worker's death: a dead worker waits for nothing.
    int64_t done = op.completion != kNoEvent ? history[op.completion].t_ns
                   : op.invoke != kNoEvent ? index.death_after(op.process, history[op.invoke].t_ns)
                                           : std::numeric_limits<int64_t>::max();
    if (op.invoke != kNoEvent) lock.attempts.push_back({history[op.invoke].t_ns, done, op.invoke});
    if (op.completion == kNoEvent || history[op.completion].type != EventType::kOk) continue;
    auto hold = hold_of.find(op.completion);
    bool confirmed = hold != hold_of.end() && hold->second->release_ok_ns.has_value();
    int64_t invoked =
        op.invoke == kNoEvent ? std::numeric_limits<int64_t>::min() : history[op.invoke].t_ns;
    lock.grants.push_back(Grant{done, invoked, confirmed});
  }
  for (auto& [name, lock] : locks) {
    std::sort(lock.grants.begin(), lock.grants.end(),
              [](const Grant& a, const Grant& b) { return a.ok_ns < b.ok_ns; });
    lock.latest_done.resize(lock.attempts.size());
    for (size_t k = 0; k < lock.attempts.size(); ++k) {
      lock.latest_done[k] = k;
      if (k > 0 && lock.attempts[lock.latest_done[k - 1]].done_ns >= lock.attempts[k].done_ns)
        lock.latest_done[k] = lock.latest_done[k - 1];
    }
  }
  return locks;
}

// A waiter on the lock: invoked by `until` and not completed before `from`.
const Attempt* waiter(const LockAttempts& lock, int64_t from, int64_t until) {
  auto invoked = std::upper_bound(lock.attempts.begin(), lock.attempts.end(), until,
                                  [](int64_t t, const Attempt& a) { return t < a.invoke_ns; });
  if (invoked == lock.attempts.begin()) return nullptr;
  const Attempt& last = lock.attempts[lock.latest_done[(invoked - lock.attempts.begin()) - 1]];
  return last.done_ns < from ? nullptr : &last;
}

bool recovered(const LockAttempts& lock, int64_t from, int64_t until) {
  auto grant = std::lower_bound(lock.grants.begin(), lock.grants.end(), from,
                                [](const Grant& g, int64_t t) { return g.ok_ns < t; });
  for (; grant != lock.grants.end() && grant->ok_ns <= until; ++grant) {
    if (grant->invoke_ns >= from || grant->confirmed) return true;
  }
  return false;
}

struct Tally {
  size_t judged = 0, interrupted = 0, unfinished = 0;
};

}  // namespace

PropertyResult check_liveness_recovery(const std::vector<Event>& history, const HistoryIndex& index,
                                       const CheckConfig& config) {
  PropertyResult result{std::string(kLivenessRecovery), Outcome::kValid, "", 0, {}};
  const std::map<std::string, LockAttempts> locks = attempts_per_lock(history, index);
  std::vector<int64_t> fault_starts;
  for (const FaultWindow& window : index.windows) fault_starts.push_back(window.start_ns);
  std::sort(fault_starts.begin(), fault_starts.end());
  const int64_t cut_ns = std::min(index.stop_ns, index.last_ns);
  const ClockMoves moves(history, index, config);
  Tally tally;
  for (size_t point : reference_points(index)) {
    const int64_t from = history[point].t_ns;
    if (from >= cut_ns && index.stop_event != kNoEvent) continue;  // healed after the stop
    const int64_t moved_ns = moves.by_ns(from);
    const int64_t bound = saturating_add(config.liveness_bound_ns, moved_ns);
    const int64_t until = saturating_add(from, bound);
    auto next_fault = std::upper_bound(fault_starts.begin(), fault_starts.end(), from);
    const bool refaulted = next_fault != fault_starts.end() && *next_fault <= until;
    for (const auto& [name, lock] : locks) {
      const Attempt* waiting = waiter(lock, from, std::min(until, cut_ns));
      if (waiting == nullptr) continue;  // nobody waiting on this lock: nothing to judge
      if (recovered(lock, from, std::min(until, cut_ns))) {
        ++tally.judged;
      } else if (refaulted) {
        ++tally.interrupted;
      } else if (cut_ns < until) {
        ++tally.unfinished;
      } else {
        ++tally.judged;
        // A window closed by an undone fail (v2) ends at that fail, not at a heal.
        const char* const what = index.windows.empty()        ? "first attempt at "
                                 : history[point].f == "heal" ? "heal at "
                                                              : "undone fault's end at ";
        add_violation(result, config,
                      "lock " + name + ": no worker acquired it within " + ms_text(bound) +
                          (moved_ns > 0 ? " (" + ms_text(config.liveness_bound_ns) + " + " +
                                              ms_text(moved_ns) + " of member clock movement)"
                                        : std::string()) +
                          " after the " + what + ms_text(from - index.first_ns) + ", though " +
                          history[waiting->invoke].process + " was waiting",
                      "none", {point, waiting->invoke});
      }
    }
  }
  result.note = std::to_string(tally.judged) + " recoveries judged (lock by lock), " +
                std::to_string(tally.interrupted) + " interrupted by a new fault, " +
                std::to_string(tally.unfinished) + " cut short by the stop or the history's end";
  if (result.outcome == Outcome::kInvalid) return result;
  if (tally.unfinished > 0) {
    result.outcome = Outcome::kUnknown;
    result.note += " (unknown: a bound was cut short, the waiters were stopped)";
  } else if (tally.judged == 0) {
    result.outcome = Outcome::kUnknown;
    result.note += " (unknown: no recovery could be judged)";
  }
  return result;
}

}  // namespace locklab
