#include "run/noted_processes.h"

#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "db/faketime_clock.h"
#include "run/process.h"

namespace locklab {
namespace {

constexpr const char* kNotedProcessesFile = "/processes";
constexpr int kNotedProcessesMax = 100'000;

}  // namespace

void note_run_process(const std::string& dir, pid_t pid, bool under_faketime) {
  const std::string path = dir + kNotedProcessesFile;
  const std::optional<ProcessStat> stat = process_stat(pid);
  const uint64_t start = stat && stat->parent == ::getpid() ? stat->start_ticks : 0;
  std::ofstream out(path, std::ios::app);
  out << pid << ' ' << start << ' ' << (under_faketime ? 1 : 0) << '\n';
  out.flush();
  if (!out) throw std::runtime_error("cannot note a run's process in " + path);
}

int end_noted_processes(const std::string& dir) {
  std::ifstream in(dir + kNotedProcessesFile);
  int ended = 0;
  pid_t pid = 0;
  uint64_t noted_start = 0;
  int under_faketime = 0;
  for (int n = 0; n < kNotedProcessesMax && in >> pid >> noted_start >> under_faketime; ++n) {
    if (pid <= 0) continue;
    const std::optional<ProcessStat> now = process_stat(pid);
    if (now && (noted_start == 0 || now->start_ticks != noted_start)) continue;  // not ours
    if (noted_start != 0) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
    }
    if (under_faketime != 0) remove_faketime_files(pid);
    ++ended;
  }
  return ended;
}

}  // namespace locklab
