// lockbench's command line: the matrix axes, the run settings and where results go.
//
//   lockbench [--strategies a,b] [--contention 1,2,..] [--holds-ms 0,1,10] [--members 1,3]
//             [--mode threads,processes] [--locks K,..] [--slices processes,locks,members|none]
//             [--seconds-per-cell S] [--gap-ms G] [--min-ms A] [--max-ms B] [--uri URI]
//             [--database D] [--out DIR] [--holds] [--quick]
// Lists are comma-separated. Bad input throws std::invalid_argument naming the flag and value.
// Thread rules: plain values.
#pragma once

#include <string>
#include <vector>

#include "cell.h"
#include "plan.h"

namespace lockbench {

inline constexpr int kContentionMax = 100;  // a pooled client per thread (kPoolClientsMax)
inline constexpr int kLocksMax = 64;
inline constexpr int64_t kHoldMsMax = 10'000;
inline constexpr int64_t kGapMsMax = 10'000;
inline constexpr double kSecondsPerCellMin = 0.2;
inline constexpr double kSecondsPerCellMax = 600;

struct Config {
  Axes axes;
  RunSettings settings;
  std::string uri;  // empty: mongosim
  std::string out = "lockbench-out";
  bool holds = false;  // also write every cell's raw records (holds_file.h)
  std::string command_line;
};

// argv without the --child form (child.h handles that). Throws std::invalid_argument.
// Returns false when --help printed the usage (exit 0).
bool parse_config(int argc, char** argv, Config& config);

}  // namespace lockbench
