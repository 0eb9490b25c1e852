// exclusion.fenced and exclusion.strict (docs/properties.md).
//
// fenced: judged at the resource. An accepted write (write ok) must not carry a token lower
// than an accepted write that completed before it was invoked, and the harness's final read
// of the resource must account for every accepted write:
//   - v2 (the final read lists the applied writes, value.writes = [{id, token}] in apply order):
//     exact sets. Lost = accepted writes missing from the list; unexpected = listed ids that no
//     write carried or that were refused; recovered = indeterminate writes in the list (they
//     applied). Tokens along the list must not decrease. `missing: true` is an empty list.
//   - v1 (count and token only): count between the definite accepts (plus one when the final
//     token is carried only by indeterminate writes: one of them visibly applied) and the
//     definite plus the indeterminate ones; token between the highest accepted and the highest
//     possible.
//   No final read of a written resource (or a failed one) leaves it unknown.
// strict: judged on the workers' beliefs. Holds (checker/index.h) of one lock must not overlap
// between processes, except shared holds with shared holds.
#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

#include "checker/index.h"

namespace locklab {
namespace {

struct ResourceTally {
  size_t accepted = 0;                   // write ok
  size_t unknown = 0;                    // write info, or never completed
  std::vector<const Operation*> writes;  // every write to the resource, in first-event order
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
    tally.writes.push_back(&op);
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

// Whether the final token is carried by no accepted write but by an indeterminate one: then one
// of those visibly applied.
bool final_token_shows_indeterminate(const std::vector<Event>& history, const Event& final_read,
                                     const ResourceTally& tally) {
  std::optional<int64_t> token = int_field(final_read, "token");
  if (!token || *token == 0) return false;
  bool by_accepted = false, by_indeterminate = false;
  for (const Operation* op : tally.writes) {
    if (op->token != token) continue;
    EventType outcome = op->outcome(history);
    by_accepted |= outcome == EventType::kOk;
    by_indeterminate |= outcome == EventType::kInfo;
  }
  return by_indeterminate && !by_accepted;
}

void check_final_count(const std::vector<Event>& history, const Event& final_read,
                       size_t final_index, const ResourceTally& tally, const std::string& resource,
                       const CheckConfig& config, PropertyResult& result) {
  auto count = final_read.value.find("count");
  if (count == final_read.value.end() || !count->is_number_integer()) return;
  int64_t value = count->get<int64_t>();
  int64_t low = static_cast<int64_t>(tally.accepted) +
                (final_token_shows_indeterminate(history, final_read, tally) ? 1 : 0);
  int64_t high = static_cast<int64_t>(tally.accepted + tally.unknown);
  if (value >= low && value <= high) return;
  add_violation(result, config,
                "resource " + resource + " ends with " + std::to_string(value) +
                    " accepted writes, but the history has " + std::to_string(tally.accepted) +
                    " accepted and " + std::to_string(tally.unknown) + " unknown" +
                    (low > static_cast<int64_t>(tally.accepted)
                         ? " (one unknown visibly applied: it carries the final token)"
                         : "") +
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

std::string write_id(const std::vector<Event>& history, const Operation& op) {
  for (size_t e : {op.invoke, op.completion}) {
    if (e == kNoEvent || !history[e].value.is_object()) continue;
    auto it = history[e].value.find("id");
    if (it != history[e].value.end() && it->is_string()) return it->get<std::string>();
  }
  return "";
}

struct ListedWrite {
  std::string id;
  std::optional<int64_t> token;
};

std::vector<ListedWrite> listed_writes(const Event& final_read) {
  std::vector<ListedWrite> listed;
  auto writes = final_read.value.find("writes");
  if (writes == final_read.value.end() || !writes->is_array()) return listed;
  for (const auto& entry : *writes) {
    ListedWrite w;
    if (entry.is_object() && entry.contains("id") && entry["id"].is_string())
      w.id = entry["id"].get<std::string>();
    if (entry.is_object() && entry.contains("token") && entry["token"].is_number_integer())
      w.token = entry["token"].get<int64_t>();
    listed.push_back(std::move(w));
  }
  return listed;
}

// The final read keeps only the newest kept writes while `count` counts every applied one.
// When count exceeds the list, an unlisted write may have applied before the list's first entry
// and been dropped: only a write invoked after that first entry completed surely applied after
// it (so inside the list) and can be judged lost by its absence. Returns the time at or before
// which an invoke is not judged that way: min when nothing was dropped, max when the first
// entry has no known completion (then no absent write can be judged by the list).
int64_t kept_window_start_ns(const std::vector<Event>& history, const Event& final_read,
                             const std::vector<ListedWrite>& listed,
                             const std::unordered_map<std::string, const Operation*>& by_id) {
  std::optional<int64_t> count = int_field(final_read, "count");
  if (!count || *count <= static_cast<int64_t>(listed.size()))
    return std::numeric_limits<int64_t>::min();
  if (listed.empty()) return std::numeric_limits<int64_t>::max();
  auto first = by_id.find(listed.front().id);
  if (first == by_id.end() || first->second->completion == kNoEvent)
    return std::numeric_limits<int64_t>::max();
  return history[first->second->completion].t_ns;
}

// Unlisted writes that may be older than the kept window.
struct OlderWrites {
  size_t accepted = 0;
  size_t unknown = 0;  // indeterminate
};

// The writes dropped from the list number count - list length. More older accepted writes
// than that is a loss; exactly that many with no older indeterminate write proves every older
// accepted write is among the dropped ones; anything else leaves them unknown.
void judge_older_writes(const Event& final_read, size_t final_index, size_t listed,
                        const OlderWrites& older, const std::string& resource,
                        const CheckConfig& config, PropertyResult& result, std::string& unknown) {
  if (older.accepted == 0 && older.unknown == 0) return;
  const int64_t dropped = int_field(final_read, "count").value_or(0) - static_cast<int64_t>(listed);
  const auto accepted = static_cast<int64_t>(older.accepted);
  if (accepted > dropped) {
    add_violation(result, config,
                  "resource " + resource + ": " + std::to_string(accepted) +
                      " accepted writes are not in the final read's list, which dropped only " +
                      std::to_string(std::max<int64_t>(dropped, 0)) + ": lost",
                  "none", {final_index});
  } else if (accepted < dropped || older.unknown > 0) {
    unknown += (unknown.empty() ? "" : ", ") + resource + ": " + std::to_string(accepted) +
               " accepted and " + std::to_string(older.unknown) +
               " indeterminate writes may be among the " + std::to_string(dropped) +
               " the final read dropped";
  }
}

// The faults that can explain what the final read shows of one write: those from its first
// event to the final read (an accepted write is lost when it is rolled back, which can be any
// time before that read).
std::string write_cause(const std::vector<Event>& history, const HistoryIndex& index,
                        const Operation& write, size_t final_index) {
  return index.cause(history[write.first()].t_ns, history[final_index].t_ns, write.process,
                     write.process);
}

// The exact model: the final read lists every applied write (id, token) in apply order.
// Returns the number of indeterminate writes the list shows applied (recovered).
size_t check_final_writes(const std::vector<Event>& history, const HistoryIndex& index,
                          const Event& final_read, size_t final_index, const ResourceTally& tally,
                          const std::string& resource, const CheckConfig& config,
                          PropertyResult& result, std::string& unknown) {
  std::unordered_map<std::string, const Operation*> by_id;
  by_id.reserve(tally.writes.size());
  for (const Operation* op : tally.writes) by_id[write_id(history, *op)] = op;
  std::unordered_map<std::string, size_t> listed_at;
  listed_at.reserve(tally.writes.size());
  std::optional<int64_t> highest;
  size_t recovered = 0;
  const std::vector<ListedWrite> listed = listed_writes(final_read);
  for (size_t k = 0; k < listed.size(); ++k) {
    const ListedWrite& w = listed[k];
    auto op = by_id.find(w.id);
    std::string what = "resource " + resource + ": applied write " + w.id + " (position " +
                       std::to_string(k + 1) + ")";
    if (w.id.empty() || op == by_id.end() || !listed_at.emplace(w.id, k).second) {
      add_violation(result, config, what + " was never invoked or is listed twice: unexpected",
                    "none", {final_index});
      continue;
    }
    const Operation& write = *op->second;
    EventType outcome = write.outcome(history);
    if (outcome == EventType::kFail)
      add_violation(result, config, what + " was refused, yet applied: unexpected",
                    write_cause(history, index, write, final_index),
                    {write.completion, final_index});
    if (outcome == EventType::kInfo) ++recovered;
    if (w.token && highest && *w.token < *highest)
      add_violation(result, config,
                    what + " carries token " + std::to_string(*w.token) +
                        ", applied after a write with token " + std::to_string(*highest),
                    write_cause(history, index, write, final_index), {write.first(), final_index});
    if (w.token && (!highest || *w.token > *highest)) highest = w.token;
  }
  const int64_t window_ns = kept_window_start_ns(history, final_read, listed, by_id);
  OlderWrites older;
  for (const Operation* op : tally.writes) {  // in history order, for stable reports
    const EventType outcome = op->outcome(history);
    std::string id = write_id(history, *op);
    if (outcome == EventType::kFail || listed_at.count(id)) continue;
    if (op->invoke == kNoEvent || history[op->invoke].t_ns <= window_ns) {
      ++(outcome == EventType::kOk ? older.accepted : older.unknown);
      continue;  // may have applied before the kept window: judged by the count below
    }
    if (outcome != EventType::kOk) continue;
    add_violation(result, config,
                  "resource " + resource + ": accepted write " + id + " (" + op->process + ", " +
                      token_text(op->token) + ") is not in the final read: lost",
                  write_cause(history, index, *op, final_index), {op->completion, final_index});
  }
  judge_older_writes(final_read, final_index, listed.size(), older, resource, config, result,
                     unknown);
  return recovered;
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

namespace {

// The last final event (ok or info) of every resource, by resource.
std::map<std::string, size_t> last_finals(const std::vector<Event>& history,
                                          const CheckConfig& config) {
  std::map<std::string, size_t> finals;
  for (size_t i = 0; i < history.size(); ++i) {
    const Event& e = history[i];
    if (e.process != "harness" || e.f != "final") continue;
    if (e.type != EventType::kOk && e.type != EventType::kInfo) continue;
    std::string resource = resource_of(e);
    if (resource != config.counter_resource) finals[resource] = i;
  }
  return finals;
}

// A final ok carrying none of the fields that say what the resource holds read nothing.
bool reads_anything(const Event& final_read) {
  if (!final_read.value.is_object()) return false;
  for (const char* key : {"count", "token", "writes", "missing"}) {
    if (final_read.value.contains(key)) return true;
  }
  return false;
}

bool has_ids(const std::vector<Event>& history, const ResourceTally& tally) {
  return std::all_of(tally.writes.begin(), tally.writes.end(),
                     [&](const Operation* op) { return !write_id(history, *op).empty(); });
}

}  // namespace

PropertyResult check_exclusion_fenced(const std::vector<Event>& history, const HistoryIndex& index,
                                      const CheckConfig& config) {
  PropertyResult result{std::string(kExclusionFenced), Outcome::kValid, "", 0, {}};
  std::map<std::string, ResourceTally> tallies;
  check_stale_writes(history, index, config, result, tallies);
  const bool written = !tallies.empty();  // every write op has a tally, each has its write
  const std::map<std::string, size_t> finals = last_finals(history, config);
  for (const auto& [resource, at] : finals) tallies[resource];  // a final of an unwritten one
  size_t read = 0, recovered = 0;
  std::string unknown;
  for (const auto& [resource, tally] : tallies) {
    auto final_at = finals.find(resource);
    if (final_at == finals.end() || history[final_at->second].type != EventType::kOk) {
      unknown += (unknown.empty() ? "" : ", ") + resource +
                 (final_at == finals.end() ? " has no final read" : " could not be read");
      continue;
    }
    const Event& e = history[final_at->second];
    if (!reads_anything(e)) {
      unknown += (unknown.empty() ? "" : ", ") + resource +
                 "'s final read has no count, token, writes or missing";
      continue;
    }
    ++read;
    const bool missing = e.value.is_object() && e.value.value("missing", false) == true;
    if ((missing || e.value.contains("writes")) && has_ids(history, tally)) {
      recovered += check_final_writes(history, index, e, final_at->second, tally, resource, config,
                                      result, unknown);
      continue;
    }
    Event counted = e;  // a missing document is an empty resource
    if (missing) counted.value.update({{"count", 0}, {"token", 0}});
    check_final_count(history, counted, final_at->second, tally, resource, config, result);
    check_final_token(counted, final_at->second, tally, resource, config, result);
  }
  result.note = std::to_string(tallies.size()) + " fenced resources, " + std::to_string(read) +
                " read at the end, " + std::to_string(recovered) +
                " indeterminate writes shown applied";
  if (!written) unknown = "no fenced write was made";
  if (!unknown.empty() && result.outcome == Outcome::kValid) {
    result.outcome = Outcome::kUnknown;
    result.note += " (unknown: " + unknown + ")";
  }
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
        // From the earlier grant: a fault in force when it was granted (a clock skew whose heal
        // ends its lease early, a pause) explains an overlap that begins after the heal.
        add_violation(result, config,
                      "lock " + lock + ": " + hold->process + " acquired (" +
                          token_text(hold->token) + ") while " + other->process +
                          " still held it (" + token_text(other->token) + ", until " +
                          std::string(describe(other->end)) + "); overlap " +
                          ms_text(overlap_end - hold->start_ns),
                      index.cause(other->start_ns, overlap_end, hold->process, other->process),
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
