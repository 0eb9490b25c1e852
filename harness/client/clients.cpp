// The client table (client/clients.h) and what is derived from it.
#include "client/clients.h"

#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "checker/checker.h"
#include "client/client_manifest.h"
#include "nemesis/fault_kind.h"

#ifndef LOCKLAB_SOURCE_DIR
#define LOCKLAB_SOURCE_DIR "."
#endif

namespace locklab {
namespace {

namespace fs = std::filesystem;

// Bound on the PATH entries looked at: a runaway PATH must not make a lookup slow.
constexpr size_t kMaxPathEntries = 256;

// Availability checks, shared by rows.

// The program exists and is executable.
std::string program_missing(const ClientSpec& client, const ClientEnvironment& env) {
  return program_problem(client_program(client, env));
}

// A Node.js client: its script, node on PATH, and its npm packages installed next to it (by the
// install script in the client's directory).
std::string node_client_missing(const ClientSpec& client, const ClientEnvironment& env) {
  if (find_on_path("node", env.path).empty()) return "node not found on PATH";
  if (std::string why = program_missing(client, env); !why.empty()) return why;
  const fs::path dir = fs::path(client_program(client, env)).parent_path();
  // install.sh touches the stamp last, after npm ci and the seed package's extraction.
  if (!fs::exists(dir / "node_modules" / ".package-lock.json")) {
    return "its npm packages are not installed (run " + (dir / "install.sh").string() + ")";
  }
  return "";
}

// A Python script: python3 on PATH and the script.
std::string python_client_missing(const ClientSpec& client, const ClientEnvironment& env) {
  if (find_on_path("python3", env.path).empty()) return "python3 not found on PATH";
  return program_missing(client, env);
}

constexpr const char* kMisbehaving = "harness/tests/clients/misbehaving_worker.py";

// mongolock's claims, as lib/include/mongolock/mongolock.h states them: with majority writes and
// workers that stop at the lost notification, its tokens and the fenced resource hold under
// every fault but a member's clock moved (that breaks [clock-steps], [clock-rate] or
// [failover-clock]: the server decides on its own clock); a worker's wall clock decides nothing
// (its lease runs on steady_clock, which the worker clock faults leave alone). Not claimed:
// exclusion.strict,
// exclusion.rw and lost.signalled (a holder's request in flight when its lease lapses still
// lands: "the fenced resource must compare tokens"), counter.no-lost-updates (the counter is not
// fenced) and liveness.recovery (no bound after a heal is stated).
const ClientClaims kMongolockClaims = {
    {"isolate-worker", "pause-worker", "kill-worker", "fail-command", "command-delay",
     "clock-skew-worker", "clock-jump-worker", "partition-worker", "reply-delay", "pause-member",
     "kill-member", "isolate-member", "freeze", "partition-halves", "partition-ring",
     "partition-bridge", "step-down"},
    {"tokens.unique", "tokens.monotonic", "exclusion.fenced", "exclusion.rw-fenced"},
    0,
    true};

// The table. Adding a client is adding a row.
const std::vector<ClientSpec> kClients = {
    {"mongolock",
     "this project's lock library (C++, libmongoc): lib/",
     ProgramBase::kBinDir,
     "locklab-worker",
     {"mutex", "fenced", "counter", "rw"},
     true,
     false,
     program_missing,
     {},
     0,
     kMongolockClaims},
    {"npm-distributed-locks-mongodb",
     "npm distributed-locks-mongodb 1.0.3 (TypeScript) through a Node.js adapter",
     ProgramBase::kSourceDir,
     "clients/npm-distributed-locks-mongodb/worker.js",
     {"mutex", "counter"},
     false,
     false,
     node_client_missing,
     {},
     1000},
    {"distributedlock",
     "DistributedLock.MongoDB 1.0 (.NET) re-created in C++ on libmongoc: clients/distributedlock/",
     ProgramBase::kBinDir,
     "locklab-distributedlock",
     {"mutex", "fenced", "counter"},
     true,
     false,
     program_missing},
    {"square",
     "square/mongo-lock (Go; foomo/mongo-lock) re-created in C++ on libmongoc: clients/square/",
     ProgramBase::kBinDir,
     "locklab-square",
     {"mutex", "counter", "rw"},
     false,
     false,
     program_missing},
    {"square-without-unique-index",
     "square/mongo-lock re-created, on a collection without the unique {resource: 1} index its "
     "README requires (a misconfiguration): clients/square/",
     ProgramBase::kBinDir,
     "locklab-square",
     {"mutex", "counter"},
     false,
     false,
     program_missing,
     {"--without-unique-index"}},
    {"square-without-ttl",
     "square/mongo-lock re-created, every lock taken without a TTL (the library's default: such a "
     "lock never expires): clients/square/",
     ProgramBase::kBinDir,
     "locklab-square",
     {"mutex", "counter"},
     false,
     false,
     program_missing,
     {"--without-ttl"}},
    {"alistairjevans",
     "the alistairjevans MongoDB lock recipe (C#) re-created in C++ on libmongoc: "
     "clients/alistairjevans/",
     ProgramBase::kBinDir,
     "locklab-alistairjevans",
     {"mutex", "counter"},
     false,
     false,
     program_missing},
    // Self-test clients: each breaks the protocol one way (harness/tests/worker_output_test.cpp).
    {"test-truncated-line",
     "ends its output with a line cut short",
     ProgramBase::kSourceDir,
     kMisbehaving,
     {"mutex"},
     false,
     true,
     python_client_missing,
     {"--mode", "truncated"}},
    {"test-unknown-f",
     "writes an event with an unknown f",
     ProgramBase::kSourceDir,
     kMisbehaving,
     {"mutex"},
     false,
     true,
     python_client_missing,
     {"--mode", "unknown-f"}},
    {"test-non-json",
     "writes a line that is not JSON",
     ProgramBase::kSourceDir,
     kMisbehaving,
     {"mutex"},
     false,
     true,
     python_client_missing,
     {"--mode", "non-json"}},
    {"test-exit-at-once",
     "exits (status 3) before writing anything",
     ProgramBase::kSourceDir,
     kMisbehaving,
     {"mutex"},
     false,
     true,
     python_client_missing,
     {"--mode", "exit-at-once"}},
    {"test-oversized-line",
     "writes a line under the line limit that the history's encoding takes above it",
     ProgramBase::kSourceDir,
     kMisbehaving,
     {"mutex"},
     false,
     true,
     python_client_missing,
     {"--mode", "oversized"}},
    {"test-acquire-without-lock",
     "writes an acquire ok that does not name its lock",
     ProgramBase::kSourceDir,
     kMisbehaving,
     {"mutex"},
     false,
     true,
     python_client_missing,
     {"--mode", "no-lock"}},
    {"test-token-omitted",
     "issues fencing tokens, and writes an acquire ok without one",
     ProgramBase::kSourceDir,
     kMisbehaving,
     {"mutex"},
     true,
     true,
     python_client_missing,
     {"--mode", "token-omitted"}},
    {"test-events-to-stdout",
     "writes its events to stdout instead of its --history file",
     ProgramBase::kSourceDir,
     kMisbehaving,
     {"mutex"},
     false,
     true,
     python_client_missing,
     {"--mode", "stdout"}},
    {"test-ignores-sigterm",
     "writes good events and keeps running after SIGTERM, until SIGKILL",
     ProgramBase::kSourceDir,
     kMisbehaving,
     {"mutex"},
     false,
     true,
     python_client_missing,
     {"--mode", "ignore-term"}},
    {"test-silent",
     "writes nothing and never exits on its own, even in a run counted by operations",
     ProgramBase::kSourceDir,
     kMisbehaving,
     {"mutex"},
     false,
     true,
     python_client_missing,
     {"--mode", "silent"}},
    {"test-well-behaved",
     "writes good events, then sleeps in time.sleep until SIGTERM (a Python worker as a lock "
     "client would be, for the worker clock faults)",
     ProgramBase::kSourceDir,
     kMisbehaving,
     {"mutex"},
     false,
     true,
     python_client_missing,
     {"--mode", "good"}},
};

bool valid_table(const std::vector<ClientSpec>& table) {
  for (size_t i = 0; i < table.size(); ++i) {
    const ClientSpec& c = table[i];
    if (c.name.empty() || c.workloads.empty() || c.unavailable == nullptr) return false;
    if (c.claims && !claims_error(*c.claims, c.workloads, c.fencing_tokens).empty()) return false;
    if (!c.fencing_tokens &&
        std::find(c.workloads.begin(), c.workloads.end(), "fenced") != c.workloads.end()) {
      return false;
    }
    for (size_t j = 0; j < i; ++j) {
      if (table[j].name == c.name) return false;
    }
  }
  return true;
}

std::string join(const std::vector<std::string_view>& items, std::string_view separator) {
  std::string out;
  for (std::string_view item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

}  // namespace

std::string claims_error(const ClientClaims& claims, const std::vector<std::string_view>& workloads,
                         bool fencing_tokens, std::string* field) {
  const auto at = [field](const char* name, std::string what) {
    if (field != nullptr) *field = name;
    return what;
  };
  if (claims.faults.empty()) return at("faults", "claims no fault kind (list at least one)");
  if (claims.properties.empty()) return at("properties", "claims no property (list at least one)");
  for (size_t i = 0; i < claims.faults.size(); ++i) {
    const std::string_view kind = claims.faults[i];
    if (!fault_kind_named(kind)) {
      return at("faults", "unknown fault kind \"" + std::string(kind) +
                              "\" (known: " + fault_kind_names() + ")");
    }
    if (std::find(claims.faults.begin(), claims.faults.begin() + static_cast<long>(i), kind) !=
        claims.faults.begin() + static_cast<long>(i)) {
      return at("faults", "fault kind \"" + std::string(kind) + "\" listed twice");
    }
  }
  for (size_t i = 0; i < claims.properties.size(); ++i) {
    const std::string_view property = claims.properties[i];
    if (!is_known_property(property)) {
      return at("properties",
                "unknown property \"" + std::string(property) + "\" (docs/properties.md)");
    }
    const auto first = claims.properties.begin();
    if (std::find(first, first + static_cast<long>(i), property) != first + static_cast<long>(i)) {
      return at("properties", "property \"" + std::string(property) + "\" listed twice");
    }
    const bool judged = std::any_of(workloads.begin(), workloads.end(), [&](std::string_view w) {
      const std::vector<std::string> applying = properties_applying_to(w, fencing_tokens);
      return std::find(applying.begin(), applying.end(), property) != applying.end();
    });
    if (!judged) {
      return at("properties", "property \"" + std::string(property) +
                                  "\" is judged on none of its workloads (" +
                                  join(workloads, ", ") +
                                  (fencing_tokens ? "" : ", without fencing tokens") + ")");
    }
  }
  if (claims.write_concern_w && (*claims.write_concern_w < 0 || *claims.write_concern_w > 7)) {
    return at("write_concern", "write concern " + std::to_string(*claims.write_concern_w) +
                                   " outside majority and 1..7");
  }
  return "";
}

ClientEnvironment ClientEnvironment::current() {
  ClientEnvironment env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  env.bin_dir = ec ? "." : self.parent_path().string();
  env.source_dir = LOCKLAB_SOURCE_DIR;
  const char* path = std::getenv("PATH");
  env.path = path ? path : "";
  return env;
}

const std::vector<ClientSpec>& all_clients() {
  static const bool checked = [] {
    assert(valid_table(kClients));
    return true;
  }();
  (void)checked;
  return kClients;
}

const ClientSpec* find_table_client(std::string_view name) {
  for (const ClientSpec& c : all_clients()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

const ClientSpec* find_client(std::string_view name) {
  if (const ClientSpec* row = find_table_client(name); row != nullptr) return row;
  return find_manifest_client(name);
}

std::string client_names() {
  std::vector<std::string_view> names;
  for (const ClientSpec& c : all_clients()) {
    if (!c.self_test) names.push_back(c.name);
  }
  for (const ClientSpec* c : manifest_clients()) names.push_back(c->name);
  return join(names, ", ");
}

std::string client_program(const ClientSpec& client, const ClientEnvironment& env) {
  if (client.base == ProgramBase::kAbsolute) return std::string(client.program);
  const std::string& base = client.base == ProgramBase::kBinDir ? env.bin_dir : env.source_dir;
  return (fs::path(base) / client.program).string();
}

std::string client_unavailable(const ClientSpec& client, const ClientEnvironment& env) {
  assert(client.unavailable != nullptr);
  return client.unavailable(client, env);
}

int64_t granted_lease_ms(std::string_view name, int64_t expiry_ms) {
  const ClientSpec* client = find_client(name);
  return client == nullptr ? expiry_ms : granted_lease_ms(*client, expiry_ms);
}

bool client_runs(const ClientSpec& client, std::string_view workload) {
  return std::find(client.workloads.begin(), client.workloads.end(), workload) !=
         client.workloads.end();
}

std::string client_choice_error(std::string_view name, std::string_view workload) {
  const ClientSpec* client = find_client(name);
  if (client == nullptr) {
    return "unknown client \"" + std::string(name) + "\" (known: " + client_names() +
           "; `locklab clients` lists them)";
  }
  if (!client_runs(*client, workload)) {
    std::string why = "client \"" + std::string(name) + "\" cannot run the " +
                      std::string(workload) +
                      " workload (it runs: " + join(client->workloads, ", ") + ")";
    if (workload == "fenced" && !client->fencing_tokens) why += ": its lock issues no tokens";
    return why;
  }
  return "";
}

std::string program_problem(const std::string& path) {
  if (access(path.c_str(), F_OK) != 0) return path + " not found";
  if (access(path.c_str(), X_OK) != 0) return path + " is not executable";
  return "";
}

std::string find_on_path(std::string_view name, std::string_view path) {
  size_t start = 0;
  for (size_t entries = 0; start <= path.size() && entries < kMaxPathEntries; ++entries) {
    const size_t colon = path.find(':', start);
    const std::string_view dir = path.substr(
        start, colon == std::string_view::npos ? std::string_view::npos : colon - start);
    if (!dir.empty()) {
      const fs::path candidate = fs::path(dir) / name;
      if (access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) {
        return candidate.string();
      }
    }
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  return "";
}

namespace {

void render_client(std::ostringstream& out, const ClientSpec& c, const ClientEnvironment& env) {
  const std::string why = client_unavailable(c, env);
  out << c.name << "\n  " << c.description << "\n  workloads: " << join(c.workloads, ", ")
      << "; fencing tokens: " << (c.fencing_tokens ? "yes" : "no")
      << "\n  program: " << client_program(c, env);
  if (const std::string manifest = manifest_path_of(c); !manifest.empty()) {
    out << "\n  manifest: " << manifest;
  }
  if (c.claims) {
    const ClientClaims& k = *c.claims;
    out << "\n  claims (explore --within-claims): " << join(k.properties, ", ") << " under "
        << join(k.faults, ", ");
    if (k.write_concern_w) {
      out << "; write concern "
          << (*k.write_concern_w == 0 ? std::string("majority")
                                      : std::to_string(*k.write_concern_w));
    }
    if (k.honour_lost) out << "; honour_lost " << (*k.honour_lost ? "true" : "false");
  }
  out << "\n  available: " << (why.empty() ? "yes" : "no: " + why) << "\n";
}

}  // namespace

std::string render_clients(const ClientEnvironment& env) {
  std::ostringstream out;
  for (const ClientSpec& c : all_clients()) {
    if (!c.self_test) render_client(out, c, env);
  }
  for (const ClientSpec* c : manifest_clients()) render_client(out, *c, env);
  for (const std::string& error : source_manifest_errors()) {
    out << "(a client manifest that cannot be loaded) " << error << "\n";
  }
  out << "\nharness self-test clients (misbehave on purpose):\n";
  for (const ClientSpec& c : all_clients()) {
    if (c.self_test) render_client(out, c, env);
  }
  return out.str();
}

}  // namespace locklab
