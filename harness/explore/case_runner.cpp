#include "explore/case_runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "explore/scenario_writer.h"
#include "run/files.h"
#include "run/run.h"

namespace locklab {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The last lines of the case's log that say why a run failed ("locklab: ..."), for the report.
std::string failure_lines(const fs::path& log) {
  std::istringstream in(read_text(log));
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("locklab: ", 0) == 0 && line.find("scenario ") == std::string::npos) {
      out += (out.empty() ? "" : " | ") + line;
    }
  }
  if (out.size() > 2000) out = out.substr(out.size() - 2000);  // the end says the most
  return out.empty() ? "no message; see " + log.string() : out;
}

// The child: run_scenario on the written scenario; never returns.
[[noreturn]] void run_child(const std::string& scenario_path, uint64_t seed, const fs::path& dir) {
  const std::string log = (dir / "locklab.log").string();
  FILE* out = std::freopen(log.c_str(), "w", stdout);
  if (out == nullptr || dup2(fileno(stdout), STDERR_FILENO) < 0) _exit(2);
  RunOptions options;
  options.scenario_path = scenario_path;
  options.seed = seed;
  options.out_dir = dir.string();
  int code = 2;
  try {
    code = run_scenario(options);
  } catch (const std::exception& e) {
    std::cerr << "locklab: run failed: " << e.what() << "\n";
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  _exit(code);
}

// Waits for the case's child; a signal to the explorer interrupts the wait, not the case.
int wait_child(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

}  // namespace

CaseOutcome classify_run(const std::string& run_dir, int exit_code) {
  const fs::path dir(run_dir);
  CaseOutcome o;
  o.run_dir = run_dir;
  if (exit_code == kExitNotRun) {
    o.verdict = CaseVerdict::kNotRun;
    o.detail = failure_lines(dir / "locklab.log");
    return o;
  }
  if (fs::exists(dir / kMemberDiedFile)) {
    o.verdict = CaseVerdict::kMemberDied;
    std::string line = read_text(dir / kMemberDiedFile);
    while (!line.empty() && line.back() == '\n') line.pop_back();
    o.detail = line;
    return o;
  }
  const bool judged = fs::exists(dir / "verdict.json") && !fs::exists(dir / "worker-problems.txt");
  if (judged && exit_code >= 0 && exit_code <= 3) {
    try {
      const nlohmann::json v = nlohmann::json::parse(read_text(dir / "verdict.json"));
      const std::string overall = v.at("outcome").get<std::string>();
      for (const auto& p : v.at("properties")) {
        if (p.at("outcome") == "invalid") o.violated.push_back(p.at("property").get<std::string>());
      }
      o.verdict = overall == "valid"     ? CaseVerdict::kValid
                  : overall == "invalid" ? CaseVerdict::kInvalid
                                         : CaseVerdict::kUnknown;
      return o;
    } catch (const std::exception& e) {
      o.detail = "unreadable verdict.json: " + std::string(e.what());
      return o;
    }
  }
  o.verdict = CaseVerdict::kHarnessError;
  o.detail = "exit " + std::to_string(exit_code) + ": " + failure_lines(dir / "locklab.log");
  return o;
}

CaseOutcome run_case(const Scenario& scenario, uint64_t seed, const std::string& run_dir) {
  const auto start = std::chrono::steady_clock::now();
  const fs::path dir(run_dir);
  fs::create_directories(dir);
  const std::string scenario_path = run_dir + ".toml";
  write_file(scenario_path, scenario_to_toml(scenario));
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork: " + std::string(std::strerror(errno)));
  if (pid == 0) run_child(scenario_path, seed, dir);
  write_file(dir / "pid", std::to_string(pid) + "\n");
  const int code = wait_child(pid);
  CaseOutcome o = classify_run(run_dir, code);
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return o;
}

}  // namespace locklab
