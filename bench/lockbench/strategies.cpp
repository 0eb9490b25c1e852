#include "strategies.h"

#include <array>
#include <stdexcept>

namespace lockbench {
namespace {

constexpr std::array kStrategies = {
    Strategy{"random", mongolock::Backoff::kRandom, "uniform in [min, max]", ""},
    Strategy{"adaptive", mongolock::Backoff::kAdaptive,
             "min * 1.5^n (n = busy attempts, at most 10) +-20 % jitter, in [min, max]", ""},
    Strategy{"decorrelated", mongolock::Backoff::kDecorrelated,
             "min(max, uniform(min, 3 * previous sleep)), previous = min at first", ""},
    Strategy{"notify", mongolock::Backoff::kNotify,
             "FIFO queue on the lock document; a release hands the lock to the head, woken by "
             "the release's reply when it shares the releaser's Provider, else by its change "
             "stream; waiters of the holder's own Provider wait in its local line without an "
             "ask, and the release hands the lock to the first of them when the queue is empty",
             ""},
};

}  // namespace

std::span<const Strategy> strategies() {
  return kStrategies;
}

std::vector<const Strategy*> available_strategies() {
  std::vector<const Strategy*> out;
  for (const Strategy& s : kStrategies) {
    if (s.backoff) out.push_back(&s);
  }
  return out;
}

const Strategy& strategy_named(std::string_view name) {
  for (const Strategy& s : kStrategies) {
    if (s.name == name) return s;
  }
  std::string known;
  for (const Strategy& s : kStrategies) known += (known.empty() ? "" : ", ") + std::string(s.name);
  throw std::invalid_argument("unknown strategy '" + std::string(name) + "' (known: " + known +
                              ")");
}

std::vector<const Strategy*> pick_strategies(const std::vector<std::string>& names) {
  std::vector<const Strategy*> out;
  for (const std::string& name : names) {
    const Strategy& s = strategy_named(name);
    if (!s.backoff) {
      throw std::invalid_argument("strategy '" + name +
                                  "' cannot run: " + std::string(s.unavailable));
    }
    for (const Strategy* seen : out) {
      if (seen == &s) throw std::invalid_argument("strategy '" + name + "' given twice");
    }
    out.push_back(&s);
  }
  return out;
}

}  // namespace lockbench
