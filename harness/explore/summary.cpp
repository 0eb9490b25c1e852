#include "explore/summary.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>

namespace locklab {
namespace {

void add_counts(nlohmann::json& into, const nlohmann::json& from) {
  for (const auto& [key, value] : from.items()) {
    into[key] = into.value(key, int64_t{0}) + value.get<int64_t>();
  }
}

const nlohmann::json& need(const nlohmann::json& j, const char* key) {
  if (!j.contains(key)) throw std::invalid_argument(std::string("summary lacks \"") + key + "\"");
  return j.at(key);
}

std::string size_text(const nlohmann::json& z) {
  if (!z.is_object()) return "-";
  return std::to_string(z.value("faults", 0)) + " faults, " +
         std::to_string(z.value("workers", 0)) + " workers, " +
         std::to_string(z.value("members", 0)) + " members, " +
         std::to_string(z.value("run_ms", 0)) + " ms";
}

}  // namespace

nlohmann::json new_summary(const std::string& command, uint64_t seed, int shard_index,
                           int shard_count) {
  return {
      {"command", command},
      {"seed", seed},
      {"properties", nlohmann::json::array()},
      {"shards",
       nlohmann::json::array(
           {{{"index", shard_index}, {"count", shard_count}, {"cases", 0}, {"elapsed_s", 0.0}}})},
      {"cases", 0},
      {"elapsed_s", 0.0},
      {"cases_per_minute", 0.0},
      {"outcomes", nlohmann::json::object()},
      {"findings_by_property", nlohmann::json::object()},
      {"faults_covered", nlohmann::json::object()},
      {"first_failure_case", nullptr},
      {"interrupted", false},
      {"findings", nlohmann::json::array()},
      {"harness_errors", nlohmann::json::array()}};
}

void finish_summary(nlohmann::json& s) {
  const double elapsed = s.value("elapsed_s", 0.0);
  s["cases_per_minute"] = elapsed > 0 ? s.value("cases", 0) * 60.0 / elapsed : 0.0;
}

// What makes two shards one exploration: the command's flags but those a shard may set on its
// own (--shard, --out, --time-budget), in a fixed order ("--flag value" and "--flag=value" alike).
std::string exploration_settings(const std::string& command) {
  std::vector<std::string> words;
  std::istringstream in(command);
  for (std::string w; in >> w;) words.push_back(w);
  std::vector<std::string> kept;
  for (size_t i = 0; i < words.size(); ++i) {
    std::string flag = words[i];
    std::string value;
    if (const size_t eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if (flag.rfind("--", 0) == 0 && i + 1 < words.size() &&
               words[i + 1].rfind("--", 0) != 0) {
      value = words[++i];
    }
    if (flag == "--shard" || flag == "--out" || flag == "--time-budget") continue;
    kept.push_back(flag + " " + value);
  }
  std::sort(kept.begin(), kept.end());
  std::string out;
  for (const std::string& k : kept) out += (out.empty() ? "" : " ") + k;
  return out;
}

// The shards must be distinct parts of one split: the same count, no index twice.
// Refuses shards of different splits and a shard given twice; returns the split's shards that
// none of the summaries holds (a merge of part of an exploration says so).
nlohmann::json check_shards(const std::vector<nlohmann::json>& all) {
  std::set<int64_t> seen;
  int64_t count = -1;
  for (const nlohmann::json& s : all) {
    for (const nlohmann::json& shard : need(s, "shards")) {
      const int64_t c = need(shard, "count").get<int64_t>();
      const int64_t i = need(shard, "index").get<int64_t>();
      if (count >= 0 && c != count) {
        throw std::invalid_argument("summaries of different splits (shards of " +
                                    std::to_string(count) + " and of " + std::to_string(c) + ")");
      }
      count = c;
      if (!seen.insert(i).second) {
        throw std::invalid_argument("shard " + std::to_string(i) + "/" + std::to_string(c) +
                                    " is given twice");
      }
    }
  }
  nlohmann::json missing = nlohmann::json::array();
  for (int64_t i = 0; i < count; ++i) {
    if (!seen.contains(i)) missing.push_back(i);
  }
  return missing;
}

nlohmann::json merge_summaries(const std::vector<nlohmann::json>& all) {
  if (all.empty()) throw std::invalid_argument("no summaries to merge");
  nlohmann::json out = new_summary(need(all[0], "command").get<std::string>(),
                                   need(all[0], "seed").get<uint64_t>(), 0, 1);
  out["shards"] = nlohmann::json::array();
  // Summaries written before the properties pin existed judged every property.
  out["properties"] = all[0].value("properties", nlohmann::json::array());
  out["shards_missing"] = check_shards(all);
  const std::string settings = exploration_settings(out["command"].get<std::string>());
  for (const nlohmann::json& s : all) {
    if (exploration_settings(need(s, "command").get<std::string>()) != settings) {
      throw std::invalid_argument("summaries of explorations with different settings (\"" +
                                  s["command"].get<std::string>() + "\" and \"" +
                                  out["command"].get<std::string>() + "\")");
    }
    if (need(s, "seed") != out["seed"]) {
      throw std::invalid_argument("summaries of different explorations (seed " + s["seed"].dump() +
                                  " and " + out["seed"].dump() + ")");
    }
    if (s.value("properties", nlohmann::json::array()) != out["properties"]) {
      throw std::invalid_argument("summaries of explorations judged on different properties (" +
                                  s.value("properties", nlohmann::json::array()).dump() + " and " +
                                  out["properties"].dump() + ")");
    }
    for (const auto& shard : need(s, "shards")) out["shards"].push_back(shard);
    out["cases"] = out["cases"].get<int64_t>() + need(s, "cases").get<int64_t>();
    out["elapsed_s"] = out["elapsed_s"].get<double>() + need(s, "elapsed_s").get<double>();
    add_counts(out["outcomes"], need(s, "outcomes"));
    add_counts(out["findings_by_property"], need(s, "findings_by_property"));
    add_counts(out["faults_covered"], need(s, "faults_covered"));
    const nlohmann::json& first = need(s, "first_failure_case");
    if (!first.is_null() &&
        (out["first_failure_case"].is_null() || first.get<int64_t>() < out["first_failure_case"])) {
      out["first_failure_case"] = first;
    }
    out["interrupted"] = out["interrupted"].get<bool>() || need(s, "interrupted").get<bool>();
    for (const auto& f : need(s, "findings")) out["findings"].push_back(f);
    for (const auto& e : need(s, "harness_errors")) out["harness_errors"].push_back(e);
  }
  finish_summary(out);
  return out;
}

std::string summary_markdown(const nlohmann::json& s) {
  std::ostringstream md;
  md << "# locklab explore\n\n`" << s.value("command", "") << "`\n\n";
  md << "| figure | value |\n|---|---|\n";
  md << "| seed | " << s["seed"].dump() << " |\n";
  std::string judged;
  for (const auto& p : s.value("properties", nlohmann::json::array()))
    judged += (judged.empty() ? "" : ", ") + p.get<std::string>();
  md << "| properties judged | " << (judged.empty() ? "every one that applies" : judged) << " |\n";
  md << "| shards | " << s["shards"].size();
  const nlohmann::json missing = s.value("shards_missing", nlohmann::json::array());
  if (!missing.empty()) md << " (missing: " << missing.dump() << ")";
  md << " |\n";
  md << "| cases | " << s["cases"].dump() << " |\n";
  md << "| runner time (s) | " << s["elapsed_s"].get<double>() << " |\n";
  md << "| cases per minute | " << s["cases_per_minute"].get<double>() << " |\n";
  md << "| first failing case | " << s["first_failure_case"].dump() << " |\n";
  md << "| interrupted | " << (s["interrupted"].get<bool>() ? "yes" : "no") << " |\n\n";
  md << "## Outcomes\n\n| outcome | cases |\n|---|---|\n";
  for (const auto& [k, v] : s["outcomes"].items()) md << "| " << k << " | " << v << " |\n";
  md << "\n## Findings by property\n\n| property | cases |\n|---|---|\n";
  for (const auto& [k, v] : s["findings_by_property"].items())
    md << "| " << k << " | " << v << " |\n";
  md << "\n## Faults covered\n\n| fault | windows |\n|---|---|\n";
  for (const auto& [k, v] : s["faults_covered"].items()) md << "| " << k << " | " << v << " |\n";
  md << "\n## Findings (shrunk)\n\n| finding | case | shrink steps | runs | from | to | "
        "reproduced | repro |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& f : s["findings"]) {
    const nlohmann::json shrink = f.value("shrink", nlohmann::json::object());
    const nlohmann::json confirmed = f.value("confirmed", nlohmann::json::object());
    md << "| " << f.value("key", "") << " | " << f.value("case", nlohmann::json()).dump() << " | "
       << shrink.value("steps", 0) << " | " << shrink.value("runs", 0) << " | "
       << size_text(f.value("original_size", nlohmann::json())) << " | "
       << size_text(f.value("final_size", nlohmann::json())) << " | "
       << confirmed.value("failed", 0) << "/" << confirmed.value("runs", 0) << " | "
       << f.value("repro", "") << " |\n";
  }
  if (!s["harness_errors"].empty()) {
    md << "\n## Harness errors (not findings)\n\n";
    for (const auto& e : s["harness_errors"]) {
      md << "- case " << e.value("case", nlohmann::json()).dump() << ": " << e.value("detail", "")
         << "\n";
    }
  }
  return md.str();
}

ExploreVerdict explore_verdict(const nlohmann::json& s) {
  const int cases = s.at("cases").get<int>();
  const int not_judged = static_cast<int>(s.at("harness_errors").size());
  const size_t findings = s.at("findings").size();
  const bool interrupted = s.value("interrupted", false);
  const bool partial = !s.value("shards_missing", nlohmann::json::array()).empty();
  std::ostringstream line;
  line << cases << " cases, " << cases - not_judged << " judged";
  if (not_judged > 0) line << ", " << not_judged << " not judged (harness errors)";
  line << ", " << findings << (findings == 1 ? " finding" : " findings");
  if (interrupted) line << ", interrupted";
  if (partial) line << ", shards missing";
  ExploreVerdict v;
  v.line = line.str();
  if (findings > 0) {
    v.exit_code = 1;
  } else if (not_judged > 0 || interrupted || partial) {
    v.exit_code = 2;  // nothing found in what ran, but not all of it ran or was judged
  }
  return v;
}

}  // namespace locklab
