// The lock clients locklab can judge: one table, one row per client. A client is a worker
// executable that speaks the worker protocol (harness/WORKERS.md): the harness starts one per
// worker with the same command-line flags, and reads the history events it writes.
//
// A row names the client (the scenario's `[workload] client`), where its program is (an
// executable in the build's bin directory, or a script in the source tree), the workloads it can
// run, whether its grants carry fencing tokens, and a check that says why it cannot run here
// (a missing program, node not on PATH, a package not installed). Adding a client is adding one
// row to kClients in client/clients.cpp, or writing a manifest file (client/client_manifest.h),
// which needs no rebuild.
//
// Invariants: names are unique and non-empty; every row lists at least one workload;
// a client without fencing tokens never lists the fenced workload (its writes would carry no
// token to check). Thread rules: the table is immutable; every function here is a pure function
// of its arguments (availability looks at the file system and PATH).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace locklab {

// Where a client's program is looked for, and the PATH its tools are looked for on.
struct ClientEnvironment {
  std::string bin_dir;     // the build's bin directory (where locklab and locklab-worker are)
  std::string source_dir;  // the source tree (scripts of script clients)
  std::string path;        // $PATH
  // The running locklab's bin directory, the source tree it was built from, and $PATH.
  static ClientEnvironment current();
};

// Where `program` is relative to: the build's bin directory, the source tree, or nowhere (an
// absolute path: a client declared by a manifest, client/client_manifest.h).
enum class ProgramBase { kBinDir, kSourceDir, kAbsolute };

// What a lock claims: the properties it promises under the fault kinds it claims to survive, and
// the configuration it needs for that. `locklab explore --client C --within-claims` searches
// only there (explore/claims.h), so a finding there is a broken promise, not a known limit.
// Invariant (checked where a claim is declared: the table's self-check, a manifest's reader):
// faults and properties are non-empty lists of known names.
struct ClientClaims {
  std::vector<std::string_view> faults;      // fault kinds, as a scenario names them
  std::vector<std::string_view> properties;  // docs/properties.md names
  std::optional<int> write_concern_w;        // 0 = majority; unset: any
  std::optional<bool> honour_lost;           // workers stop at the lost notification; unset: any
};

struct ClientSpec {
  std::string_view name;         // the scenario's `[workload] client`
  std::string_view description;  // one line: what lock, which library, which language
  ProgramBase base = ProgramBase::kBinDir;
  std::string_view program;  // relative to base; started directly (scripts need a #! line)
  std::vector<std::string_view> workloads;  // "mutex", "fenced", "counter"...
  bool fencing_tokens = true;               // its acquire ok events carry a token
  bool self_test = false;                   // a misbehaving client for the harness's own tests
  // Why the client cannot run in `env` (e.g. "node not found on PATH"), or "" when it can.
  std::string (*unavailable)(const ClientSpec& client, const ClientEnvironment& env) = nullptr;
  std::vector<std::string_view> args = {};  // passed before the protocol's flags
  // The unit its lease comes in (npm's ttl is whole seconds: 1000), 0 = any length. locklab
  // explore draws such a client's critical sections over the lease it really grants.
  int64_t lease_granularity_ms = 0;
  std::optional<ClientClaims> claims = std::nullopt;  // unset: the client claims nothing
};
inline constexpr int64_t kLeaseGranularityMsMax = 3'600'000;

// The lease the client grants for a scenario's expiry_ms: rounded up to its granularity.
inline int64_t granted_lease_ms(const ClientSpec& client, int64_t expiry_ms) {
  const int64_t unit_ms = client.lease_granularity_ms;
  return unit_ms > 0 ? (expiry_ms + unit_ms - 1) / unit_ms * unit_ms : expiry_ms;
}
// granted_lease_ms of the scenario client named `name`; expiry_ms for a name no client has.
int64_t granted_lease_ms(std::string_view name, int64_t expiry_ms);

// The table's clients, lock clients first, in listing order (manifests: client_manifest.h).
const std::vector<ClientSpec>& all_clients();
// The table's row named `name`, or nullptr.
const ClientSpec* find_table_client(std::string_view name);
// The row named `name` in the table or among the registered manifests, or nullptr.
const ClientSpec* find_client(std::string_view name);
// "mongolock, npm-distributed-locks-mongodb, ..." (lock clients of the table and the registered
// manifests), for error messages.
std::string client_names();

// The absolute path of the client's program in env.
std::string client_program(const ClientSpec& client, const ClientEnvironment& env);
// Why the client cannot run in env, or "" when it can.
std::string client_unavailable(const ClientSpec& client, const ClientEnvironment& env);
bool client_runs(const ClientSpec& client, std::string_view workload);

// Why this client cannot be the scenario's client for this workload ("unknown client ...",
// "... cannot run the fenced workload ..."), or "" when it can. Availability is not judged here:
// it depends on the machine, not on the scenario.
std::string client_choice_error(std::string_view name, std::string_view workload);

// An executable called `name` in one of the colon-separated `path` directories, or "".
std::string find_on_path(std::string_view name, std::string_view path);

// "<path> not found", "<path> is not executable", or "" when the program can be run.
std::string program_problem(const std::string& path);

// Why `claims` cannot be a claim of a client running `workloads` with (or without) fencing
// tokens, or "": an empty list, an unknown or repeated fault kind or property, a property that
// no such run is judged on, a write concern outside majority and 1..7. `field`, when given, is
// set to the claim at fault: "faults", "properties" or "write_concern".
std::string claims_error(const ClientClaims& claims, const std::vector<std::string_view>& workloads,
                         bool fencing_tokens, std::string* field = nullptr);

// The `locklab clients` listing: every client (the table's and the manifests') with its
// workloads, tokens and availability ("yes" or "no: <reason>"), and any manifest of the source
// tree that could not be loaded.
std::string render_clients(const ClientEnvironment& env);

}  // namespace locklab
