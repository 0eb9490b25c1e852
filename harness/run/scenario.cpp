#include "run/scenario.h"

#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "checker/checker.h"
#include "client/client_manifest.h"
#include "client/clients.h"

namespace locklab {
namespace {

// Upper bounds on every number a scenario may set: a typo must not start a week-long run.
constexpr int64_t kMaxDurationMs = 3'600'000;
constexpr int64_t kMaxOperations = 1'000'000;
constexpr int kMaxWorkers = 64;
constexpr int kMaxMembers = 7;
constexpr int kMaxLocks = 64;
constexpr int64_t kMaxShared = 100'000;  // RwLock's own bound
constexpr size_t kMaxFaults = 1000;

// Reads one TOML table, remembering which keys were consumed so the rest can be reported as
// unknown with their line numbers.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string prefix, const std::string& file)
      : table_(table), prefix_(std::move(prefix)), file_(file) {}

  [[noreturn]] void fail(int line, std::string_view key, std::string_view what) const {
    std::ostringstream out;
    out << file_ << ':' << line << ": " << prefix_ << key << ": " << what;
    throw ScenarioError(out.str());
  }
  int line_of(std::string_view key) const {
    const toml::node* node = table_.get(key);
    return node ? static_cast<int>(node->source().begin.line) : line_;
  }
  void set_line(int line) { line_ = line; }

  const toml::node* take(std::string_view key) {
    seen_.insert(std::string(key));
    return table_.get(key);
  }

  int64_t integer(std::string_view key, int64_t fallback, int64_t min, int64_t max) {
    const toml::node* node = take(key);
    if (!node) return fallback;
    auto value = node->value<int64_t>();
    if (!node->is_integer() || !value) fail(line_of(key), key, "expected an integer");
    if (*value < min || *value > max) {
      fail(line_of(key), key,
           "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
               std::to_string(*value));
    }
    return *value;
  }

  double number(std::string_view key, double fallback, double min, double max) {
    const toml::node* node = take(key);
    if (!node) return fallback;
    auto value = node->value<double>();
    if (!value || !(node->is_floating_point() || node->is_integer())) {
      fail(line_of(key), key, "expected a number");
    }
    if (*value < min || *value > max) fail(line_of(key), key, "out of range");
    return *value;
  }

  bool boolean(std::string_view key, bool fallback) {
    const toml::node* node = take(key);
    if (!node) return fallback;
    if (!node->is_boolean()) fail(line_of(key), key, "expected true or false");
    return *node->value<bool>();
  }

  std::string string(std::string_view key, std::string fallback) {
    const toml::node* node = take(key);
    if (!node) return fallback;
    if (!node->is_string()) fail(line_of(key), key, "expected a string");
    return *node->value<std::string>();
  }

  std::string choice(std::string_view key, std::string fallback,
                     const std::vector<std::string>& allowed) {
    std::string value = string(key, fallback);
    if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + ("\"" + a + "\"");
      fail(line_of(key), key, "must be one of " + list + ", got \"" + value + "\"");
    }
    return value;
  }

  std::vector<std::string> strings(std::string_view key) {
    const toml::node* node = take(key);
    std::vector<std::string> out;
    if (!node) return out;
    const toml::array* array = node->as_array();
    if (!array) fail(line_of(key), key, "expected an array of strings");
    for (const toml::node& item : *array) {
      if (!item.is_string()) fail(line_of(key), key, "expected an array of strings");
      out.push_back(*item.value<std::string>());
    }
    return out;
  }

  const toml::table* subtable(std::string_view key) {
    const toml::node* node = take(key);
    if (!node) return nullptr;
    if (!node->is_table()) fail(line_of(key), key, "expected a table");
    return node->as_table();
  }

  void reject_unknown() const {
    for (auto&& [key, node] : table_) {
      if (!seen_.count(std::string(key.str()))) {
        fail(static_cast<int>(node.source().begin.line), key.str(), "unknown key");
      }
    }
  }

  const std::string& file() const { return file_; }
  const std::string& prefix() const { return prefix_; }

 private:
  const toml::table& table_;
  std::string prefix_;
  const std::string& file_;
  std::set<std::string> seen_;
  int line_ = 1;
};

ClusterSpec read_cluster(TableReader& r) {
  ClusterSpec c;
  c.members = static_cast<int>(r.integer("members", 1, 1, kMaxMembers));
  c.backend = r.choice("backend", "", {"", "netns", "loopback"});
  c.election_timeout_ms = r.integer("election_timeout_ms", 2000, 100, 60'000);
  r.reject_unknown();
  return c;
}

LockSpec read_lock(TableReader& r) {
  LockSpec l;
  l.expiry_ms = r.integer("expiry_ms", l.expiry_ms, 100, 600'000);
  l.extension_cadence_ms = r.integer("extension_cadence_ms", 0, 0, 600'000);
  if (l.extension_cadence_ms >= l.expiry_ms) {
    r.fail(r.line_of("extension_cadence_ms"), "extension_cadence_ms",
           "must be below expiry_ms (a renewal after expiry cannot keep the lease)");
  }
  l.backoff = *backoff_named(
      r.choice("backoff", "random",
               std::vector<std::string>(std::begin(kBackoffNames), std::end(kBackoffNames))));
  l.busy_wait_min_ms = r.integer("busy_wait_min_ms", l.busy_wait_min_ms, 1, 60'000);
  l.busy_wait_max_ms = r.integer("busy_wait_max_ms", l.busy_wait_max_ms, 1, 60'000);
  if (l.busy_wait_max_ms < l.busy_wait_min_ms) {
    r.fail(r.line_of("busy_wait_max_ms"), "busy_wait_max_ms", "must be >= busy_wait_min_ms");
  }
  const toml::node* wc = r.take("write_concern");
  if (wc) {
    if (wc->is_string() && *wc->value<std::string>() == "majority") {
      l.write_concern_w = 0;
    } else if (wc->is_integer() && *wc->value<int64_t>() >= 1 &&
               *wc->value<int64_t>() <= kMaxMembers) {
      l.write_concern_w = static_cast<int>(*wc->value<int64_t>());
    } else {
      r.fail(r.line_of("write_concern"), "write_concern", "must be \"majority\" or 1..7");
    }
  }
  l.fencing = r.boolean("fencing", true);
  l.max_shared = static_cast<int32_t>(r.integer("max_shared", 0, 0, kMaxShared));
  l.socket_timeout_ms = r.integer("socket_timeout_ms", 0, 0, 600'000);
  l.reap_after_s = r.integer("reap_after_s", -1, 0, 31'536'000);
  r.reject_unknown();
  return l;
}

WorkloadSpec read_workload(TableReader& r) {
  WorkloadSpec w;
  std::string kind = r.choice("kind", "mutex", {"mutex", "fenced", "counter", "rw"});
  w.kind = kind == "mutex"     ? WorkloadKind::kMutex
           : kind == "fenced"  ? WorkloadKind::kFenced
           : kind == "counter" ? WorkloadKind::kCounter
                               : WorkloadKind::kRw;
  w.client = r.string("client", w.client);
  if (r.take("client") != nullptr) w.client_line = r.line_of("client");
  if (names_a_manifest(w.client)) {
    // A client.toml path, relative to the scenario file: registered under its name.
    const std::filesystem::path manifest = std::filesystem::path(r.file()).parent_path() / w.client;
    try {
      const ClientSpec& row = load_client_manifest(manifest.string());
      w.client = std::string(row.name);
      w.client_manifest = manifest_path_of(row);
    } catch (const ManifestError& e) {
      r.fail(r.line_of("client"), "client", std::string("client manifest: ") + e.what());
    }
  }
  if (std::string e = client_choice_error(w.client, to_string(w.kind)); !e.empty()) {
    r.fail(r.line_of("client"), "client", e);
  }
  w.workers = static_cast<int>(r.integer("workers", w.workers, 1, kMaxWorkers));
  w.locks = static_cast<int>(r.integer("locks", w.locks, 1, kMaxLocks));
  w.critical_section_ms = r.integer("critical_section_ms", w.critical_section_ms, 0, 600'000);
  w.honour_lost = r.boolean("honour_lost", true);
  w.read_percent = static_cast<int>(r.integer("read_percent", w.read_percent, 0, 100));
  w.operations = r.integer("operations", 0, 0, kMaxOperations);
  w.duration_ms = r.integer("duration_ms", 0, 0, kMaxDurationMs);
  if ((w.operations == 0) == (w.duration_ms == 0)) {
    r.fail(r.line_of("duration_ms"), "operations|duration_ms", "set exactly one of the two");
  }
  r.reject_unknown();
  return w;
}

// The one place a fault kind's name becomes a FaultKind.
FaultKind check_fault_kind(TableReader& r, std::string_view key, const std::string& name) {
  const std::optional<FaultKind> kind = fault_kind_named(name);
  if (!kind) {
    r.fail(r.line_of(key), key,
           "unknown fault \"" + name + "\" (known: " + fault_kind_names() + ")");
  }
  return *kind;
}

// A fault's own parameters (e.g. fail-command's `mode`) become FaultSpec::params.
nlohmann::json read_fault_params(TableReader& r, const toml::table& table, FaultKind fault) {
  nlohmann::json params = nlohmann::json::object();
  const auto& allowed = fault_row(fault).keys;
  for (const std::string& key : allowed) {
    const toml::node* node = r.take(key);
    if (!node) continue;
    if (auto s = node->value_exact<std::string>()) {
      params[key] = *s;
    } else if (auto i = node->value_exact<int64_t>()) {
      params[key] = *i;
    } else if (auto b = node->value_exact<bool>()) {
      params[key] = *b;
    } else if (const toml::array* a = node->as_array()) {
      nlohmann::json list = nlohmann::json::array();
      for (const toml::node& item : *a) {
        auto s_item = item.value_exact<std::string>();
        if (!s_item) r.fail(r.line_of(key), key, "expected an array of strings");
        list.push_back(*s_item);
      }
      params[key] = list;
    } else {
      r.fail(r.line_of(key), key, "expected a string, integer, boolean or array of strings");
    }
  }
  (void)table;
  return params;
}

void validate_fault_params(TableReader& r, FaultKind fault, const nlohmann::json& p,
                           const Scenario& s) {
  if (auto e = fault_param_error(fault, p, s.cluster.members))
    r.fail(r.line_of(e->key), e->key, e->what);
}

FaultSpec read_fault(TableReader& r, const toml::table& table, const Scenario& s) {
  FaultSpec f;
  f.line = static_cast<int>(table.source().begin.line);
  r.set_line(f.line);
  f.fault = check_fault_kind(r, "fault", r.string("fault", ""));
  f.at_ms = r.integer("at_ms", 0, 0, kMaxDurationMs);
  f.duration_ms = r.integer("duration_ms", 0, 1, kMaxDurationMs);
  if (f.duration_ms == 0) r.fail(f.line, "duration_ms", "required (how long the fault lasts)");
  f.target = r.string("target", std::string(fault_row(f.fault).default_target));
  if (auto e = target_error(f.fault, f.target, s.cluster.members, s.workload.workers)) {
    r.fail(r.line_of("target"), "target", *e);
  }
  f.params = read_fault_params(r, table, f.fault);
  validate_fault_params(r, f.fault, f.params, s);
  r.reject_unknown();
  return f;
}

RandomMixSpec read_random(TableReader& r, const std::string& file, const Scenario& s) {
  RandomMixSpec m;
  const toml::table* faults = r.subtable("faults");
  if (!faults || faults->empty()) {
    r.fail(r.line_of("faults"), "faults", "required: a table of fault kind = weight");
  }
  TableReader weights(*faults, r.prefix() + "faults.", file);
  for (auto&& [key, node] : *faults) {
    weights.set_line(static_cast<int>(node.source().begin.line));
    const FaultKind kind = check_fault_kind(weights, key.str(), std::string(key.str()));
    m.weights[kind] = weights.number(key.str(), 0, 1e-9, 1e9);
  }
  m.target = r.string("target", "random");
  if (m.target != "random" && m.target != "holder") {
    r.fail(r.line_of("target"), "target", "must be \"random\" or \"holder\"");
  }
  for (const auto& [kind, w] : m.weights) {
    // Random windows carry no parameters: a kind that requires one cannot be drawn.
    if (auto e = fault_param_error(kind, nlohmann::json::object(), s.cluster.members)) {
      const std::string name(to_string(kind));
      weights.fail(weights.line_of(name), name, e->key + ": " + e->what);
    }
  }
  m.start_ms = r.integer("start_ms", m.start_ms, 0, kMaxDurationMs);
  m.end_ms = r.integer("end_ms", 0, 0, kMaxDurationMs);
  m.gap_min_ms = r.integer("gap_min_ms", m.gap_min_ms, 0, kMaxDurationMs);
  m.gap_max_ms = r.integer("gap_max_ms", m.gap_max_ms, m.gap_min_ms, kMaxDurationMs);
  m.duration_min_ms = r.integer("duration_min_ms", m.duration_min_ms, 1, kMaxDurationMs);
  m.duration_max_ms =
      r.integer("duration_max_ms", m.duration_max_ms, m.duration_min_ms, kMaxDurationMs);
  r.reject_unknown();
  return m;
}

NemesisSpec read_nemesis(TableReader& r, const std::string& file, const Scenario& s) {
  NemesisSpec n;
  n.quiet_ms = r.integer("quiet_ms", n.quiet_ms, 0, kMaxDurationMs);
  if (const toml::node* node = r.take("fault")) {
    const toml::array* faults = node->as_array();
    if (!faults) r.fail(r.line_of("fault"), "fault", "expected [[nemesis.fault]] entries");
    if (faults->size() > kMaxFaults) r.fail(r.line_of("fault"), "fault", "too many faults");
    for (const toml::node& entry : *faults) {
      const toml::table* table = entry.as_table();
      if (!table) r.fail(r.line_of("fault"), "fault", "expected [[nemesis.fault]] tables");
      TableReader fr(*table, "nemesis.fault.", file);
      n.schedule.push_back(read_fault(fr, *table, s));
    }
  }
  if (const toml::table* random = r.subtable("random")) {
    TableReader rr(*random, "nemesis.random.", file);
    rr.set_line(static_cast<int>(random->source().begin.line));
    n.random = read_random(rr, file, s);
  }
  r.reject_unknown();
  return n;
}

CheckSpec read_check(TableReader& r) {
  CheckSpec c;
  c.properties = r.strings("properties");
  for (const std::string& p : c.properties) {
    if (!is_known_property(p)) {
      r.fail(r.line_of("properties"), "properties", "unknown property \"" + p + "\"");
    }
  }
  c.liveness_bound_ms = r.integer("liveness_bound_ms", 0, 0, kMaxDurationMs);
  c.lost_signal_bound_ms = r.integer("lost_signal_bound_ms", 0, 0, kMaxDurationMs);
  r.reject_unknown();
  return c;
}

void read_expectation(TableReader& r, Scenario& s) {
  s.expect = r.choice("expect", "valid", {"valid", "invalid"}) == "valid" ? Expect::kValid
                                                                          : Expect::kInvalid;
  s.expect_violated = r.strings("expect_violated");
  s.expect_holding = r.strings("expect_holding");
  for (const char* key : {"expect_violated", "expect_holding"}) {
    const auto& list =
        std::string_view(key) == "expect_violated" ? s.expect_violated : s.expect_holding;
    for (const std::string& p : list) {
      if (!is_known_property(p)) {
        r.fail(r.line_of(key), key, "unknown property \"" + p + "\"");
      }
    }
  }
  if (s.expect == Expect::kValid && !s.expect_violated.empty()) {
    r.fail(r.line_of("expect_violated"), "expect_violated", "needs expect = \"invalid\"");
  }
  if (s.expect == Expect::kInvalid && s.expect_violated.empty()) {
    r.fail(r.line_of("expect"), "expect_violated",
           "expect = \"invalid\" must name the properties that must be violated");
  }
}

// Cross-table checks that need the whole scenario.
void validate_whole(TableReader& r, const Scenario& s) {
  const int64_t run_ms = s.workload.duration_ms;
  for (const FaultSpec& f : s.nemesis.schedule) {
    // A command delayed less than the socket timeout is only slow: the client waits it out.
    if (f.fault == FaultKind::kCommandDelay &&
        (s.lock.socket_timeout_ms == 0 ||
         f.params.value("delay_ms", int64_t{0}) <= s.lock.socket_timeout_ms)) {
      r.fail(f.line, "nemesis.fault.delay_ms",
             "command-delay needs lock.socket_timeout_ms set and below delay_ms");
    }
    if (run_ms > 0 && f.at_ms + f.duration_ms > run_ms) {
      r.fail(f.line, "nemesis.fault", "window ends after workload.duration_ms");
    }
  }
  if (s.nemesis.random && run_ms == 0 && s.nemesis.random->end_ms == 0) {
    r.fail(r.line_of("nemesis"), "nemesis.random.end_ms",
           "required when the workload is counted by operations");
  }
  // The seed clients wait their own way; only mongolock has the other strategies.
  if (s.lock.backoff != Backoff::kRandom && s.lock.backoff != Backoff::kAdaptive &&
      s.workload.client != "mongolock") {
    r.fail(r.line_of("lock"), "lock.backoff",
           "\"" + std::string(to_string(s.lock.backoff)) + "\" is mongolock's; client \"" +
               s.workload.client + "\" takes \"random\" or \"adaptive\"");
  }
}

}  // namespace

std::string_view to_string(Backoff backoff) {
  return kBackoffNames[static_cast<size_t>(backoff)];
}
std::optional<Backoff> backoff_named(std::string_view name) {
  for (size_t i = 0; i < std::size(kBackoffNames); ++i) {
    if (kBackoffNames[i] == name) return static_cast<Backoff>(i);
  }
  return std::nullopt;
}
std::string_view to_string(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kMutex:
      return "mutex";
    case WorkloadKind::kFenced:
      return "fenced";
    case WorkloadKind::kCounter:
      return "counter";
    case WorkloadKind::kRw:
      return "rw";
  }
  return "?";
}
std::string_view to_string(Expect expect) {
  return expect == Expect::kValid ? "valid" : "invalid";
}
std::string_view to_string(Tier tier) {
  return tier == Tier::kQuick ? "quick" : "long";
}

namespace {

toml::table parse_toml(std::string_view text, const std::string& path) {
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    std::ostringstream out;
    out << path << ':' << e.source().begin.line << ": syntax: " << e.description();
    throw ScenarioError(out.str());
  }
}

// One --set "table.key=value" applied to root; throws ScenarioError naming it.
void apply_override(toml::table& root, const std::string& assignment, const std::string& path) {
  const size_t equals = assignment.find('=');
  const std::string key = assignment.substr(0, equals);
  auto fail = [&](const std::string& why) {
    throw ScenarioError(path + ": --set " + assignment + ": " + why);
  };
  if (equals == std::string::npos || key.empty()) fail("expected TABLE.KEY=VALUE");
  const std::string value_text = assignment.substr(equals + 1);
  toml::table parsed;
  try {
    parsed = toml::parse("v = " + value_text);
  } catch (const toml::parse_error&) {
    parsed.insert_or_assign("v", value_text);  // not a TOML value: the text, as a string
  }
  toml::table* table = &root;
  std::string_view rest = key;
  for (size_t dot = rest.find('.'); dot != std::string_view::npos; dot = rest.find('.')) {
    const std::string part(rest.substr(0, dot));
    if (part.empty()) fail("an empty table name");
    if (!table->contains(part)) table->insert(part, toml::table{});
    table = (*table)[part].as_table();
    if (table == nullptr) fail("\"" + part + "\" is not a table");
    rest.remove_prefix(dot + 1);
  }
  if (rest.empty()) fail("an empty key");
  table->insert_or_assign(std::string(rest), *parsed.get("v"));
}

toml::table parse_with_overrides(std::string_view text, const std::string& path,
                                 const std::vector<std::string>& overrides) {
  toml::table root = parse_toml(text, path);
  for (const std::string& assignment : overrides) apply_override(root, assignment, path);
  return root;
}

std::string read_scenario_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path + ":0: cannot open the scenario file");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Scenario parse_scenario_table(toml::table root, const std::string& path);

}  // namespace

Scenario parse_scenario(std::string_view text, const std::string& path,
                        const std::vector<std::string>& overrides) {
  try {
    return parse_scenario_table(parse_with_overrides(text, path, overrides), path);
  } catch (const ScenarioError& e) {
    // A key a --set wrote has no line in the file ("path:0: workload.worker: ..."): name the
    // --set instead.
    const std::string what = e.what();
    for (const std::string& assignment : overrides) {
      // The error names the key, or a table the --set added ("nosuch: unknown key").
      const std::string key = assignment.substr(0, assignment.find('='));
      for (size_t end = key.size(); end != std::string::npos && end > 0;
           end = key.rfind('.', end - 1)) {
        const std::string prefix = path + ":0: " + key.substr(0, end) + ": ";
        if (what.starts_with(prefix)) {
          throw ScenarioError(path + ": --set " + assignment + ": " + what.substr(prefix.size()));
        }
      }
    }
    throw;
  }
}

namespace {

Scenario parse_scenario_table(toml::table root, const std::string& path) {
  Scenario s;
  s.path = path;
  TableReader top(root, "", path);
  s.name = top.string("name", std::filesystem::path(path).stem().string());
  s.description = top.string("description", "");
  s.tier = top.choice("tier", "quick", {"quick", "long"}) == "quick" ? Tier::kQuick : Tier::kLong;
  read_expectation(top, s);
  auto section = [&](const char* key, auto&& read) {
    const toml::table* table = top.subtable(key);
    toml::table empty;
    TableReader r(table ? *table : empty, std::string(key) + ".", path);
    read(r);
  };
  section("cluster", [&](TableReader& r) { s.cluster = read_cluster(r); });
  section("lock", [&](TableReader& r) { s.lock = read_lock(r); });
  section("workload", [&](TableReader& r) { s.workload = read_workload(r); });
  section("check", [&](TableReader& r) { s.check = read_check(r); });
  section("nemesis", [&](TableReader& r) { s.nemesis = read_nemesis(r, path, s); });
  top.reject_unknown();
  validate_whole(top, s);
  return s;
}

}  // namespace

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_scenario(read_scenario_file(path), path, overrides);
}

std::string scenario_text(const std::string& path, const std::vector<std::string>& overrides) {
  const std::string text = read_scenario_file(path);
  if (overrides.empty()) return text;
  std::ostringstream out;
  out << "# " << path << " with";
  for (const std::string& assignment : overrides) out << " --set " << assignment;
  out << "\n" << parse_with_overrides(text, path, overrides) << "\n";
  return out.str();
}

nlohmann::json to_json(const Scenario& s) {
  nlohmann::json schedule = nlohmann::json::array();
  for (const FaultSpec& f : s.nemesis.schedule) {
    schedule.push_back({{"at_ms", f.at_ms},
                        {"fault", to_string(f.fault)},
                        {"target", f.target},
                        {"duration_ms", f.duration_ms},
                        {"params", f.params}});
  }
  nlohmann::json random = nullptr;
  if (s.nemesis.random) {
    const RandomMixSpec& m = *s.nemesis.random;
    nlohmann::json weights = nlohmann::json::object();
    for (const auto& [kind, w] : m.weights) weights[std::string(to_string(kind))] = w;
    random = {{"faults", weights},
              {"target", m.target},
              {"start_ms", m.start_ms},
              {"end_ms", m.end_ms},
              {"gap_min_ms", m.gap_min_ms},
              {"gap_max_ms", m.gap_max_ms},
              {"duration_min_ms", m.duration_min_ms},
              {"duration_max_ms", m.duration_max_ms}};
  }
  return {
      {"name", s.name},
      {"description", s.description},
      {"expect", to_string(s.expect)},
      {"expect_violated", s.expect_violated},
      {"expect_holding", s.expect_holding},
      {"tier", to_string(s.tier)},
      {"cluster",
       {{"members", s.cluster.members},
        {"backend", s.cluster.backend},
        {"election_timeout_ms", s.cluster.election_timeout_ms}}},
      {"lock",
       {{"expiry_ms", s.lock.expiry_ms},
        {"extension_cadence_ms", s.lock.extension_cadence_ms},
        {"backoff", to_string(s.lock.backoff)},
        {"busy_wait_min_ms", s.lock.busy_wait_min_ms},
        {"busy_wait_max_ms", s.lock.busy_wait_max_ms},
        {"write_concern", s.lock.write_concern_w == 0 ? nlohmann::json("majority")
                                                      : nlohmann::json(s.lock.write_concern_w)},
        {"fencing", s.lock.fencing},
        {"max_shared", s.lock.max_shared},
        {"socket_timeout_ms", s.lock.socket_timeout_ms},
        {"reap_after_s", s.lock.reap_after_s}}},
      {"workload",
       {{"kind", to_string(s.workload.kind)},
        {"client", s.workload.client},
        {"client_manifest", s.workload.client_manifest},
        {"workers", s.workload.workers},
        {"locks", s.workload.locks},
        {"critical_section_ms", s.workload.critical_section_ms},
        {"honour_lost", s.workload.honour_lost},
        {"read_percent", s.workload.read_percent},
        {"operations", s.workload.operations},
        {"duration_ms", s.workload.duration_ms}}},
      {"nemesis", {{"quiet_ms", s.nemesis.quiet_ms}, {"fault", schedule}, {"random", random}}},
      {"check",
       {{"properties", s.check.properties},
        {"liveness_bound_ms", s.check.liveness_bound_ms},
        {"lost_signal_bound_ms", s.check.lost_signal_bound_ms}}},
  };
}

}  // namespace locklab
