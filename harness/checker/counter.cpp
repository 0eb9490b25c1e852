// counter.no-lost-updates (docs/properties.md): the counter (a read-modify-write guarded only
// by the lock, starting at 0) is a versioned register: each write stores the version it read
// plus one, so every value is written at most once. Judged against the harness's final read:
//   - applied writes = acknowledged ones (write ok), indeterminate ones (info, or never
//     completed) a worker's read proves applied (the read returned their value and no other
//     write of it was invoked by then; a read served by a write later rolled back still proves
//     it applied once), plus one indeterminate one that the final value shows applied: it wrote
//     exactly that value and no acknowledged or read-proven write did;
//   - two applied writes of one value: both read the same version, one update is lost;
//   - an acknowledged write of N with a final value below N: nothing in a counter that only
//     grows can explain it, the update is lost;
//   - too many updates: v2 (every write has an invoke) a final value that no write carried;
//     v1 a final value above the acknowledged plus indeterminate writes.
// No final read (or a failed one) is unknown.
#include <algorithm>
#include <limits>
#include <unordered_map>

#include "checker/index.h"

namespace locklab {
namespace {

struct Written {
  int64_t count;
  size_t event;  // the completion (or the invoke of a write still pending)
  bool acknowledged;
  int64_t invoke_ns;  // min when the write has no invoke (v1): it may precede anything
  // For the cause: from the writer's last read of the counter before the write (the version
  // it wrote on; a worker paused between that read and the write is stale, even though its
  // write comes after the heal), else the write's first event, to the event above.
  int64_t from_ns;
  int64_t to_ns;
  const std::string* process;
};

std::optional<int64_t> written_value(const std::vector<Event>& history, const Operation& op) {
  std::optional<int64_t> count;
  if (op.invoke != kNoEvent) count = int_field(history[op.invoke], "count");
  if (!count && op.completion != kNoEvent) count = int_field(history[op.completion], "count");
  return count;
}

// The last final event of the counter (ok or info), or kNoEvent.
size_t last_final(const std::vector<Event>& history, const CheckConfig& config) {
  for (size_t i = history.size(); i-- > 0;) {
    const Event& e = history[i];
    if (e.process == "harness" && e.f == "final" && resource_of(e) == config.counter_resource &&
        (e.type == EventType::kOk || e.type == EventType::kInfo))
      return i;
  }
  return kNoEvent;
}

// Every pair of applied writes of one value is one lost update.
void check_duplicates(std::vector<Written> applied, const HistoryIndex& index,
                      const CheckConfig& config, PropertyResult& result) {
  std::sort(applied.begin(), applied.end(), [](const Written& a, const Written& b) {
    return a.count != b.count ? a.count < b.count : a.event < b.event;
  });
  for (size_t k = 1; k < applied.size(); ++k) {
    if (applied[k].count != applied[k - 1].count) continue;
    const Written& a = applied[k - 1];
    const Written& b = applied[k];
    add_violation(result, config,
                  "counter " + config.counter_resource + ": two writes stored " +
                      std::to_string(b.count) +
                      " (both read the same version): one update was lost",
                  index.cause(std::min(a.from_ns, b.from_ns), std::max(a.to_ns, b.to_ns),
                              *a.process, *b.process),
                  {a.event, b.event});
  }
}

// Writes a worker's read proves applied: a read of v (ok at t) was served by some write of v
// invoked by t; when exactly one write of v was invoked by then, that one applied, even if its
// own outcome is indeterminate. Sorting by value and invoke time keeps this O(n log n).
std::vector<bool> proven_by_reads(const std::vector<Event>& history,
                                  const std::vector<Written>& writes, const CheckConfig& config) {
  std::vector<size_t> order(writes.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  auto before = [&](size_t a, size_t b) {
    return writes[a].count != writes[b].count ? writes[a].count < writes[b].count
                                              : writes[a].invoke_ns < writes[b].invoke_ns;
  };
  std::sort(order.begin(), order.end(), before);
  std::vector<bool> proven(writes.size(), false);
  for (const Event& e : history) {
    if (e.f != "read" || e.type != EventType::kOk || resource_of(e) != config.counter_resource)
      continue;
    std::optional<int64_t> value = int_field(e, "count");
    if (!value) continue;
    auto first = std::lower_bound(order.begin(), order.end(), *value,
                                  [&](size_t k, int64_t v) { return writes[k].count < v; });
    if (first == order.end() || writes[*first].count != *value) continue;  // never written
    if (writes[*first].invoke_ns > e.t_ns) continue;
    auto second = std::next(first);
    const bool only_candidate = second == order.end() || writes[*second].count != *value ||
                                writes[*second].invoke_ns > e.t_ns;
    if (only_candidate) proven[*first] = true;
  }
  return proven;
}

// Whether the final value is explained by an acknowledged write or one a read proved applied;
// otherwise it proves at most one indeterminate write of it applied.
bool final_explained(const std::vector<Written>& writes, const std::vector<bool>& by_read,
                     int64_t final_count) {
  for (size_t k = 0; k < writes.size(); ++k) {
    if (writes[k].count == final_count && (writes[k].acknowledged || by_read[k])) return true;
  }
  return false;
}

}  // namespace

namespace {

// Every write to the counter that may have applied (not refused, its value known), with the
// span its cause is looked for in; counts the acknowledged and indeterminate ones.
std::vector<Written> counter_writes(const std::vector<Event>& history, const HistoryIndex& index,
                                    const CheckConfig& config, size_t& acknowledged,
                                    size_t& indeterminate) {
  std::vector<Written> writes;
  // Each process's last counter read so far: operations are in order of their first event.
  std::unordered_map<std::string, int64_t> last_read_ns;
  for (const Operation& op : index.operations) {
    if (op.resource != config.counter_resource) continue;
    if (op.f == "read" && op.outcome(history) == EventType::kOk) {
      last_read_ns[op.process] = history[op.completion].t_ns;
      continue;
    }
    if (op.f != "write") continue;
    EventType outcome = op.outcome(history);
    if (outcome == EventType::kFail) continue;
    (outcome == EventType::kOk ? acknowledged : indeterminate) += 1;
    std::optional<int64_t> count = written_value(history, op);
    if (!count) continue;
    size_t at = op.completion != kNoEvent ? op.completion : op.invoke;
    int64_t invoked =
        op.invoke != kNoEvent ? history[op.invoke].t_ns : std::numeric_limits<int64_t>::min();
    const int64_t first_ns = history[op.first()].t_ns;
    auto read = last_read_ns.find(op.process);
    const int64_t from_ns =
        read != last_read_ns.end() && read->second <= first_ns ? read->second : first_ns;
    writes.push_back(Written{*count, at, outcome == EventType::kOk, invoked, from_ns,
                             history[at].t_ns, &op.process});
  }
  return writes;
}

}  // namespace

PropertyResult check_counter(const std::vector<Event>& history, const HistoryIndex& index,
                             const CheckConfig& config) {
  PropertyResult result{std::string(kCounterNoLostUpdates), Outcome::kValid, "", 0, {}};
  size_t acknowledged = 0, indeterminate = 0;
  const std::vector<Written> writes =
      counter_writes(history, index, config, acknowledged, indeterminate);
  const size_t final_index = last_final(history, config);
  result.note = std::to_string(acknowledged) + " counter writes acknowledged, " +
                std::to_string(indeterminate) + " indeterminate";
  std::optional<int64_t> final_count;
  if (final_index != kNoEvent && history[final_index].type == EventType::kOk)
    final_count = history[final_index].value.value("missing", false) == true
                      ? std::optional<int64_t>(0)
                      : int_field(history[final_index], "count");
  if (!final_count) {
    result.outcome = Outcome::kUnknown;
    result.note += " (unknown: no final read of " + config.counter_resource + ")";
    return result;
  }
  if (writes.empty() && *final_count == 0) {
    // No update that names its value was made, so none could be shown lost: nothing was tested.
    result.outcome = Outcome::kUnknown;
    result.note += " (unknown: no counter write naming its count was made)";
    return result;
  }
  std::vector<Written> applied;
  const Written* highest_acknowledged = nullptr;
  bool final_written = *final_count == 0;
  const std::vector<bool> by_read = proven_by_reads(history, writes, config);
  bool shown_applied = final_explained(writes, by_read, *final_count);
  for (size_t k = 0; k < writes.size(); ++k) {
    const Written& w = writes[k];
    final_written |= w.count == *final_count;
    const bool by_final = w.count == *final_count && !shown_applied;
    if (!w.acknowledged && !by_read[k] && !by_final) continue;
    shown_applied |= by_final;
    applied.push_back(w);
    if (w.acknowledged &&
        (highest_acknowledged == nullptr || w.count > highest_acknowledged->count))
      highest_acknowledged = &w;
  }
  check_duplicates(applied, index, config, result);
  if (highest_acknowledged != nullptr && highest_acknowledged->count > *final_count) {
    // Rolled back some time between the write and the final read.
    add_violation(result, config,
                  "counter " + config.counter_resource + " ends at " +
                      std::to_string(*final_count) + " below the acknowledged write of " +
                      std::to_string(highest_acknowledged->count) + ": updates were lost",
                  index.cause(highest_acknowledged->from_ns, history[final_index].t_ns,
                              *highest_acknowledged->process, *highest_acknowledged->process),
                  {highest_acknowledged->event, final_index});
  }
  const bool too_many = index.vocabulary >= 2
                            ? !final_written
                            : *final_count > static_cast<int64_t>(acknowledged + indeterminate);
  if (too_many) {
    add_violation(result, config,
                  "counter " + config.counter_resource + " ends at " +
                      std::to_string(*final_count) + ", more updates than writes (" +
                      std::to_string(acknowledged) + " acknowledged, " +
                      std::to_string(indeterminate) + " indeterminate)",
                  "none", {final_index});
  }
  return result;
}

}  // namespace locklab
