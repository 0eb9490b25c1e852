// A client declared by a file, `client.toml`, instead of a row of the client table
// (client/clients.h): any program that speaks the worker protocol (harness/WORKERS.md), in any
// language, judged without rebuilding locklab. Format (every key but `args`, `requires`,
// `available_if`, `description`, `lease_granularity_ms` and the claims_* keys required):
//
//   name = "python-lorehov"              # [a-z0-9-], 1..64 characters, unique among clients
//   description = "what lock, which library, which language"
//   program = "worker.py"                # relative to this file (or absolute); executable
//   workloads = ["mutex", "counter"]     # of mutex, fenced, counter, rw
//   fencing_tokens = false               # its acquire ok events carry a token
//   args = ["--flag", "value"]           # passed before the protocol's flags
//   requires = ["python3"]               # programs that must be on PATH
//   available_if = ["/usr/bin/python3", "-c", "import pymongo"]  # exits 0 where it can run
//   claims_faults = ["kill-worker", "step-down"]    # what it claims (clients.h ClientClaims):
//   claims_properties = ["exclusion.strict"]        #   both or neither, non-empty, known names
//   claims_write_concern = "majority"               #   optional: the one it needs ("1".."7")
//   claims_honour_lost = true                       #   optional: workers stop at lost
//
// A scenario names such a client by the manifest's path (`[workload] client =
// "path/to/client.toml"`, relative to the scenario file), or, for a manifest in the source
// tree's `clients/*/client.toml`, by its name; `locklab clients` lists those.
//
// Invariants: a registered row is never moved or removed, so the `ClientSpec*` handed out stays
// valid for the process's life (rows live in a deque); loading the same file twice returns the
// first row; a name is taken at most once across the table and every manifest.
// Thread rules: every function may be called from any thread (one mutex guards the registry);
// a forked child (explore's cases) inherits the registry as it was.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "client/clients.h"

namespace locklab {

// A manifest that cannot be used: "path:line: key: what".
struct ManifestError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Bounds on a manifest: a file, not a program.
constexpr size_t kManifestBytesMax = 64 * 1024;
constexpr size_t kManifestListMax = 32;  // entries of args, requires, available_if, workloads
constexpr size_t kClientNameMax = 64;

// A `client` value (a scenario's, a --client item) that is a path to a client manifest rather
// than a client's name.
bool names_a_manifest(std::string_view client);

// What a scenario written for `client` names it by: "" for a client of the table or a manifest
// of the source tree's clients/ (its name finds it in any process), else its manifest's
// canonical path (a name only finds it in the process that loaded the file).
std::string manifest_path_for_scenarios(const ClientSpec& client);

// Loads the manifest at `path`, registers its client and returns its row; the same file (by
// canonical path) returns the row registered first. Throws ManifestError.
const ClientSpec& load_client_manifest(const std::string& path);

// A registered manifest's row named `name`, or nullptr. Loads the source tree's manifests
// first (once).
const ClientSpec* find_manifest_client(std::string_view name);

// Every registered manifest's row, in load order, after loading the source tree's manifests.
std::vector<const ClientSpec*> manifest_clients();

// The source tree's manifests that could not be loaded, one error each (`locklab clients`
// shows them; a test keeps the tree free of them).
std::vector<std::string> source_manifest_errors();

// The canonical path of the manifest a row came from, or "" for a row of the table.
std::string manifest_path_of(const ClientSpec& client);

// What is wrong with a manifest's own program ("<path> not found", "<path> is not executable"),
// or "" (also for a row of the table). A mistake in the manifest, not a machine without a tool:
// `locklab run` refuses it as an error, where a missing `requires` or a failing `available_if`
// is "not run" (exit 77, which ctest counts as skipped).
std::string manifest_program_problem(const ClientSpec& client);

}  // namespace locklab
