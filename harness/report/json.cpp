// verdict.json writer and reader (see report/json.h).
#include "report/json.h"

#include <stdexcept>

namespace locklab {
namespace {

nlohmann::json stats_to_json(const Stats& stats) {
  return nlohmann::json{{"events", stats.events},
                        {"events_by_type", stats.events_by_type},
                        {"events_by_f", stats.events_by_f},
                        {"processes", stats.processes},
                        {"acquisitions", stats.acquisitions},
                        {"acquisitions_unknown", stats.acquisitions_unknown},
                        {"holds", stats.holds},
                        {"faults", stats.faults},
                        {"start_ns", stats.start_ns},
                        {"duration_ns", stats.duration_ns},
                        {"torn_fragments", stats.torn_fragments}};
}

nlohmann::json violation_to_json(const std::vector<Event>& history, const Violation& violation) {
  nlohmann::json events = nlohmann::json::array();
  for (size_t index : violation.events) {
    nlohmann::json event = {{"index", index}};
    if (index < history.size()) event["line"] = to_json_line(history[index]);
    events.push_back(std::move(event));
  }
  return nlohmann::json{
      {"message", violation.message}, {"cause", violation.cause}, {"events", std::move(events)}};
}

const nlohmann::json& member(const nlohmann::json& object, const char* key,
                             const std::string& where) {
  if (!object.is_object() || !object.contains(key))
    throw std::invalid_argument("verdict.json: " + where + " lacks \"" + key + "\"");
  return object.at(key);
}

Outcome outcome_of(const nlohmann::json& object, const std::string& where) {
  const nlohmann::json& text = member(object, "outcome", where);
  std::optional<Outcome> outcome =
      text.is_string() ? parse_outcome(text.get<std::string>()) : std::nullopt;
  if (!outcome) throw std::invalid_argument("verdict.json: " + where + " has a bad \"outcome\"");
  return *outcome;
}

}  // namespace

nlohmann::json verdict_to_json(const std::vector<Event>& history, const Verdict& verdict) {
  nlohmann::json properties = nlohmann::json::array();
  for (const PropertyResult& result : verdict.properties) {
    nlohmann::json violations = nlohmann::json::array();
    for (const Violation& violation : result.violations)
      violations.push_back(violation_to_json(history, violation));
    properties.push_back({{"property", result.property},
                          {"outcome", to_string(result.outcome)},
                          {"note", result.note},
                          {"violation_count", result.violation_count},
                          {"violations", std::move(violations)}});
  }
  return nlohmann::json{{"outcome", to_string(verdict.overall)},
                        {"properties", std::move(properties)},
                        {"stats", stats_to_json(verdict.stats)}};
}

Verdict verdict_from_json(const nlohmann::json& json) {
  Verdict verdict;
  verdict.overall = outcome_of(json, "the top level");
  for (const nlohmann::json& entry : member(json, "properties", "the top level")) {
    PropertyResult result;
    result.property = member(entry, "property", "a property").get<std::string>();
    std::string where = "property " + result.property;
    result.outcome = outcome_of(entry, where);
    result.note = member(entry, "note", where).get<std::string>();
    result.violation_count = member(entry, "violation_count", where).get<size_t>();
    for (const nlohmann::json& v : member(entry, "violations", where)) {
      Violation violation;
      violation.property = result.property;
      violation.message = member(v, "message", where).get<std::string>();
      violation.cause = member(v, "cause", where).get<std::string>();
      for (const nlohmann::json& e : member(v, "events", where))
        violation.events.push_back(member(e, "index", where).get<size_t>());
      result.violations.push_back(std::move(violation));
    }
    verdict.properties.push_back(std::move(result));
  }
  const nlohmann::json& stats = member(json, "stats", "the top level");
  verdict.stats.events = member(stats, "events", "stats").get<size_t>();
  verdict.stats.events_by_type =
      member(stats, "events_by_type", "stats").get<std::map<std::string, size_t>>();
  verdict.stats.events_by_f =
      member(stats, "events_by_f", "stats").get<std::map<std::string, size_t>>();
  verdict.stats.processes = member(stats, "processes", "stats").get<size_t>();
  verdict.stats.acquisitions = member(stats, "acquisitions", "stats").get<size_t>();
  verdict.stats.acquisitions_unknown = member(stats, "acquisitions_unknown", "stats").get<size_t>();
  verdict.stats.holds = member(stats, "holds", "stats").get<size_t>();
  verdict.stats.faults = member(stats, "faults", "stats").get<size_t>();
  verdict.stats.start_ns = member(stats, "start_ns", "stats").get<int64_t>();
  verdict.stats.duration_ns = member(stats, "duration_ns", "stats").get<int64_t>();
  return verdict;
}

}  // namespace locklab
