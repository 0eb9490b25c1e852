// Where the tests that run the real programs find them: LOCKLAB_BIN_DIR (set by CMake), and
// whether locklab, locklab-worker and mongosim are built there; a scenario run as tests run it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "run/process.h"

#ifndef LOCKLAB_BIN_DIR
#define LOCKLAB_BIN_DIR ""
#endif

namespace locklab::testing {

inline bool programs_built() {
  const std::string bin = LOCKLAB_BIN_DIR;
  return !bin.empty() && std::filesystem::exists(bin + "/locklab") &&
         std::filesystem::exists(bin + "/mongosim") &&
         std::filesystem::exists(bin + "/locklab-worker");
}

// `locklab run <scenario> --cluster loopback --seed 1 --out <out>`, ended after timeout_ms.
inline ToolResult run_on_loopback(const std::string& scenario, const std::string& out,
                                  int64_t timeout_ms) {
  return run_tool({std::string(LOCKLAB_BIN_DIR) + "/locklab", "run", scenario, "--cluster",
                   "loopback", "--seed", "1", "--out", out},
                  "", "", timeout_ms);
}

}  // namespace locklab::testing
