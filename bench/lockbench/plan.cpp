#include "plan.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>

namespace lockbench {
namespace {

using Key = std::tuple<std::string, Mode, int, int, int64_t, int>;

Key key_of(const CellSpec& c) {
  return {std::string(c.strategy->name), c.mode, c.contenders, c.locks, c.hold_ms, c.members};
}

void add(std::vector<CellSpec>& cells, const CellSpec& cell) {
  for (const CellSpec& c : cells) {
    if (key_of(c) == key_of(cell)) return;
  }
  cells.push_back(cell);
}

void add_main(const Axes& a, std::vector<CellSpec>& cells) {
  for (int members : a.members) {
    for (Mode mode : a.modes) {
      for (int locks : a.locks) {
        for (int64_t hold : a.holds_ms) {
          for (int n : a.contention) {
            for (const Strategy* s : a.strategies) {
              add(cells, {0, "main", s, mode, n, locks, hold, members});
            }
          }
        }
      }
    }
  }
}

void add_slice(const Axes& a, const std::string& slice, std::vector<CellSpec>& cells) {
  const Mode mode = a.modes.front();
  const int locks = a.locks.front();
  const int members = a.members.front();
  if (slice != "processes" && slice != "locks" && slice != "members") {
    throw std::invalid_argument("--slices: unknown slice '" + slice +
                                "' (known: processes, locks, members, none)");
  }
  if (slice == "members" && !a.mongosim) return;  // --uri: the server is what it is
  std::vector<int> contention;
  if (slice == "processes") contention = a.quick ? std::vector<int>{2} : std::vector<int>{2, 8, 32};
  if (slice == "locks") contention = a.quick ? std::vector<int>{3} : std::vector<int>{8, 32};
  if (slice == "members") contention = a.quick ? std::vector<int>{1} : std::vector<int>{1, 8, 32};
  for (int n : contention) {
    for (const Strategy* s : a.strategies) {
      if (slice == "processes") {
        add(cells, {0, slice, s, Mode::kProcesses, n, locks, kSliceHoldMs, members});
      } else if (slice == "locks") {
        add(cells, {0, slice, s, mode, n, a.quick ? kQuickSliceLocks : kSliceLocks, kSliceHoldMs,
                    members});
      } else {
        add(cells, {0, slice, s, mode, n, locks, kSliceHoldMs, 3});
      }
    }
  }
}

}  // namespace

std::vector<CellSpec> build_plan(const Axes& axes) {
  if (axes.strategies.empty() || axes.contention.empty() || axes.holds_ms.empty() ||
      axes.members.empty() || axes.modes.empty() || axes.locks.empty()) {
    throw std::invalid_argument("an axis of the matrix is empty");
  }
  std::vector<CellSpec> cells;
  add_main(axes, cells);
  for (const std::string& slice : axes.slices) add_slice(axes, slice, cells);
  std::stable_sort(cells.begin(), cells.end(),
                   [](const CellSpec& a, const CellSpec& b) { return a.members < b.members; });
  for (size_t i = 0; i < cells.size(); ++i) cells[i].index = static_cast<int>(i);
  return cells;
}

}  // namespace lockbench
