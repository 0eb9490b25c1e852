// `locklab check RUN_DIR` (see run/check_command.h).
#include "run/check_command.h"

#include <exception>
#include <iostream>

#include "checker/history.h"
#include "report/outputs.h"
#include "report/summary.h"

namespace locklab {
namespace {

// The harness's worker-output events (run/worker_output.h): torn fragments of killed workers, and
// problems (bad lines left out of the history, workers that ended on their own).
struct WorkerOutputCount {
  size_t torn = 0;
  size_t bad = 0;
};
WorkerOutputCount count_worker_output(const std::vector<Event>& history) {
  WorkerOutputCount count;
  for (const Event& e : history) {
    if (e.process != "harness" || e.f != "worker-output" || !e.value.is_object()) continue;
    const auto torn = e.value.find("torn");
    if (torn != e.value.end() && torn->is_boolean() && torn->get<bool>()) {
      ++count.torn;
    } else {
      ++count.bad;
    }
  }
  return count;
}

CheckCommandResult check_directory(const std::string& run_dir, const CheckCommandOptions& options,
                                   std::ostream& out, std::ostream& err) {
  HistoryReadStats read_stats;
  std::vector<Event> history = read_history(run_dir + "/history.jsonl", &read_stats);
  CheckConfig config =
      options.config ? *options.config : config_from_history(history).value_or(CheckConfig{});
  CheckCommandResult result;
  result.verdict = check(history, config);
  // Dropped torn lines are reported, never silent: in the verdict and on stderr.
  result.verdict.stats.torn_fragments = read_stats.torn_fragments;
  if (read_stats.torn_fragments > 0)
    err << "locklab check: " << read_stats.torn_fragments
        << " torn line fragment(s) of killed writers dropped from the history\n";
  const WorkerOutputCount worker_output = count_worker_output(history);
  result.verdict.stats.torn_fragments += worker_output.torn;
  result.exit_code = exit_code(result.verdict.overall);
  if (worker_output.bad > 0) {
    // What a bad line said is missing from the history: no verdict can be trusted.
    result.exit_code = kExitError;
    result.error = std::to_string(worker_output.bad) +
                   " worker output problem(s): bad lines left out of the history or workers that "
                   "ended on their own (harness worker-output events name them); the verdict "
                   "cannot be trusted";
    err << "locklab check: " << result.error << "\n";
  }
  write_outputs(run_dir, history, result.verdict, OutputOptions{options.junit_path, "locklab"});
  out << render_summary_md(result.verdict) << "\ntimeline: " << run_dir << "/timeline.html\n"
      << "verdict:  " << run_dir << "/verdict.json\n";
  return result;
}

}  // namespace

CheckCommandResult run_check_command(const std::string& run_dir,
                                     const CheckCommandOptions& options) {
  std::ostream& out = options.out != nullptr ? *options.out : std::cout;
  std::ostream& err = options.err != nullptr ? *options.err : std::cerr;
  try {
    return check_directory(run_dir, options, out, err);
  } catch (const std::exception& error) {
    CheckCommandResult result;
    result.exit_code = kExitError;
    result.verdict.overall = Outcome::kUnknown;
    result.error = error.what();
    err << "locklab check: " << result.error << "\n";
    return result;
  }
}

int check_run_directory(const std::string& run_dir, const CheckCommandOptions& options) {
  return run_check_command(run_dir, options).exit_code;
}

}  // namespace locklab
