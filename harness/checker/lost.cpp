// lost.signalled (docs/properties.md): a holder whose lock was taken over (another process's
// acquire ok of the same lock, with a higher token, while the holder had neither released nor
// been killed) must stop holding (its `lost` event with its token, or its death; a later write
// with that token means it had not stopped) no later than the earliest takeover plus
// CheckConfig::lost_bound_ns. Every other-process hold that starts inside the hold is looked
// at, not only the first one. A paused holder cannot be told; it is still a violation, with
// the pause named as the cause so scenarios can expect it.
#include <map>

#include "checker/index.h"

namespace locklab {
namespace {

// The first acquisition of the same lock by another process after each hold started.
// holds_of_lock is in start order; next_other[k] indexes into it (or is kNoEvent).
std::vector<size_t> next_other_process(const std::vector<const Hold*>& holds_of_lock) {
  std::vector<size_t> next(holds_of_lock.size(), kNoEvent);
  for (size_t k = holds_of_lock.size(); k-- > 1;) {
    const bool differs = holds_of_lock[k]->process != holds_of_lock[k - 1]->process;
    next[k - 1] = differs ? k : next[k];
  }
  return next;
}

bool is_takeover(const Hold& holder, const Hold& taker) {
  if (holder.shared && taker.shared) return false;
  return !holder.token || !taker.token || *taker.token > *holder.token;
}

}  // namespace

PropertyResult check_lost_signalled(const std::vector<Event>& /*history*/,
                                    const HistoryIndex& index, const CheckConfig& config) {
  PropertyResult result{std::string(kLostSignalled), Outcome::kValid, "", 0, {}};
  std::map<std::string, std::vector<const Hold*>> per_lock;
  for (const Hold& hold : index.holds) per_lock[hold.lock].push_back(&hold);
  size_t takeovers = 0;
  for (const auto& [lock, holds] : per_lock) {
    std::vector<size_t> next = next_other_process(holds);
    for (size_t k = 0; k < holds.size(); ++k) {
      const Hold& holder = *holds[k];
      const Hold* found = nullptr;
      for (size_t j = next[k]; j != kNoEvent && j < holds.size(); ++j) {
        if (holds[j]->start_ns >= holder.end_ns) break;
        if (holds[j]->process != holder.process && is_takeover(holder, *holds[j])) {
          found = holds[j];
          break;
        }
      }
      if (found == nullptr) continue;
      const Hold& taker = *found;
      ++takeovers;
      const int64_t deadline = taker.start_ns + config.lost_bound_ns;
      // Stopping within the bound is as good as being told; a reacquisition is not stopping.
      const bool stopped = holder.end != HoldEnd::kHistoryEnd && holder.end != HoldEnd::kReacquired;
      if (stopped && holder.end_ns <= deadline) continue;
      if (holder.end == HoldEnd::kHistoryEnd && index.last_ns < deadline) {
        if (result.outcome == Outcome::kValid) result.outcome = Outcome::kUnknown;
        continue;
      }
      std::string late = holder.end == HoldEnd::kHistoryEnd
                             ? "never told"
                             : "still holding " + ms_text(holder.end_ns - taker.start_ns) +
                                   " later (until " + std::string(describe(holder.end)) + ")";
      add_violation(result, config,
                    "lock " + lock + ": " + taker.process + " took over from " + holder.process +
                        ", which was " + late + "; bound " + ms_text(config.lost_bound_ns),
                    index.cause(holder.start_ns, deadline, holder.process, holder.process),
                    {holder.acquire_ok, taker.acquire_ok, holder.end_event});
    }
  }
  result.note = std::to_string(takeovers) + " takeovers of a live hold";
  if (result.outcome == Outcome::kUnknown)
    result.note += " (unknown: the history ends before a takeover's bound elapses)";
  return result;
}

}  // namespace locklab
