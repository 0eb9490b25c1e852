#include "config.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <stdexcept>

namespace lockbench {
namespace {

template <typename T>
void check_each(const std::vector<T>& values, const char* flag, T lo, T hi) {
  for (T v : values) {
    if (v < lo || v > hi) {
      throw std::invalid_argument(std::string(flag) + ": " + std::to_string(v) + " is not in [" +
                                  std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
  }
}

std::vector<Mode> modes_of(const std::vector<std::string>& names) {
  std::vector<Mode> out;
  for (const std::string& n : names) {
    if (n == "threads") {
      out.push_back(Mode::kThreads);
    } else if (n == "processes") {
      out.push_back(Mode::kProcesses);
    } else {
      throw std::invalid_argument("--mode: '" + n + "' is neither threads nor processes");
    }
  }
  return out;
}

struct Raw {
  std::vector<std::string> strategies, modes, slices;
  std::vector<int> contention, members, locks;
  std::vector<int64_t> holds;
};

// Fills what the command line left out: the defaults, or --quick's tiny grid.
void defaults(Config& c, Raw& r, bool quick) {
  if (r.contention.empty()) {
    r.contention = quick ? std::vector<int>{1, 3} : std::vector<int>{1, 2, 4, 8, 16, 32, 64};
  }
  if (r.holds.empty()) r.holds = quick ? std::vector<int64_t>{1} : std::vector<int64_t>{0, 1, 10};
  if (r.members.empty()) r.members = {1};
  if (r.modes.empty()) r.modes = {"threads"};
  if (r.locks.empty()) r.locks = {1};
  if (r.slices.empty()) {
    r.slices = quick ? std::vector<std::string>{"processes", "locks"}
                     : std::vector<std::string>{"processes", "locks", "members"};
  }
  if (r.slices == std::vector<std::string>{"none"}) r.slices.clear();
  c.axes.strategies = r.strategies.empty() ? available_strategies() : pick_strategies(r.strategies);
}

void validate(const Config& c, const Raw& r) {
  check_each(r.contention, "--contention", 1, kContentionMax);
  check_each<int64_t>(r.holds, "--holds-ms", 0, kHoldMsMax);
  check_each(r.members, "--members", 1, 7);
  check_each(r.locks, "--locks", 1, kLocksMax);
  const RunSettings& s = c.settings;
  if (s.seconds_per_cell < kSecondsPerCellMin || s.seconds_per_cell > kSecondsPerCellMax) {
    throw std::invalid_argument("--seconds-per-cell: " + std::to_string(s.seconds_per_cell) +
                                " is not in [0.2, 600]");
  }
  if (s.gap_ms < 0 || s.gap_ms > kGapMsMax) {
    throw std::invalid_argument("--gap-ms: " + std::to_string(s.gap_ms) + " not in [0, 10000]");
  }
  if (s.busy_wait_min_ms < 1 || s.busy_wait_min_ms > s.busy_wait_max_ms ||
      s.busy_wait_max_ms > 60'000) {
    throw std::invalid_argument("--min-ms/--max-ms: need 1 <= min <= max <= 60000, got " +
                                std::to_string(s.busy_wait_min_ms) + " and " +
                                std::to_string(s.busy_wait_max_ms));
  }
  for (const std::string& slice : r.slices) {
    if (slice != "processes" && slice != "locks" && slice != "members") {
      throw std::invalid_argument("--slices: unknown slice '" + slice +
                                  "' (known: processes, locks, members, none)");
    }
  }
  if (!c.uri.empty() && r.members != std::vector<int>{1}) {
    throw std::invalid_argument(
        "--members: only for the mongosim that lockbench starts, not "
        "with --uri");
  }
}

}  // namespace

bool parse_config(int argc, char** argv, Config& c) {
  CLI::App app{"lockbench: mongolock's backoff strategies measured across contention"};
  Raw r;
  bool quick = false;
  double seconds = 0;
  app.add_option("--strategies", r.strategies, "strategies (default: every available one)")
      ->delimiter(',');
  app.add_option("--contention", r.contention, "contenders per cell")->delimiter(',');
  app.add_option("--holds-ms", r.holds, "hold times, ms")->delimiter(',');
  app.add_option("--members", r.members, "mongosim members (1, 3)")->delimiter(',');
  app.add_option("--mode", r.modes, "threads and/or processes")->delimiter(',');
  app.add_option("--locks", r.locks, "locks per cell (round-robin)")->delimiter(',');
  app.add_option("--slices", r.slices, "processes, locks, members or none")->delimiter(',');
  CLI::Option* seconds_given =
      app.add_option("--seconds-per-cell", seconds, "measured seconds per cell (default 4)");
  app.add_option("--gap-ms", c.settings.gap_ms, "work between release and next acquire");
  app.add_option("--min-ms", c.settings.busy_wait_min_ms, "Options::busy_wait_min_ms");
  app.add_option("--max-ms", c.settings.busy_wait_max_ms, "Options::busy_wait_max_ms");
  app.add_option("--uri", c.uri, "any MongoDB instead of a mongosim lockbench starts");
  app.add_option("--database", c.settings.database, "database of the lock collection");
  app.add_option("--out", c.out, "directory for lockbench.json");
  app.add_flag("--holds", c.holds, "also write each cell's raw records to OUT/holds/");
  app.add_flag("--quick", quick, "a tiny grid in seconds (the smoke test)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::cout << app.help();
    return false;
  } catch (const CLI::ParseError& e) {
    throw std::invalid_argument(e.what());
  }
  c.settings.seconds_per_cell = seconds_given->count() > 0 ? seconds : (quick ? 0.5 : 4.0);
  defaults(c, r, quick);
  validate(c, r);
  c.axes.contention = r.contention;
  c.axes.holds_ms = r.holds;
  c.axes.members = r.members;
  c.axes.modes = modes_of(r.modes);
  c.axes.locks = r.locks;
  c.axes.slices = r.slices;
  c.axes.quick = quick;
  c.axes.mongosim = c.uri.empty();
  for (int i = 0; i < argc; ++i) c.command_line += (i ? " " : "") + std::string(argv[i]);
  return true;
}

}  // namespace lockbench
