#include "explore/scenario_writer.h"

#include <toml++/toml.h>

#include <sstream>
#include <stdexcept>

namespace locklab {
namespace {

toml::array string_array(const std::vector<std::string>& items) {
  toml::array out;
  for (const std::string& s : items) out.push_back(s);
  return out;
}

// A fault parameter: the JSON types the parser accepts (string, integer, boolean, strings).
void insert_param(toml::table& table, const std::string& key, const nlohmann::json& value) {
  if (value.is_string()) {
    table.insert(key, value.get<std::string>());
  } else if (value.is_boolean()) {
    table.insert(key, value.get<bool>());
  } else if (value.is_number_integer()) {
    table.insert(key, value.get<int64_t>());
  } else if (value.is_array()) {
    toml::array list;
    for (const auto& item : value) list.push_back(item.get<std::string>());
    table.insert(key, std::move(list));
  } else {
    throw std::invalid_argument("fault parameter " + key + ": unsupported value " + value.dump());
  }
}

toml::table cluster_table(const ClusterSpec& c) {
  toml::table t{{"members", c.members}, {"election_timeout_ms", c.election_timeout_ms}};
  if (!c.backend.empty()) t.insert("backend", c.backend);
  return t;
}

toml::table lock_table(const LockSpec& l) {
  toml::table t{{"expiry_ms", l.expiry_ms},
                {"extension_cadence_ms", l.extension_cadence_ms},
                {"backoff", std::string(to_string(l.backoff))},
                {"busy_wait_min_ms", l.busy_wait_min_ms},
                {"busy_wait_max_ms", l.busy_wait_max_ms},
                {"fencing", l.fencing},
                {"max_shared", int64_t{l.max_shared}},
                {"socket_timeout_ms", l.socket_timeout_ms}};
  if (l.write_concern_w == 0) {
    t.insert("write_concern", "majority");
  } else {
    t.insert("write_concern", int64_t{l.write_concern_w});
  }
  if (l.reap_after_s >= 0) t.insert("reap_after_s", l.reap_after_s);
  return t;
}

toml::table workload_table(const WorkloadSpec& w) {
  toml::table t{{"kind", std::string(to_string(w.kind))},
                {"client", w.client_manifest.empty() ? w.client : w.client_manifest},
                {"workers", int64_t{w.workers}},
                {"locks", int64_t{w.locks}},
                {"critical_section_ms", w.critical_section_ms},
                {"honour_lost", w.honour_lost},
                {"read_percent", int64_t{w.read_percent}}};
  if (w.operations > 0) t.insert("operations", w.operations);
  if (w.duration_ms > 0) t.insert("duration_ms", w.duration_ms);
  return t;
}

toml::table random_table(const RandomMixSpec& m) {
  toml::table weights;
  for (const auto& [kind, weight] : m.weights) weights.insert(std::string(to_string(kind)), weight);
  return toml::table{{"faults", std::move(weights)},
                     {"target", m.target},
                     {"start_ms", m.start_ms},
                     {"end_ms", m.end_ms},
                     {"gap_min_ms", m.gap_min_ms},
                     {"gap_max_ms", m.gap_max_ms},
                     {"duration_min_ms", m.duration_min_ms},
                     {"duration_max_ms", m.duration_max_ms}};
}

toml::table nemesis_table(const NemesisSpec& n) {
  toml::table t{{"quiet_ms", n.quiet_ms}};
  if (!n.schedule.empty()) {
    toml::array faults;
    for (const FaultSpec& f : n.schedule) {
      toml::table ft{{"fault", std::string(to_string(f.fault))},
                     {"at_ms", f.at_ms},
                     {"duration_ms", f.duration_ms},
                     {"target", f.target}};
      for (const auto& [key, value] : f.params.items()) insert_param(ft, key, value);
      faults.push_back(std::move(ft));
    }
    t.insert("fault", std::move(faults));
  }
  if (n.random) t.insert("random", random_table(*n.random));
  return t;
}

toml::table check_table(const CheckSpec& c) {
  return toml::table{{"properties", string_array(c.properties)},
                     {"liveness_bound_ms", c.liveness_bound_ms},
                     {"lost_signal_bound_ms", c.lost_signal_bound_ms}};
}

}  // namespace

std::string scenario_to_toml(const Scenario& s, const std::string& comment) {
  toml::table root{{"name", s.name},
                   {"description", s.description},
                   {"expect", std::string(to_string(s.expect))},
                   {"tier", std::string(to_string(s.tier))}};
  if (!s.expect_violated.empty()) root.insert("expect_violated", string_array(s.expect_violated));
  if (!s.expect_holding.empty()) root.insert("expect_holding", string_array(s.expect_holding));
  root.insert("cluster", cluster_table(s.cluster));
  root.insert("lock", lock_table(s.lock));
  root.insert("workload", workload_table(s.workload));
  root.insert("nemesis", nemesis_table(s.nemesis));
  root.insert("check", check_table(s.check));
  std::ostringstream out;
  std::istringstream lines(comment);
  for (std::string line; std::getline(lines, line);)
    out << (line.empty() ? "#" : "# " + line) << "\n";
  if (!comment.empty()) out << "\n";
  out << root << "\n";
  return out.str();
}

}  // namespace locklab
