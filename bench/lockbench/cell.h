// One cell of the matrix: one strategy, mode, contention, lock count, hold and server, run for
// a fixed time, with the server's counters read before and after and the commands the lock
// clients sent counted by APM over the same window.
//
// The window: every contender's Provider exists and has made its first round trips (the index
// check of its first acquire, on a warm-up lock of its own) and no command is in flight before
// the first snapshot; every contender has finished (and, in processes mode, exited) before the
// second. So the lock commands the server counted between the snapshots are exactly the ones
// the clients sent between them.
// Threads mode: N threads share one Provider on one APM-counted pool (made for the cell, with
// a connection per contender opened before the window). Each thread warms up on its own warm-up
// lock, on its own thread, before the window, as each contender process does: a fresh thread's
// first acquire also pays for its allocator arena and first page touches (0.8 ms of CPU against
// 0.27 for its next, measured at 32 threads), and 32 of them at once would otherwise be the
// cell's first milliseconds.
// Processes mode: N children of lockbench (child.h), each with its own pool and Provider.
// Thread rules: run_cell runs on the main thread (the one that started the target).
#pragma once

#include <mongolock/mongolock.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "records.h"
#include "server.h"
#include "strategies.h"

namespace lockbench {

enum class Mode { kThreads, kProcesses };
const char* mode_name(Mode mode);

struct CellSpec {
  int index = 0;
  std::string plan;  // "main" or the slice's name
  const Strategy* strategy = nullptr;
  Mode mode = Mode::kThreads;
  int contenders = 1;
  int locks = 1;
  int64_t hold_ms = 0;
  int members = 1;
};

struct RunSettings {
  std::string database = "lockbench";
  std::string run_id;  // lock names: lb-<run_id>-<cell>-<lock>
  int64_t gap_ms = 5;  // work between a release and the next acquire
  int64_t busy_wait_min_ms = 10;
  int64_t busy_wait_max_ms = 800;
  int64_t expiry_ms = 30'000;
  double seconds_per_cell = 4;
  std::string self_exe;  // for processes mode
  std::string work_dir;  // children's report files
};

struct CellRaw {
  CellSpec spec;
  int64_t start_ns = 0;
  int64_t stop_ns = 0;
  std::vector<ContenderReport> contenders;
  ServerCount server;
  std::map<std::string, int64_t> client_commands;  // APM, summed over the contenders' pools
  std::optional<double> server_cpu_s;
  std::vector<std::string> errors;
};

// mongolock::Options for a cell's Providers.
mongolock::Options cell_options(const RunSettings& settings, const Strategy& strategy);
// lock < 0: the cell's warm-up lock.
std::string lock_name(const RunSettings& settings, int cell, int lock);
// One acquire and release of `name`: the Provider's first round trips (its index check) happen
// here, before a cell's window opens. Throws std::runtime_error when either fails.
void warm_up(mongolock::Provider& provider, const std::string& name);
// Makes the lock collection's TTL indexes once per server, with a Provider of its own
// (create_index on; its destructor joins its index threads), so that no cell's Provider sends
// index commands inside a window.
void prepare_server(const std::string& uri, const RunSettings& settings);

CellRaw run_cell(Target& target, const RunSettings& settings, const CellSpec& spec);

}  // namespace lockbench
