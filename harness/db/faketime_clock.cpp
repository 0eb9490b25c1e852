#include "db/faketime_clock.h"

#include <semaphore.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "run/process.h"

namespace locklab {

void write_clock_file(const std::string& path, int64_t offset_ms) {
  char text[64];
  std::snprintf(text, sizeof text, "%s%lld.%03llds\n", offset_ms < 0 ? "-" : "+",
                static_cast<long long>(std::llabs(offset_ms) / 1000),
                static_cast<long long>(std::llabs(offset_ms) % 1000));
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write the faketime file " + path);
}

std::string ld_preload_list(const std::vector<std::string>& libraries) {
  std::string list;
  for (const std::string& path : libraries) {
    if (path.empty() || path.find_first_of(" :$") != std::string::npos) {
      throw std::runtime_error("cannot preload \"" + path +
                               "\": LD_PRELOAD cannot name an empty path or one with a space, "
                               "a colon or a $ (build or install locklab under a path without "
                               "them)");
    }
    list += (list.empty() ? "" : ":") + path;
  }
  return list;
}

std::vector<std::string> faketime_environment(const std::string& preload,
                                              const std::string& timestamp_file) {
  return {"LD_PRELOAD=" + preload, "FAKETIME_DONT_FAKE_MONOTONIC=1",
          "FAKETIME_TIMESTAMP_FILE=" + timestamp_file, "FAKETIME_NO_CACHE=1"};
}

void remove_faketime_files(pid_t creator) {
  const std::string pid = std::to_string(creator);
  ::sem_unlink(("/faketime_sem_" + pid).c_str());
  ::shm_unlink(("/faketime_shm_" + pid).c_str());
}

namespace {

constexpr const char* kNotedProcessesFile = "/faketime-processes";
constexpr int kNotedProcessesMax = 100'000;

}  // namespace

void note_faketime_process(const std::string& dir, pid_t pid) {
  const std::string path = dir + kNotedProcessesFile;
  // Only a child of ours seen through a /proc of our own PID namespace is noted with its start
  // time; otherwise (a /proc the sandbox could not remount) /proc/<pid> may be someone else, and
  // 0 means: never signal it.
  const std::optional<ProcessStat> stat = process_stat(pid);
  const uint64_t start = stat && stat->parent == ::getpid() ? stat->start_ticks : 0;
  std::ofstream out(path, std::ios::app);
  out << pid << ' ' << start << '\n';
  out.flush();
  if (!out) throw std::runtime_error("cannot note a faketime process in " + path);
}

int end_noted_faketime_processes(const std::string& dir) {
  std::ifstream in(dir + kNotedProcessesFile);
  int removed = 0;
  pid_t pid = 0;
  uint64_t noted_start = 0;
  for (int n = 0; n < kNotedProcessesMax && in >> pid >> noted_start; ++n) {
    if (pid <= 0) continue;
    const std::optional<ProcessStat> now = process_stat(pid);
    if (now && (noted_start == 0 || now->start_ticks != noted_start)) continue;  // not ours
    if (noted_start != 0) {
      // Its group too: the faketime program's child (the member proper) outlives it otherwise.
      // A pid stays reserved while a group of that number has members, so a group found here
      // is still the noted process's own.
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
    }
    remove_faketime_files(pid);
    ++removed;
  }
  return removed;
}

}  // namespace locklab
