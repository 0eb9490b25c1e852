// The matrix: which cells a run measures, from the command line.
//
// The main grid is the product of the axes (strategies x contention x holds x members x modes x
// locks). Slices add cells on one other axis each, at a few contention values and one hold,
// so that axis is seen without multiplying the grid by it:
//   processes  the same cells as contenders in separate processes
//   locks      kSliceLocks locks instead of one
//   members    a three-member set instead of one (mongosim only)
// A slice's cells whose axis values the main grid already has are not repeated.
//
// Default (no axis flag): main = every available strategy x {1,2,4,8,16,32,64} x {0,1,10} ms,
// threads, one lock, one member; slices at hold 1 ms: processes {2,8,32}, locks K=4 {8,32},
// members=3 {1,8,32}. That is 21 + 8 cells per strategy; at 4 s a cell and 3 strategies,
// 87 cells = 348 s of measurement (116 cells = 464 s with a fourth strategy), which with
// each cell's set-up and the servers' start leaves room within 10 minutes on 2 cores.
// --quick: threads {1,3} x hold 1 ms, slices processes {2} and locks K=2 {3}, 0.5 s cells.
// Order: the strategies are the innermost axis (each cell's strategies run one after another),
// so the strategies of one cell meet the server in the same state: a long run's mongosim keeps
// every write in its oplog (up to 200,000 entries, with their images) and grows meanwhile.
// Thread rules: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cell.h"

namespace lockbench {

inline constexpr int kSliceLocks = 4;
inline constexpr int kQuickSliceLocks = 2;
inline constexpr int64_t kSliceHoldMs = 1;

struct Axes {
  std::vector<const Strategy*> strategies;
  std::vector<int> contention;
  std::vector<int64_t> holds_ms;
  std::vector<int> members;
  std::vector<Mode> modes;
  std::vector<int> locks;
  std::vector<std::string> slices;  // of "processes", "locks", "members"
  bool quick = false;
  bool mongosim = true;  // false with --uri: no members slice
};

// Cells ordered by member count (each server is started once), then as listed; index = position.
std::vector<CellSpec> build_plan(const Axes& axes);

}  // namespace lockbench
