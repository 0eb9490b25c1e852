// The body of `locklab check RUN_DIR` (and the checking tail of `locklab run`): read
// RUN_DIR/history.jsonl, take the CheckConfig from its start event (or from the options),
// check it, write the reports into RUN_DIR, print the verdict table, return the exit code.
// Thread rules: call from one thread per directory.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "checker/checker.h"

namespace locklab {

struct CheckCommandOptions {
  std::string junit_path;             // --junit FILE; empty: none
  std::optional<CheckConfig> config;  // overrides the history's stored config
  std::ostream* out = nullptr;        // verdict table and paths; nullptr: std::cout
  std::ostream* err = nullptr;        // errors; nullptr: std::cerr
};

struct CheckCommandResult {
  Verdict verdict;
  // 0 valid, 1 violated, 3 unknown, 2 harness error or bad input (docs/properties.md).
  int exit_code = kExitError;
  std::string error;  // set when exit_code is kExitError
};

// Never throws: a missing or malformed history is a harness error (kExitError, named in
// result.error and printed to err).
CheckCommandResult run_check_command(const std::string& run_dir,
                                     const CheckCommandOptions& options);

// run_check_command(...).exit_code.
int check_run_directory(const std::string& run_dir, const CheckCommandOptions& options = {});

}  // namespace locklab
