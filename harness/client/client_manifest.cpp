// Clients declared by client.toml files (client/client_manifest.h).
#include "client/client_manifest.h"

#include <toml++/toml.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "run/process.h"

namespace locklab {
namespace {

namespace fs = std::filesystem;

// How long an `available_if` command may take: it is a probe, not a workload.
constexpr int64_t kAvailableIfTimeoutMs = 10'000;
// Bound on the source tree's client folders looked at.
constexpr size_t kSourceClientDirsMax = 256;

// A registered manifest: the strings its row's views point into, then the row.
struct Manifest {
  std::string path;  // canonical
  std::string name, description, program;
  std::vector<std::string> workloads, args, required_tools, available_if;
  std::vector<std::string_view> workload_views, arg_views;
  std::vector<std::string> claimed_faults, claimed_properties;  // claims_*: empty = no claims
  std::optional<int> claimed_write_concern_w;
  std::optional<bool> claimed_honour_lost;
  ClientSpec row;
};

struct Registry {
  std::mutex mutex;
  std::deque<Manifest> manifests;  // never erased: rows stay where they are
  bool source_loaded = false;
  std::vector<std::string> source_errors;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: rows outlive static destruction order
  return *r;
}

const Manifest* manifest_of(const ClientSpec& client) {
  for (const Manifest& m : registry().manifests) {
    if (&m.row == &client) return &m;
  }
  return nullptr;
}

// Why a manifest's client cannot run here, or "".
std::string manifest_client_missing(const ClientSpec& client, const ClientEnvironment& env) {
  const Manifest* m = nullptr;
  {
    std::lock_guard lock(registry().mutex);
    m = manifest_of(client);
  }
  if (m == nullptr) return "not a registered manifest client";
  for (const std::string& tool : m->required_tools) {
    if (find_on_path(tool, env.path).empty()) return tool + " not found on PATH";
  }
  if (std::string why = program_problem(m->program); !why.empty()) return why;
  if (m->available_if.empty()) return "";
  std::string command;
  for (const std::string& a : m->available_if) command += (command.empty() ? "" : " ") + a;
  try {
    const ToolResult r = run_tool(m->available_if, "", "", kAvailableIfTimeoutMs);
    if (r.code == 0) return "";
    std::string out = r.output;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    const size_t last = out.rfind('\n');
    return "available_if `" + command + "` exited " + std::to_string(r.code) +
           (out.empty() ? "" : ": " + out.substr(last == std::string::npos ? 0 : last + 1));
  } catch (const std::exception& e) {
    return "available_if `" + command + "` could not run: " + e.what();
  }
}

// Every key a manifest may set (client_manifest.h, Format).
constexpr std::array<std::string_view, 13> kKnownKeys = {"name",
                                                         "description",
                                                         "program",
                                                         "workloads",
                                                         "fencing_tokens",
                                                         "lease_granularity_ms",
                                                         "args",
                                                         "requires",
                                                         "available_if",
                                                         "claims_faults",
                                                         "claims_properties",
                                                         "claims_write_concern",
                                                         "claims_honour_lost"};

class ManifestReader {
 public:
  ManifestReader(const toml::table& table, std::string path)
      : table_(table), path_(std::move(path)) {}

  [[noreturn]] void fail(std::string_view key, std::string_view what) const {
    const toml::node* node = table_.get(key);
    const int line = node ? static_cast<int>(node->source().begin.line) : 0;
    std::ostringstream out;
    out << path_ << ':' << line << ": " << key << ": " << what;
    throw ManifestError(out.str());
  }

  // A required key that is missing: named, with the unknown keys that may be it misspelled.
  [[noreturn]] void fail_missing(std::string_view key) const {
    std::string unknown;
    for (const auto& [name, node] : table_) {
      if (std::find(kKnownKeys.begin(), kKnownKeys.end(), name.str()) != kKnownKeys.end()) continue;
      unknown += (unknown.empty() ? "; unknown key on line " : ", line ") +
                 std::to_string(node.source().begin.line) + ": " + std::string(name.str());
    }
    fail(key, "missing (a client manifest must set it" + unknown + ")");
  }

  std::string string(std::string_view key, bool required) {
    seen_.emplace_back(key);
    const toml::node* node = table_.get(key);
    if (node == nullptr) {
      if (required) fail_missing(key);
      return "";
    }
    if (!node->is_string()) fail(key, "expected a string");
    return *node->value<std::string>();
  }

  bool boolean(std::string_view key) {
    const std::optional<bool> value = optional_boolean(key);
    if (!value) fail_missing(key);
    return *value;
  }

  std::optional<bool> optional_boolean(std::string_view key) {
    seen_.emplace_back(key);
    const toml::node* node = table_.get(key);
    if (node == nullptr) return std::nullopt;
    if (!node->is_boolean()) fail(key, "expected true or false");
    return *node->value<bool>();
  }

  bool has(std::string_view key) const { return table_.get(key) != nullptr; }

  // An optional whole number in [lo, hi]; `fallback` when the key is absent.
  int64_t integer(std::string_view key, int64_t fallback, int64_t lo, int64_t hi) {
    seen_.emplace_back(key);
    const toml::node* node = table_.get(key);
    if (node == nullptr) return fallback;
    if (!node->is_integer()) fail(key, "expected a whole number");
    const int64_t value = *node->value<int64_t>();
    if (value < lo || value > hi) {
      fail(key, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                    std::to_string(value));
    }
    return value;
  }

  std::vector<std::string> strings(std::string_view key, bool required) {
    seen_.emplace_back(key);
    const toml::node* node = table_.get(key);
    if (node == nullptr) {
      if (required) fail_missing(key);
      return {};
    }
    const toml::array* array = node->as_array();
    if (array == nullptr) fail(key, "expected an array of strings");
    if (array->size() > kManifestListMax) {
      fail(key, "at most " + std::to_string(kManifestListMax) + " entries");
    }
    std::vector<std::string> out;
    for (const toml::node& item : *array) {
      if (!item.is_string()) fail(key, "expected an array of strings");
      out.push_back(*item.value<std::string>());
    }
    return out;
  }

  void reject_unknown() const {
    for (const auto& [key, node] : table_) {
      if (std::find(seen_.begin(), seen_.end(), key.str()) == seen_.end()) {
        std::string known;
        for (std::string_view k : kKnownKeys) known += (known.empty() ? "" : ", ") + std::string(k);
        std::ostringstream out;
        out << path_ << ':' << node.source().begin.line << ": " << key.str()
            << ": unknown key (known: " << known << ")";
        throw ManifestError(out.str());
      }
    }
  }

 private:
  const toml::table& table_;
  std::string path_;
  std::vector<std::string> seen_;
};

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > kClientNameMax) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

toml::table parse_manifest_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ManifestError(path + ":0: cannot open the client manifest");
  std::string text(kManifestBytesMax + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kManifestBytesMax) {
    throw ManifestError(path + ":0: a client manifest is at most " +
                        std::to_string(kManifestBytesMax) + " bytes");
  }
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    std::ostringstream out;
    out << path << ':' << e.source().begin.line << ": syntax: " << e.description();
    throw ManifestError(out.str());
  }
}

// The manifest's claims, as views into its strings (valid while `m` stays where it is).
ClientClaims claims_of(const Manifest& m) {
  ClientClaims claims;
  claims.faults.assign(m.claimed_faults.begin(), m.claimed_faults.end());
  claims.properties.assign(m.claimed_properties.begin(), m.claimed_properties.end());
  claims.write_concern_w = m.claimed_write_concern_w;
  claims.honour_lost = m.claimed_honour_lost;
  return claims;
}

// The claims_* keys: claims_faults and claims_properties together declare claims (each a
// non-empty list, clients.h claims_error); claims_write_concern and claims_honour_lost add to
// them. Any of them without the two lists is refused, naming the missing one.
void read_claims(ManifestReader& r, Manifest& m, bool tokens) {
  const bool declared = r.has("claims_faults") || r.has("claims_properties");
  if (declared && !r.has("claims_faults")) {
    r.fail("claims_faults", "missing: claims_properties needs it (the two declare claims)");
  }
  if (declared && !r.has("claims_properties")) {
    r.fail("claims_properties", "missing: claims_faults needs it (the two declare claims)");
  }
  m.claimed_faults = r.strings("claims_faults", false);
  m.claimed_properties = r.strings("claims_properties", false);
  const std::string w = r.string("claims_write_concern", false);
  m.claimed_honour_lost = r.optional_boolean("claims_honour_lost");
  if (r.has("claims_write_concern")) {
    if (w == "majority") {
      m.claimed_write_concern_w = 0;
    } else if (w.size() == 1 && w[0] >= '1' && w[0] <= '7') {
      m.claimed_write_concern_w = w[0] - '0';
    } else {
      r.fail("claims_write_concern", "expected \"majority\" or \"1\"..\"7\", got \"" + w + "\"");
    }
  }
  if (!declared) {
    if (r.has("claims_write_concern"))
      r.fail("claims_write_concern", "claims_faults and claims_properties missing");
    if (m.claimed_honour_lost)
      r.fail("claims_honour_lost", "claims_faults and claims_properties missing");
    return;
  }
  const ClientClaims claims = claims_of(m);
  const std::vector<std::string_view> workloads(m.workloads.begin(), m.workloads.end());
  std::string field;
  if (std::string why = claims_error(claims, workloads, tokens, &field); !why.empty()) {
    r.fail("claims_" + field, why);
  }
}

// Reads every key into `m` (its path already set); the row is built by the caller.
void read_manifest(const toml::table& table, Manifest& m) {
  ManifestReader r(table, m.path);
  m.name = r.string("name", true);
  if (!valid_name(m.name)) {
    r.fail("name", "\"" + m.name + "\": 1 to " + std::to_string(kClientNameMax) +
                       " characters of a-z, 0-9 and -");
  }
  m.description = r.string("description", false);
  const std::string program = r.string("program", true);
  if (program.empty()) r.fail("program", "empty");
  m.program = (fs::path(m.path).parent_path() / program).lexically_normal().string();
  m.workloads = r.strings("workloads", true);
  if (m.workloads.empty()) r.fail("workloads", "list at least one workload");
  for (const std::string& w : m.workloads) {
    if (w != "mutex" && w != "fenced" && w != "counter" && w != "rw") {
      r.fail("workloads", "unknown workload \"" + w + "\" (known: mutex, fenced, counter, rw)");
    }
  }
  const bool tokens = r.boolean("fencing_tokens");
  if (!tokens && std::find(m.workloads.begin(), m.workloads.end(), "fenced") != m.workloads.end()) {
    r.fail("workloads",
           "the fenced workload needs fencing_tokens = true (its resource checks "
           "the token)");
  }
  m.row.lease_granularity_ms = r.integer("lease_granularity_ms", 0, 0, kLeaseGranularityMsMax);
  m.args = r.strings("args", false);
  m.required_tools = r.strings("requires", false);
  m.available_if = r.strings("available_if", false);
  read_claims(r, m, tokens);
  r.reject_unknown();
  m.row.fencing_tokens = tokens;
}

void build_row(Manifest& m) {
  for (const std::string& w : m.workloads) m.workload_views.push_back(w);
  for (const std::string& a : m.args) m.arg_views.push_back(a);
  m.row.name = m.name;
  m.row.description = m.description.empty() ? std::string_view("(no description)")
                                            : std::string_view(m.description);
  m.row.base = ProgramBase::kAbsolute;
  m.row.program = m.program;
  m.row.workloads = m.workload_views;
  m.row.self_test = false;
  m.row.unavailable = manifest_client_missing;
  m.row.args = m.arg_views;
  if (!m.claimed_faults.empty()) m.row.claims = claims_of(m);
}

// Registers the manifest at canonical `path`; the registry's mutex is held.
const ClientSpec& register_locked(Registry& reg, const std::string& path) {
  for (const Manifest& m : reg.manifests) {
    if (m.path == path) return m.row;
  }
  Manifest m;
  m.path = path;
  read_manifest(parse_manifest_file(path), m);
  if (find_table_client(m.name) != nullptr) {
    throw ManifestError(path + ": name: \"" + m.name + "\" is already a client of the table");
  }
  for (const Manifest& other : reg.manifests) {
    if (other.name == m.name) {
      throw ManifestError(path + ": name: \"" + m.name + "\" is already the client of " +
                          other.path);
    }
  }
  Manifest& kept = reg.manifests.emplace_back(std::move(m));
  build_row(kept);  // after the move: the views point into the kept strings
  return kept.row;
}

void load_source_locked(Registry& reg) {
  if (reg.source_loaded) return;
  reg.source_loaded = true;
  const fs::path root = fs::path(ClientEnvironment::current().source_dir) / "clients";
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(root, ec), end;
       !ec && it != end && files.size() < kSourceClientDirsMax; it.increment(ec)) {
    const fs::path file = it->path() / "client.toml";
    if (fs::exists(file)) files.push_back(file);
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    try {
      register_locked(reg, fs::weakly_canonical(file).string());
    } catch (const ManifestError& e) {
      reg.source_errors.push_back(e.what());
    }
  }
}

}  // namespace

bool names_a_manifest(std::string_view client) {
  return client.find('/') != std::string_view::npos || client.ends_with(".toml");
}

std::string manifest_path_for_scenarios(const ClientSpec& client) {
  const std::string path = manifest_path_of(client);
  if (path.empty()) return "";
  std::error_code ec;
  const fs::path clients_dir =
      fs::weakly_canonical(fs::path(ClientEnvironment::current().source_dir) / "clients", ec);
  // Only clients/<dir>/client.toml is loaded by a fresh process (load_source_locked).
  const fs::path file(path);
  const bool loaded_anywhere =
      file.filename() == "client.toml" && file.parent_path().parent_path() == clients_dir;
  return !ec && loaded_anywhere ? "" : path;
}

const ClientSpec& load_client_manifest(const std::string& path) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(fs::absolute(path), ec);
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  load_source_locked(reg);
  return register_locked(reg, ec ? path : canonical.string());
}

const ClientSpec* find_manifest_client(std::string_view name) {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  load_source_locked(reg);
  for (const Manifest& m : reg.manifests) {
    if (m.name == name) return &m.row;
  }
  return nullptr;
}

std::vector<const ClientSpec*> manifest_clients() {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  load_source_locked(reg);
  std::vector<const ClientSpec*> out;
  for (const Manifest& m : reg.manifests) out.push_back(&m.row);
  return out;
}

std::vector<std::string> source_manifest_errors() {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  load_source_locked(reg);
  return reg.source_errors;
}

std::string manifest_path_of(const ClientSpec& client) {
  std::lock_guard lock(registry().mutex);
  const Manifest* m = manifest_of(client);
  return m ? m->path : "";
}

std::string manifest_program_problem(const ClientSpec& client) {
  std::string program;
  {
    std::lock_guard lock(registry().mutex);
    const Manifest* m = manifest_of(client);
    if (m == nullptr) return "";
    program = m->program;
  }
  return program_problem(program);
}

}  // namespace locklab
