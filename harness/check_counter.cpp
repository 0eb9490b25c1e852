// counter.no-lost-updates: the counter (a read-modify-write guarded only by the lock, starting
// at 0) ends, in the harness's final read, at the number of counter writes that completed ok;
// writes with unknown outcome widen the allowed range. When the final value is short, two
// accepted writes that wrote the same value are shown as the lost update's evidence.
#include <algorithm>

#include "checker_index.h"

namespace locklab {
namespace {

struct Written {
  int64_t count;
  size_t event;
};

// Two accepted writes that stored the same value: one overwrote the other's update.
std::vector<size_t> duplicate_write(std::vector<Written> written) {
  std::sort(written.begin(), written.end(), [](const Written& a, const Written& b) {
    return a.count != b.count ? a.count < b.count : a.event < b.event;
  });
  for (size_t k = 1; k < written.size(); ++k) {
    if (written[k].count == written[k - 1].count) return {written[k - 1].event, written[k].event};
  }
  return {};
}

std::optional<int64_t> count_of(const Event& event) {
  if (!event.value.is_object()) return std::nullopt;
  auto it = event.value.find("count");
  if (it == event.value.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

}  // namespace

PropertyResult check_counter(const std::vector<Event>& history, const HistoryIndex& index,
                             const CheckConfig& config) {
  PropertyResult result{std::string(kCounterNoLostUpdates), Outcome::kValid, "", 0, {}};
  size_t accepted = 0, unknown = 0;
  std::vector<Written> written;
  for (const Operation& op : index.operations) {
    if (op.f != "write" || op.resource != config.counter_resource) continue;
    EventType outcome = op.outcome(history);
    if (outcome == EventType::kInfo) ++unknown;
    if (outcome != EventType::kOk) continue;
    ++accepted;
    std::optional<int64_t> count = count_of(history[op.completion]);
    if (!count && op.invoke != kNoEvent) count = count_of(history[op.invoke]);
    if (count) written.push_back(Written{*count, op.completion});
  }
  size_t final_index = kNoEvent;
  for (size_t i = history.size(); i-- > 0;) {
    const Event& e = history[i];
    if (e.process == "harness" && e.f == "final" && e.type == EventType::kOk &&
        resource_of(e) == config.counter_resource && count_of(e)) {
      final_index = i;
      break;
    }
  }
  result.note =
      std::to_string(accepted) + " counter writes ok, " + std::to_string(unknown) + " unknown";
  if (final_index == kNoEvent) {
    result.outcome = Outcome::kUnknown;
    result.note += " (unknown: no final read of " + config.counter_resource + ")";
    return result;
  }
  const int64_t final_count = *count_of(history[final_index]);
  const int64_t low = static_cast<int64_t>(accepted);
  const int64_t high = low + static_cast<int64_t>(unknown);
  if (final_count >= low && final_count <= high) return result;
  std::vector<size_t> evidence = {final_index};
  if (final_count < low) {
    for (size_t e : duplicate_write(written)) evidence.push_back(e);
  }
  std::string range =
      unknown == 0 ? std::to_string(low) : std::to_string(low) + ".." + std::to_string(high);
  add_violation(result, config,
                "counter " + config.counter_resource + " ends at " + std::to_string(final_count) +
                    " but " + range + " writes completed: " +
                    (final_count < low ? std::to_string(low - final_count) + " updates lost"
                                       : "more updates than writes"),
                "none", std::move(evidence));
  return result;
}

}  // namespace locklab
