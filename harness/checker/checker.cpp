// The checker entry point: configuration, outcomes, and running each property's checker.
#include "checker/checker.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <functional>
#include <stdexcept>

#include "checker/index.h"

namespace locklab {
namespace {

using PropertyChecker = PropertyResult (*)(const std::vector<Event>&, const HistoryIndex&,
                                           const CheckConfig&);

struct PropertyEntry {
  std::string_view name;
  PropertyChecker checker;
  // Why the property does not apply to this history (an implicitly selected property is then
  // reported not-applicable with this reason), or "" when it applies.
  std::string (*not_applicable)(const std::vector<Event>&, const HistoryIndex&, const CheckConfig&);
};

bool is_worker_event(const Event& e, const CheckConfig& config, bool counter) {
  if (e.f != "write" && e.f != "read") return false;
  return (resource_of(e) == config.counter_resource) == counter;
}

// A v2 start event names the workload, which decides what applies even when a run produced
// no such event (a fenced run whose writes never happened is unknown, not not-applicable).
std::string workload_mismatch(const HistoryIndex& index, const char* wanted) {
  if (index.workload.empty() || index.workload == wanted) return "";
  return "the workload is " + index.workload + ", not " + wanted;
}

std::string no_acquire(const std::vector<Event>& history, const HistoryIndex&, const CheckConfig&) {
  bool any = std::any_of(history.begin(), history.end(),
                         [](const Event& e) { return e.f == "acquire" && e.process != "nemesis"; });
  return any ? "" : "the history holds no acquire";
}

// A lock that issues no fencing tokens, said by the start event (value.tokens = false: the
// client's table row) or by every grant (value.no_token = true): token order and the lost
// signal, which is judged by a takeover with a higher token, cannot be judged; exclusion,
// counter and liveness can.
std::string no_tokens(const std::vector<Event>& history, const HistoryIndex& index,
                      const CheckConfig& config) {
  if (std::string why = no_acquire(history, index, config); !why.empty()) return why;
  auto flag = [](const Event& e, const char* key) {
    auto it = e.value.is_object() ? e.value.find(key) : e.value.end();
    return it != e.value.end() && it->is_boolean() ? std::optional<bool>(it->get<bool>())
                                                   : std::nullopt;
  };
  bool all_tokenless = true;
  for (const Event& e : history) {
    if (e.process == "harness" && e.f == "start" && flag(e, "tokens") == false) {
      const auto client = e.value.find("client");
      return "the lock issues no fencing tokens (client " +
             (client != e.value.end() && client->is_string() ? client->get<std::string>() : "?") +
             ")";
    }
    if (e.f == "acquire" && e.type == EventType::kOk && e.process != "nemesis") {
      all_tokenless = all_tokenless && flag(e, "no_token") == true;
    }
  }
  return all_tokenless ? "the lock's grants carry no fencing token (value.no_token)" : "";
}

std::string no_fenced(const std::vector<Event>& history, const HistoryIndex& index,
                      const CheckConfig& config) {
  if (index.workload == "rw") return "";  // the rw workload writes the fenced resources too
  if (!index.workload.empty()) return workload_mismatch(index, "fenced");
  bool any = std::any_of(history.begin(), history.end(), [&config](const Event& e) {
    return e.f == "write" && is_worker_event(e, config, false);
  });
  return any ? "" : "the history holds no fenced write";
}

std::string no_counter(const std::vector<Event>& history, const HistoryIndex& index,
                       const CheckConfig& config) {
  if (!index.workload.empty()) return workload_mismatch(index, "counter");
  bool any = std::any_of(history.begin(), history.end(),
                         [&config](const Event& e) { return is_worker_event(e, config, true); });
  return any ? "" : "the history holds no counter read or write";
}

// The rw properties apply to a history whose acquires name their mode (the rw workload).
std::string no_rw(const std::vector<Event>& history, const HistoryIndex& index,
                  const CheckConfig&) {
  if (!index.workload.empty()) return workload_mismatch(index, "rw");
  bool any = std::any_of(history.begin(), history.end(), [](const Event& e) {
    return e.f == "acquire" && e.type == EventType::kOk && e.value.is_object() &&
           e.value.contains("mode");
  });
  return any ? "" : "the history holds no reader/writer acquire";
}

std::string no_rw_fenced(const std::vector<Event>& history, const HistoryIndex& index,
                         const CheckConfig& config) {
  if (std::string why = no_rw(history, index, config); !why.empty()) return why;
  bool any = std::any_of(history.begin(), history.end(), [&config](const Event& e) {
    return e.f == "write" && is_worker_event(e, config, false);
  });
  return any || !index.workload.empty() ? "" : "the history holds no fenced write";
}

const std::vector<PropertyEntry>& registry() {
  static const std::vector<PropertyEntry> entries = {
      {kTokensUnique, check_tokens_unique, no_tokens},
      {kTokensMonotonic, check_tokens_monotonic, no_tokens},
      {kExclusionFenced, check_exclusion_fenced, no_fenced},
      {kExclusionStrict, check_exclusion_strict, no_acquire},
      {kLivenessRecovery, check_liveness_recovery, no_acquire},
      {kLostSignalled, check_lost_signalled, no_tokens},
      {kCounterNoLostUpdates, check_counter, no_counter},
      {kExclusionRw, check_exclusion_rw, no_rw},
      {kExclusionRwFenced, check_exclusion_rw_fenced, no_rw_fenced},
  };
  return entries;
}

Stats compute_stats(const std::vector<Event>& history, const HistoryIndex& index) {
  Stats stats;
  stats.events = history.size();
  for (const Event& event : history) {
    ++stats.events_by_type[std::string(to_string(event.type))];
    ++stats.events_by_f[event.f];
    if (event.f == "acquire" && event.type == EventType::kOk) ++stats.acquisitions;
    if (event.f == "acquire" && event.type == EventType::kInfo) ++stats.acquisitions_unknown;
  }
  stats.processes = index.workers.size();
  stats.holds = index.holds.size();
  stats.faults = index.windows.size();
  stats.start_ns = index.first_ns;
  // Saturated: timestamps from a worker's history can be anything int64 holds, and the span
  // of two far-apart ones overflows (UB, and a negative duration in the summary).
  int64_t duration_ns = 0;
  if (__builtin_sub_overflow(index.last_ns, index.first_ns, &duration_ns)) duration_ns = INT64_MAX;
  stats.duration_ns = std::max<int64_t>(0, duration_ns);
  return stats;
}

int64_t positive_ns(const nlohmann::json& json, const char* key, int64_t fallback) {
  auto it = json.find(key);
  if (it == json.end()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() <= 0)
    throw std::invalid_argument(std::string("check config: \"") + key +
                                "\" must be a positive integer (nanoseconds)");
  return it->get<int64_t>();
}

// Some write was or may have been applied (acknowledged, indeterminate, or cut off by a kill):
// a refused write tested nothing.
bool any_write_applied(const std::vector<Event>& history, const HistoryIndex& index) {
  return std::any_of(index.operations.begin(), index.operations.end(), [&](const Operation& op) {
    return op.f == "write" && op.outcome(history) != EventType::kFail;
  });
}

}  // namespace

const std::vector<std::string>& all_properties() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const PropertyEntry& entry : registry()) out.emplace_back(entry.name);
    return out;
  }();
  return names;
}

bool is_known_property(std::string_view name) {
  const auto& names = all_properties();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<std::string> properties_applying_to(std::string_view workload, bool tokens) {
  std::vector<Event> run(2);
  run[0].process = "harness";
  run[0].f = "start";
  run[0].value = {{"vocabulary", 2}, {"workload", workload}, {"tokens", tokens}};
  run[1].t_ns = 1;
  run[1].process = "w1";
  run[1].type = EventType::kOk;
  run[1].f = "acquire";
  run[1].lock = "L1";
  run[1].token = 1;
  const HistoryIndex index = HistoryIndex::build(run);
  const CheckConfig config;
  std::vector<std::string> out;
  for (const PropertyEntry& entry : registry()) {
    if (entry.not_applicable(run, index, config).empty()) out.emplace_back(entry.name);
  }
  return out;
}

nlohmann::json CheckConfig::to_json() const {
  return nlohmann::json{{"properties", properties},
                        {"liveness_bound_ns", liveness_bound_ns},
                        {"clock_fault_kinds", clock_fault_kinds},
                        {"lost_bound_ns", lost_bound_ns},
                        {"lease_skew_ns", lease_skew_ns},
                        {"counter_resource", counter_resource},
                        {"violations_kept_max", violations_kept_max}};
}

CheckConfig CheckConfig::from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw std::invalid_argument("check config: not a JSON object");
  static const char* const kKeys[] = {
      "properties",    "liveness_bound_ns", "clock_fault_kinds",  "lost_bound_ns",
      "lease_skew_ns", "counter_resource",  "violations_kept_max"};
  for (const auto& [key, unused] : json.items()) {
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys))
      throw std::invalid_argument("check config: unknown key \"" + key + "\"");
  }
  CheckConfig config;
  if (auto it = json.find("properties"); it != json.end()) {
    if (!it->is_array()) throw std::invalid_argument("check config: \"properties\" not an array");
    for (const auto& name : *it) {
      if (!name.is_string() || !is_known_property(name.get<std::string>()))
        throw std::invalid_argument("check config: \"properties\" has unknown property " +
                                    name.dump());
      config.properties.push_back(name.get<std::string>());
    }
  }
  config.liveness_bound_ns = positive_ns(json, "liveness_bound_ns", config.liveness_bound_ns);
  if (auto it = json.find("clock_fault_kinds"); it != json.end()) {
    if (!it->is_array())
      throw std::invalid_argument("check config: \"clock_fault_kinds\" not an array");
    for (const auto& kind : *it) {
      if (!kind.is_string() || kind.get<std::string>().empty())
        throw std::invalid_argument("check config: \"clock_fault_kinds\" has " + kind.dump() +
                                    ", not a fault kind's name");
      config.clock_fault_kinds.push_back(kind.get<std::string>());
    }
  }
  config.lost_bound_ns = positive_ns(json, "lost_bound_ns", config.lost_bound_ns);
  config.lease_skew_ns = positive_ns(json, "lease_skew_ns", config.lease_skew_ns);
  if (auto it = json.find("counter_resource"); it != json.end()) {
    if (!it->is_string() || it->get<std::string>().empty())
      throw std::invalid_argument("check config: \"counter_resource\" not a non-empty string");
    config.counter_resource = it->get<std::string>();
  }
  config.violations_kept_max = static_cast<size_t>(
      positive_ns(json, "violations_kept_max", static_cast<int64_t>(config.violations_kept_max)));
  return config;
}

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::kValid:
      return "valid";
    case Outcome::kInvalid:
      return "invalid";
    case Outcome::kUnknown:
      return "unknown";
    case Outcome::kNotApplicable:
      return "not-applicable";
  }
  assert(false && "unknown Outcome");
  return "unknown";
}

std::optional<Outcome> parse_outcome(std::string_view text) {
  if (text == "valid") return Outcome::kValid;
  if (text == "invalid") return Outcome::kInvalid;
  if (text == "unknown") return Outcome::kUnknown;
  if (text == "not-applicable") return Outcome::kNotApplicable;
  return std::nullopt;
}

Outcome combine(Outcome a, Outcome b) {
  if (a == Outcome::kNotApplicable) return b;
  if (b == Outcome::kNotApplicable) return a;
  if (a == Outcome::kInvalid || b == Outcome::kInvalid) return Outcome::kInvalid;
  if (a == Outcome::kUnknown || b == Outcome::kUnknown) return Outcome::kUnknown;
  return Outcome::kValid;
}

int exit_code(Outcome outcome) {
  switch (outcome) {
    case Outcome::kValid:
      return kExitValid;
    case Outcome::kInvalid:
      return kExitInvalid;
    case Outcome::kUnknown:
    case Outcome::kNotApplicable:  // never an overall verdict (check() makes it unknown)
      return kExitUnknown;
  }
  return kExitError;
}

const PropertyResult* Verdict::find(std::string_view property) const {
  for (const PropertyResult& result : properties) {
    if (result.property == property) return &result;
  }
  return nullptr;
}

Verdict check(const std::vector<Event>& history, const CheckConfig& config) {
  validate_history(history, config);
  HistoryIndex index = HistoryIndex::build(history);
  Verdict verdict;
  verdict.stats = compute_stats(history, index);
  for (const PropertyEntry& entry : registry()) {
    const auto& wanted = config.properties;
    bool explicit_choice = std::find(wanted.begin(), wanted.end(), entry.name) != wanted.end();
    if (!wanted.empty() && !explicit_choice) continue;
    PropertyResult result;
    if (std::string why = entry.not_applicable(history, index, config); !why.empty()) {
      result.property = std::string(entry.name);
      result.outcome = explicit_choice ? Outcome::kUnknown : Outcome::kNotApplicable;
      result.note = (explicit_choice ? "unknown: " : "not applicable: ") + why;
    } else {
      result = entry.checker(history, index, config);
      assert(result.property == entry.name);
      assert(result.violation_count >= result.violations.size());
      // Held with no acquisition granted and no write made is held over nothing: no lock was
      // tested (a lock that refuses everyone, workers that never reach the set), and a pipeline
      // must not pass that. (Each write property says so on no write of its own: counter.cpp,
      // exclusion.cpp, rw.cpp.)
      if (result.outcome == Outcome::kValid && verdict.stats.acquisitions == 0 &&
          !any_write_applied(history, index)) {
        result.outcome = Outcome::kUnknown;
        result.note += " (unknown: no acquisition was granted and no write made)";
      }
    }
    verdict.overall = combine(verdict.overall, result.outcome);
    verdict.properties.push_back(std::move(result));
  }
  // Nothing judged at all (no property applies) proves nothing.
  const bool judged_any =
      std::any_of(verdict.properties.begin(), verdict.properties.end(),
                  [](const PropertyResult& r) { return r.outcome != Outcome::kNotApplicable; });
  if (!judged_any) verdict.overall = Outcome::kUnknown;
  return verdict;
}

std::optional<CheckConfig> config_from_history(const std::vector<Event>& history) {
  for (const Event& event : history) {
    if (event.process != "harness" || event.f != "start") continue;
    if (!event.value.is_object() || !event.value.contains("check")) return std::nullopt;
    return CheckConfig::from_json(event.value["check"]);
  }
  return std::nullopt;
}

}  // namespace locklab
