// Where the tests that run the real programs find them: LOCKLAB_BIN_DIR (set by CMake), and
// whether locklab, locklab-worker and mongosim are built there.
#pragma once

#include <filesystem>
#include <string>

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

}  // namespace locklab::testing
