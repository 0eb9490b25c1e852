// `locklab check RUN_DIR` (see check_command.h).
#include "check_command.h"

#include <exception>
#include <iostream>

#include "history.h"
#include "report_outputs.h"
#include "report_summary.h"

namespace locklab {
namespace {

CheckCommandResult check_directory(const std::string& run_dir, const CheckCommandOptions& options,
                                   std::ostream& out) {
  std::vector<Event> history = read_history(run_dir + "/history.jsonl");
  CheckConfig config =
      options.config ? *options.config : config_from_history(history).value_or(CheckConfig{});
  CheckCommandResult result;
  result.verdict = check(history, config);
  result.exit_code = exit_code(result.verdict.overall);
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
    return check_directory(run_dir, options, out);
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
