// exclusion.fenced and exclusion.strict (ARCHITECTURE.md "Properties").
//
// fenced: judged at the resource. An accepted write (write ok) must not carry a token lower
// than an accepted write that completed before it was invoked, and the harness's final read
// of the resource must account for every accepted write (count between the definite accepts
// and the definite plus the unknown ones; token between the highest definite and the highest
// possible).
// strict: judged on the workers' beliefs. Holds (checker_index.h) of one lock must not overlap
// between processes, except shared holds with shared holds.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "checker_index.h"

namespace locklab {
namespace {

struct ResourceTally {
  size_t accepted = 0;  // write ok
  size_t unknown = 0;   // write info, or never completed
  std::optional<int64_t> max_accepted_token;
  size_t max_accepted_event = kNoEvent;
  std::optional<int64_t> max_possible_token;
};

struct Highest {
  int64_t token = 0;
  size_t ok = kNoEvent;
};

void check_stale_writes(const std::vector<Event>& history, const HistoryIndex& index,
                        const CheckConfig& config, PropertyResult& result,
                        std::map<std::string, ResourceTally>& tallies) {
  std::vector<const Operation*> by_event(history.size(), nullptr);
  for (const Operation& op : index.operations) {
    if (op.f != "write" || op.resource == config.counter_resource) continue;
    ResourceTally& tally = tallies[op.resource];
    EventType outcome = op.outcome(history);
    if (outcome == EventType::kOk) ++tally.accepted;
    if (outcome == EventType::kInfo) ++tally.unknown;
    if (outcome == EventType::kFail || !op.token) continue;
    if (!tally.max_possible_token || *op.token > *tally.max_possible_token)
      tally.max_possible_token = op.token;
    if (outcome != EventType::kOk) continue;
    if (op.invoke != kNoEvent) by_event[op.invoke] = &op;
    by_event[op.completion] = &op;
  }
  std::unordered_map<std::string, Highest> highest;  // per resource, among completed accepts
  std::unordered_map<size_t, Highest> at_invoke;     // keyed by the completion's index
  for (size_t i = 0; i < history.size(); ++i) {
    const Operation* op = by_event[i];
    if (op == nullptr) continue;
    if (i == op->invoke) {
      at_invoke[op->completion] = highest[op->resource];
      continue;
    }
    int64_t token = *op->token;
    if (auto seen = at_invoke.find(i); seen != at_invoke.end()) {
      const Highest& before = seen->second;
      if (before.ok != kNoEvent && token < before.token) {
        const Event& earlier = history[before.ok];
        add_violation(result, config,
                      "resource " + op->resource + " accepted " + op->process +
                          "'s write with token " + std::to_string(token) + " after accepting " +
                          earlier.process + "'s write with token " + std::to_string(before.token),
                      index.cause(earlier.t_ns, history[i].t_ns, earlier.process, op->process),
                      {before.ok, op->invoke, i});
      }
      at_invoke.erase(seen);
    }
    Highest& slot = highest[op->resource];
    if (slot.ok == kNoEvent || token > slot.token) slot = Highest{token, i};
    ResourceTally& tally = tallies[op->resource];
    if (!tally.max_accepted_token || token > *tally.max_accepted_token) {
      tally.max_accepted_token = token;
      tally.max_accepted_event = i;
    }
  }
}

void check_final_count(const Event& final_read, size_t final_index, const ResourceTally& tally,
                       const std::string& resource, const CheckConfig& config,
                       PropertyResult& result) {
  auto count = final_read.value.find("count");
  if (count == final_read.value.end() || !count->is_number_integer()) return;
  int64_t value = count->get<int64_t>();
  int64_t low = static_cast<int64_t>(tally.accepted);
  int64_t high = low + static_cast<int64_t>(tally.unknown);
  if (value >= low && value <= high) return;
  add_violation(result, config,
                "resource " + resource + " ends with " + std::to_string(value) +
                    " accepted writes, but the history has " + std::to_string(low) +
                    " accepted and " + std::to_string(tally.unknown) + " unknown" +
                    (value < low ? ": accepted writes were lost" : ": writes were invented"),
                "none", {final_index});
}

void check_final_token(const Event& final_read, size_t final_index, const ResourceTally& tally,
                       const std::string& resource, const CheckConfig& config,
                       PropertyResult& result) {
  auto token = final_read.value.find("token");
  if (token == final_read.value.end() || !token->is_number_integer()) return;
  int64_t value = token->get<int64_t>();
  if (tally.max_accepted_token && value < *tally.max_accepted_token) {
    add_violation(result, config,
                  "resource " + resource + " ends at token " + std::to_string(value) +
                      ", below the accepted write with token " +
                      std::to_string(*tally.max_accepted_token),
                  "none", {tally.max_accepted_event, final_index});
  } else if (value != 0 && (!tally.max_possible_token || value > *tally.max_possible_token)) {
    add_violation(result, config,
                  "resource " + resource + " ends at token " + std::to_string(value) +
                      ", which no write carried",
                  "none", {final_index});
  }
}

// Which processes hold, as (max end) candidates from two different processes, so that a new
// hold can always be compared with the latest-ending hold of some other process.
struct LatestTwo {
  const Hold* first = nullptr;   // latest end
  const Hold* second = nullptr;  // latest end among processes other than first's

  void add(const Hold& hold) {
    if (first == nullptr || hold.end_ns > first->end_ns) {
      if (first != nullptr && first->process != hold.process) second = first;
      first = &hold;
    } else if (hold.process != first->process &&
               (second == nullptr || hold.end_ns > second->end_ns)) {
      second = &hold;
    }
  }
  const Hold* other_than(const std::string& process) const {
    if (first != nullptr && first->process != process) return first;
    return second;
  }
};

}  // namespace

PropertyResult check_exclusion_fenced(const std::vector<Event>& history, const HistoryIndex& index,
                                      const CheckConfig& config) {
  PropertyResult result{std::string(kExclusionFenced), Outcome::kValid, "", 0, {}};
  std::map<std::string, ResourceTally> tallies;
  check_stale_writes(history, index, config, result, tallies);
  size_t finals = 0;
  for (size_t i = 0; i < history.size(); ++i) {
    const Event& e = history[i];
    if (e.process != "harness" || e.f != "final" || e.type != EventType::kOk) continue;
    std::string resource = resource_of(e);
    auto tally = tallies.find(resource);
    if (resource == config.counter_resource || tally == tallies.end()) continue;
    ++finals;
    check_final_count(e, i, tally->second, resource, config, result);
    check_final_token(e, i, tally->second, resource, config, result);
  }
  result.note = std::to_string(tallies.size()) + " fenced resources, " + std::to_string(finals) +
                " final reads";
  if (finals == 0) result.note += " (lost accepted writes not judged: no final read)";
  return result;
}

PropertyResult check_exclusion_strict(const std::vector<Event>& /*history*/,
                                      const HistoryIndex& index, const CheckConfig& config) {
  PropertyResult result{std::string(kExclusionStrict), Outcome::kValid, "", 0, {}};
  // Holds are already in start order; group them per lock, keeping that order.
  std::map<std::string, std::vector<const Hold*>> per_lock;
  for (const Hold& hold : index.holds) per_lock[hold.lock].push_back(&hold);
  for (const auto& [lock, holds] : per_lock) {
    LatestTwo exclusive;
    LatestTwo any;
    for (const Hold* hold : holds) {
      const Hold* other = (hold->shared ? exclusive : any).other_than(hold->process);
      if (other != nullptr && other->end_ns > hold->start_ns) {
        int64_t overlap_end = std::min(other->end_ns, hold->end_ns);
        add_violation(result, config,
                      "lock " + lock + ": " + hold->process + " acquired (token " +
                          (hold->token ? std::to_string(*hold->token) : "?") + ") while " +
                          other->process + " still held it (token " +
                          (other->token ? std::to_string(*other->token) : "?") + ", until " +
                          std::string(describe(other->end)) + "); overlap " +
                          ms_text(overlap_end - hold->start_ns),
                      index.cause(hold->start_ns, overlap_end, hold->process, other->process),
                      {other->acquire_ok, hold->acquire_ok, other->end_event});
      }
      any.add(*hold);
      if (!hold->shared) exclusive.add(*hold);
    }
  }
  result.note = std::to_string(index.holds.size()) + " holds";
  return result;
}

}  // namespace locklab
