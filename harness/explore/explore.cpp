#include "explore/explore.h"

#include <signal.h>

#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "checker/clock.h"
#include "explore/case_runner.h"
#include "explore/claims.h"
#include "explore/generators.h"
#include "explore/scenario_writer.h"
#include "explore/shrink.h"
#include "explore/summary.h"
#include "run/files.h"

namespace locklab {
namespace {

namespace fs = std::filesystem;

volatile std::sig_atomic_t g_interrupted = 0;

void on_interrupt(int sig) {
  g_interrupted = sig;
}

// Without SA_RESTART: the wait for a case's child is retried by case_runner, which is what
// lets the child (which got the same Ctrl-C) finish its cleanup first.
void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

bool interrupted() {
  return g_interrupted != 0;
}

// Seconds on the harness's steady clock, for the summary's durations (milliseconds suffice).
double steady_now_s() {
  return static_cast<double>(steady_now_ms()) / 1000.0;
}

uint64_t mix(uint64_t x) {  // splitmix64's finaliser: neighbouring inputs, unrelated outputs
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t case_seed(uint64_t seed, int index) {
  return mix(seed ^ mix(static_cast<uint64_t>(index))) & 0xffffffffULL;
}

Scenario generate_case(const ExploreSpace& space, const ExploreOptions& o, uint64_t seed,
                       int index) {
  const rc::Random random(
      rc::Random::Key{seed, static_cast<uint64_t>(index), 0x6c6f636b6c6162ULL, 0});
  Scenario s = scenario_gen(space)(random, case_size(o, index)).value();
  s.name = "explore-case-" + std::to_string(index);
  return s;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::string file_name_of(const std::string& key) {
  std::string out;
  for (char c : key) out += (c == '+' || c == '/') ? '_' : c;
  return out;
}

nlohmann::json size_json(const ScenarioSize& z) {
  return {{"faults", z.faults}, {"workers", z.workers},   {"members", z.members},
          {"locks", z.locks},   {"fault_ms", z.fault_ms}, {"run_ms", z.run_ms}};
}

std::string reproduce_string(const ExploreOptions& o, uint64_t seed, int index) {
  std::string pins;
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ",") + x;
    return out;
  };
  if (!o.pins.clients.empty()) pins += " --client " + join(o.pins.clients);
  if (!o.pins.faults.empty()) pins += " --faults " + join(o.pins.faults);
  if (o.pins.members) pins += " --members " + std::to_string(*o.pins.members);
  if (o.pins.write_concern_w) {
    pins += " --write-concern " + (*o.pins.write_concern_w == 0
                                       ? std::string("majority")
                                       : std::to_string(*o.pins.write_concern_w));
  }
  if (o.pins.honour_lost)
    pins += std::string(" --honour-lost ") + (*o.pins.honour_lost ? "true" : "false");
  if (!o.pins.properties.empty()) pins += " --properties " + join(o.pins.properties);
  if (o.pins.backoff) pins += " --backoff " + std::string(to_string(*o.pins.backoff));
  return "locklab explore" + pins + " --max-size " + std::to_string(o.max_size) + " --cases " +
         std::to_string(o.cases) + " --seed " + std::to_string(seed) + " --case " +
         std::to_string(index);
}

class Exploration {
 public:
  Exploration(const ExploreOptions& o, ExploreSpace space, uint64_t seed, fs::path out)
      : o_(o), space_(std::move(space)), seed_(seed), out_(std::move(out)) {
    summary_ = new_summary(o.command_line, seed, o.shard_index, o.shard_count);
    summary_["properties"] = space_.properties;
  }

  int run() {
    fs::create_directories(out_ / "cases");
    std::cerr << "explore: seed " << seed_ << ", " << o_.cases << " cases"
              << (o_.shard_count > 1 ? ", shard " + std::to_string(o_.shard_index) + "/" +
                                           std::to_string(o_.shard_count)
                                     : "")
              << ", output " << out_.string() << std::endl;
    start_s_ = steady_now_s();
    for (int i = first(); i < o_.cases; i += o_.shard_count) {
      if (o_.only_case && i != *o_.only_case) continue;
      if (interrupted() || over_budget()) break;
      run_one(i);
      if (o_.first_finding && !summary_["findings"].empty()) break;
    }
    summary_["interrupted"] = interrupted();
    write_summary();
    const ExploreVerdict verdict = explore_verdict(summary_);
    std::cerr << "explore: " << verdict.line << ", " << std::fixed << std::setprecision(1)
              << summary_["cases_per_minute"].get<double>() << " cases/min; summary "
              << (out_ / "summary.md").string() << std::endl;
    if (interrupted()) return 130;
    return verdict.exit_code;
  }

 private:
  const ExploreOptions& o_;
  ExploreSpace space_;
  uint64_t seed_;
  fs::path out_;
  nlohmann::json summary_;
  std::ofstream cases_log_;
  double start_s_ = 0;
  double shrink_s_ = 0;           // time spent shrinking: not case time
  std::set<std::string> shrunk_;  // findings already shrunk
  // A member that died in a shrinking run of another finding: a finding of its own, shrunk
  // once the shrink it interrupted is done (its run directory is kept).
  struct DeathMet {
    Scenario scenario;
    uint64_t seed = 0;
    CaseOutcome outcome;
  };
  std::vector<DeathMet> deaths_met_;

  void shrink_deaths_met(int i, const std::string& while_shrinking) {
    while (!deaths_met_.empty() && !interrupted()) {
      const DeathMet d = std::move(deaths_met_.front());
      deaths_met_.erase(deaths_met_.begin());
      summary_["findings_by_property"]["member-died"] =
          summary_["findings_by_property"].value("member-died", 0) + 1;
      if (shrunk_.insert("member-died").second) {
        shrink_finding(i, d.scenario, d.seed, d.outcome, "member-died", while_shrinking);
      }
    }
    deaths_met_.clear();  // interrupted: nothing more is shrunk
    write_summary();
  }

  static std::vector<std::string> finding_keys(const CaseOutcome& o) {
    if (o.verdict == CaseVerdict::kMemberDied) return {"member-died"};
    return o.verdict == CaseVerdict::kInvalid ? o.violated : std::vector<std::string>{};
  }

  int first() const { return o_.only_case ? *o_.only_case % o_.shard_count : o_.shard_index; }

  bool over_budget() const {
    return o_.time_budget_ms > 0 && (steady_now_s() - start_s_) * 1000 >= o_.time_budget_ms;
  }

  void run_one(int i) {
    const Scenario s = generate_case(space_, o_, seed_, i);
    const uint64_t cseed = case_seed(seed_, i);
    const std::string dir = (out_ / "cases" / std::to_string(i)).string();
    const CaseOutcome outcome = run_case(s, cseed, dir);
    if (interrupted()) return;  // the case was cut short: not counted
    record(i, s, cseed, outcome);
    // Each finding (a property, or a member's death) is shrunk once: at its first case, each
    // property of a case that violates several on its own.
    std::vector<std::string> fresh;
    for (const std::string& key : finding_keys(outcome)) {
      if (!shrunk_.count(key)) fresh.push_back(key);
      summary_["findings_by_property"][key] = summary_["findings_by_property"].value(key, 0) + 1;
    }
    for (const std::string& key : fresh) {
      if (interrupted() || !shrunk_.insert(key).second) continue;  // a death met may be shrunk
      shrink_finding(i, s, cseed, outcome, key, "");
      shrink_deaths_met(i, key);
    }
    if (fresh.empty() && finding_key(outcome).empty() && !o_.keep_runs &&
        outcome.verdict != CaseVerdict::kHarnessError) {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
    progress(i, outcome, finding_key(outcome));
  }

  void record(int i, const Scenario& s, uint64_t cseed, const CaseOutcome& outcome) {
    const std::string verdict(to_string(outcome.verdict));
    summary_["cases"] = summary_["cases"].get<int>() + 1;
    summary_["outcomes"][verdict] = summary_["outcomes"].value(verdict, 0) + 1;
    summary_["elapsed_s"] = summary_["elapsed_s"].get<double>() + outcome.seconds;
    summary_["shards"][0]["cases"] = summary_["cases"];
    summary_["shards"][0]["elapsed_s"] = summary_["elapsed_s"];
    for (const FaultSpec& f : s.nemesis.schedule) {
      const std::string kind(to_string(f.fault));
      summary_["faults_covered"][kind] = summary_["faults_covered"].value(kind, 0) + 1;
    }
    if (!finding_key(outcome).empty() && summary_["first_failure_case"].is_null()) {
      summary_["first_failure_case"] = i;
    }
    if (outcome.verdict == CaseVerdict::kHarnessError || outcome.verdict == CaseVerdict::kNotRun) {
      summary_["harness_errors"].push_back({{"case", i}, {"detail", outcome.detail}});
    }
    if (!cases_log_.is_open()) cases_log_.open(out_ / "cases.jsonl", std::ios::app);
    cases_log_ << nlohmann::json{{"case", i},
                                 {"seed", cseed},
                                 {"size", case_size(o_, i)},
                                 {"outcome", to_string(outcome.verdict)},
                                 {"finding", finding_key(outcome)},
                                 {"violated", outcome.violated},
                                 {"detail", outcome.detail},
                                 {"seconds", outcome.seconds},
                                 {"scale", size_json(size_of(s))}}
                      .dump()
               << std::endl;
    finish_summary(summary_);
    write_summary();
  }

  void progress(int i, const CaseOutcome& outcome, const std::string& key) {
    // The case's index, as cases/<i>.toml and --case name it, then its place in the sequence.
    std::cerr << "explore: case " << i << " (" << i + 1 << "/" << o_.cases << ") "
              << to_string(outcome.verdict) << (key.empty() ? "" : " (" + key + ")") << " in "
              << std::fixed << std::setprecision(1) << outcome.seconds << "s, "
              << summary_["cases_per_minute"].get<double>() << " cases/min, findings "
              << summary_["findings"].size();
    if (outcome.verdict == CaseVerdict::kHarnessError) std::cerr << ": " << outcome.detail;
    std::cerr << std::endl;
  }

  void write_summary() {
    write_file(out_ / "summary.json", summary_.dump(2) + "\n");
    write_file(out_ / "summary.md", summary_markdown(summary_));
  }

  // `while_shrinking`: the finding whose shrinking met this one ("" for a case's own finding).
  void shrink_finding(int i, const Scenario& s, uint64_t cseed, const CaseOutcome& outcome,
                      const std::string& key, const std::string& while_shrinking);
  void write_repro(int i, uint64_t cseed, const std::string& key, const std::string& name,
                   const ShrinkResult& r, const std::string& while_shrinking);
};

void Exploration::shrink_finding(int i, const Scenario& s, uint64_t cseed,
                                 const CaseOutcome& outcome, const std::string& key,
                                 const std::string& while_shrinking) {
  const std::string name = file_name_of(key) + "-" + std::to_string(cseed);
  const fs::path dir = out_ / "shrink" / name;
  std::cerr << "explore: case " << i << " found " << key << " (" << describe(size_of(s))
            << "); shrinking, " << o_.shrink_reruns << " runs per candidate" << std::endl;
  ShrinkOptions so;
  so.reruns = o_.shrink_reruns;
  so.confirm_runs = o_.confirm_runs;
  so.budget_ms = o_.shrink_budget_ms;
  so.stop = interrupted;
  so.run_dir = [dir](int step, int index, int attempt) {
    const std::string leaf = step < 0 ? "confirm-" + std::to_string(attempt)
                                      : "step" + std::to_string(step) + "-c" +
                                            std::to_string(index) + "-a" + std::to_string(attempt);
    return (dir / leaf).string();
  };
  // Runs that did not fail are removed: only failing runs are worth reading. A member that died
  // in a run shrinking another finding is a finding too: its run is kept and it is shrunk next.
  const CaseRunner runner = [&](const Scenario& c, uint64_t seed, const std::string& run_dir) {
    CaseOutcome o = run_case(c, seed, run_dir);
    std::cerr << "explore:   shrink " << describe(size_of(c)) << ": " << to_string(o.verdict)
              << (finding_key(o).empty() ? "" : " (" + finding_key(o) + ")") << std::endl;
    const bool death_met = o.verdict == CaseVerdict::kMemberDied && key != "member-died";
    if (death_met) deaths_met_.push_back({c, seed, o});
    if (!matches(o, key) && !death_met && o.verdict != CaseVerdict::kHarnessError) {
      std::error_code ec;
      fs::remove_all(run_dir, ec);
      fs::remove(run_dir + ".toml", ec);
    }
    return o;
  };
  const double start = steady_now_s();
  const ShrinkResult r = shrink(s, outcome, cseed, runner, so, key);
  shrink_s_ += steady_now_s() - start;
  nlohmann::json finding = {{"key", key},
                            {"case", i},
                            {"case_seed", cseed},
                            {"reproduce", reproduce_string(o_, seed_, i)},
                            {"detail", outcome.detail},
                            {"shrink",
                             {{"steps", r.steps},
                              {"candidates", r.candidates},
                              {"runs", r.runs},
                              {"complete", r.complete},
                              {"reruns_per_candidate", o_.shrink_reruns},
                              {"seconds", steady_now_s() - start}}},
                            {"original_size", size_json(size_of(s))},
                            {"final_size", size_json(size_of(r.minimal))},
                            {"confirmed", {{"failed", r.confirm_failed}, {"runs", r.confirm_runs}}},
                            {"repro", (out_ / "repros" / (name + ".toml")).string()}};
  if (!while_shrinking.empty()) finding["found_while_shrinking"] = while_shrinking;
  summary_["findings"].push_back(finding);
  write_repro(i, cseed, key, name, r, while_shrinking);
  write_summary();
  std::cerr << "explore: shrunk to " << describe(size_of(r.minimal)) << " in " << r.steps
            << " steps (" << r.runs << " runs); reproduced " << r.confirm_failed << "/"
            << r.confirm_runs << "; " << finding["repro"].get<std::string>() << "\n"
            << "explore: reproduce the case with: " << finding["reproduce"].get<std::string>()
            << std::endl;
}

void Exploration::write_repro(int i, uint64_t cseed, const std::string& key,
                              const std::string& name, const ShrinkResult& r,
                              const std::string& while_shrinking) {
  const fs::path repros = out_ / "repros";
  fs::create_directories(repros);
  Scenario s = r.minimal;
  s.name = name;
  std::ostringstream c;
  if (r.failing.verdict == CaseVerdict::kMemberDied) {
    s.description = "locklab explore: a member process ends on its own";
    c << "A member process ends on its own: " << r.failing.detail << ".\n"
      << "`locklab run` ends with \"run failed: member ... ended\" (exit 2); a member program\n"
      << "without the bug runs it to a valid verdict, which is what expect says.\n";
  } else {
    s.expect = Expect::kInvalid;
    s.expect_violated = {key};
    s.description = "locklab explore: violates " + key;
    c << "Violates " << key << " (see the run directory beside this file: timeline.html).\n";
  }
  c << "Shrunk by locklab explore from "
    << (while_shrinking.empty()
            ? ""
            : "a run met while shrinking the " + while_shrinking + " finding of ")
    << "case " << i << " (" << describe(size_of(r.minimal)) << ")\nin " << r.steps << " steps"
    << (r.complete ? "" : " (stopped before a minimum)") << "; it failed " << r.confirm_failed
    << " of " << r.confirm_runs << " confirmation runs.\n"
    << "Judged on: "
    << (s.check.properties.empty() ? std::string("every property that applies")
                                   : join_names(s.check.properties))
    << ".\n"
    << "Found by: " << o_.command_line << "\n"
    << "The case: " << reproduce_string(o_, seed_, i) << "\n"
    << "Rerun: locklab run " << name << ".toml --seed " << cseed << "\n";
  write_file(repros / (name + ".toml"), scenario_to_toml(s, c.str()));
  const CaseOutcome& shown =
      r.last_confirm_failure.run_dir.empty() ? r.failing : r.last_confirm_failure;
  std::error_code ec;
  if (!shown.run_dir.empty() && fs::exists(shown.run_dir)) {
    fs::remove_all(repros / name, ec);
    fs::copy(shown.run_dir, repros / name, fs::copy_options::recursive, ec);
  }
}

}  // namespace

std::pair<int, int> parse_shard(const std::string& text) {
  const size_t slash = text.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    size_t used = 0;
    const int i = std::stoi(text.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument("trailing");
    const std::string n_text = text.substr(slash + 1);
    const int n = std::stoi(n_text, &used);
    if (used != n_text.size() || i < 0 || n < 1 || n > 1000 || i >= n) {
      throw std::invalid_argument("range");
    }
    return {i, n};
  } catch (const std::exception&) {
    throw std::invalid_argument("--shard: expected I/N with 0 <= I < N <= 1000, got \"" + text +
                                "\"");
  }
}

int case_size(const ExploreOptions& o, int index) {
  const int ramp = std::min(o.cases, kSizeRampCasesMax);
  const int grown = ramp > 1 ? (index % ramp) * 100 / (ramp - 1) : 100;
  return std::min(o.max_size, grown);
}

int64_t parse_duration_ms(const std::string& text, const std::string& option) {
  try {
    // Digits with an optional fraction and unit: std::stod alone would take "nan", "inf",
    // "0x10" and "1e3", none of which a person means as a budget.
    static const std::regex kDuration(R"(([0-9]+(\.[0-9]+)?)(s|m|h)?)");
    std::smatch m;
    if (!std::regex_match(text, m, kDuration)) throw std::invalid_argument("");
    const double value = std::stod(m[1].str());
    const std::string unit = m[3].str();
    const double scale = unit.empty() || unit == "s" ? 1000
                         : unit == "m"               ? 60'000
                         : unit == "h"               ? 3'600'000
                                                     : -1;
    if (scale < 0 || value < 0 || value * scale > 7 * 86'400'000.0) throw std::invalid_argument("");
    return static_cast<int64_t>(value * scale);
  } catch (const std::exception&) {
    throw std::invalid_argument(option + ": expected a duration like 90s, 5m or 2h, got \"" + text +
                                "\"");
  }
}

int explore_command(const ExploreOptions& options) {
  ExploreOptions o = options;  // --within-claims: the pins it resolves to, written out in full
  ExploreSpace space;
  try {
    const FaultSupport support = machine_fault_support();
    if (o.within_claims) {
      ClaimedPins claimed = pins_within_claims(o.pins, support);
      o.pins = std::move(claimed.pins);
      o.within_claims = false;
      for (const std::string& kind : claimed.left_out) {
        std::cerr << "locklab explore: --within-claims: leaving out " << kind << "\n";
      }
    }
    space = make_space(o.pins, support, machine_client_support());
  } catch (const std::exception& e) {
    std::cerr << "locklab explore: " << e.what() << "\n";
    return 2;
  }
  const uint64_t seed = o.seed ? *o.seed : std::random_device{}();
  const fs::path out =
      o.out_dir.empty() ? fs::path("results/explore") / utc_stamp() : fs::path(o.out_dir);
  install_interrupt_handlers();
  try {
    Exploration exploration(o, std::move(space), seed, out);
    return exploration.run();
  } catch (const std::exception& e) {
    std::cerr << "locklab explore: " << e.what() << "\n";
    return 2;
  }
}

int merge_command(const std::vector<std::string>& dirs, const std::string& out_dir) {
  try {
    std::vector<nlohmann::json> all;
    for (const std::string& dir : dirs) {
      const fs::path path = fs::path(dir) / "summary.json";
      std::ifstream in(path);
      if (!in) throw std::invalid_argument("cannot read " + path.string());
      try {
        all.push_back(nlohmann::json::parse(in));
        merge_summaries({all.back()});  // each alone first: a bad key's error names its file
      } catch (const std::exception& e) {
        throw std::invalid_argument(path.string() + ": " + e.what());
      }
    }
    const nlohmann::json merged = merge_summaries(all);
    fs::create_directories(out_dir);
    write_file(fs::path(out_dir) / "summary.json", merged.dump(2) + "\n");
    write_file(fs::path(out_dir) / "summary.md", summary_markdown(merged));
    const ExploreVerdict verdict = explore_verdict(merged);
    std::cerr << "explore: merged " << dirs.size() << " summaries: " << verdict.line << "; "
              << (fs::path(out_dir) / "summary.md").string() << std::endl;
    if (!merged["shards_missing"].empty()) {
      std::cerr << "explore: shards " << merged["shards_missing"].dump()
                << " of the split are not among the summaries: the merge covers part of the "
                   "exploration"
                << std::endl;
    }
    return verdict.exit_code;
  } catch (const std::exception& e) {
    std::cerr << "locklab explore --merge: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace locklab
