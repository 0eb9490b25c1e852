// Which database backend a run uses, and the check that it can inject every fault of the
// scenario before anything starts.
//
// choose_backend() reads --cluster, --mongod, --external-uri, --image and the scenario's
// cluster.backend (docker only from --cluster; it refuses, saying why, where Docker cannot run);
// make_db() builds the Db for that choice (construction starts nothing, so the preflight can
// ask it); preflight() asks Db::supports for every fault kind of the scenario, fixed windows and
// the random mix alike, and checks what the workers need (libfaketime for worker clocks).
// A new backend is one more case in choose_backend and make_db.
//
// Thread rules: the harness's main thread.
#pragma once

#include <memory>
#include <string>

#include "db/db.h"
#include "run/process.h"
#include "run/run.h"
#include "run/scenario.h"

namespace locklab {

struct BackendChoice {
  std::string name;           // "netns" or "loopback" (an external set runs on "loopback")
  std::string netns_refusal;  // why the netns backend cannot run here, when it was considered
};

// Throws std::runtime_error for contradictory options or a backend that cannot run here.
BackendChoice choose_backend(const RunOptions& options, const Scenario& scenario);

// The Db of the chosen backend for this scenario. `config` carries the run's directories and
// names (empty ones are fine for a preflight). Throws std::runtime_error for a bad
// --external-uri, naming the scenario file.
std::unique_ptr<Db> make_db(const RunOptions& options, const Scenario& scenario,
                            const BackendChoice& backend, DbConfig config, Supervisor& supervisor);

// DbConfig fields that follow from the scenario alone (members, workers, election timeout,
// whether member clocks move).
DbConfig scenario_db_config(const Scenario& scenario);

// Throws std::runtime_error "<file>:<line>: <fault> <why not>" for the first fault `db` cannot
// inject, or a missing worker-side tool.
void preflight(const Scenario& scenario, const Db& db);

// Worker clock faults need every worker started under libfaketime: its library, or "".
bool moves_worker_clocks(const Scenario& scenario);
std::string find_libfaketime();
// What a worker whose wall clock moves preloads (WorkerLaunch::faketime): the project's
// liblocklab-faketime-sleep.so (faketime_sleep_preload.cpp: Python's time.sleep fails under
// libfaketime alone), then libfaketime. "" when libfaketime is not installed; throws
// std::runtime_error naming the file when the project's library is missing beside locklab.
std::string worker_faketime_preload();

}  // namespace locklab
