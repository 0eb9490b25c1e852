#include "run/noted_processes.h"

#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "db/faketime_clock.h"
#include "run/process.h"

namespace locklab {
namespace {

constexpr const char* kNotedProcessesFile = "/processes";
constexpr int kNotedProcessesMax = 100'000;

void append_line(const std::string& dir, const std::string& line) {
  const std::string path = dir + kNotedProcessesFile;
  std::ofstream out(path, std::ios::app);
  out << line << '\n';
  out.flush();
  if (!out) throw std::runtime_error("cannot note a run's process in " + path);
}

}  // namespace

void note_run_process(const std::string& dir, pid_t pid, bool under_faketime) {
  const std::optional<ProcessStat> stat = process_stat(pid);
  const uint64_t start = stat && stat->parent == ::getpid() ? stat->start_ticks : 0;
  append_line(dir, "+ " + std::to_string(pid) + " " + std::to_string(start) + " " +
                       (under_faketime ? "1" : "0"));
}

void note_run_process_ended(const std::string& dir, pid_t pid) {
  append_line(dir, "- " + std::to_string(pid));
}

namespace {

struct Noted {
  pid_t pid = 0;
  uint64_t start = 0;
  bool under_faketime = false;
  bool ended = false;
};

std::vector<Noted> read_noted(const std::string& dir) {
  std::ifstream in(dir + kNotedProcessesFile);
  std::vector<Noted> noted;
  std::string mark;
  for (int n = 0; n < kNotedProcessesMax && in >> mark; ++n) {
    Noted entry;
    if (mark == "+") {
      int faketime = 0;
      if (!(in >> entry.pid >> entry.start >> faketime)) break;
      entry.under_faketime = faketime != 0;
      noted.push_back(entry);
    } else if (mark == "-") {
      if (!(in >> entry.pid)) break;
      // The latest start of that pid (a pid noted twice was reused in between).
      for (auto it = noted.rbegin(); it != noted.rend(); ++it) {
        if (it->pid == entry.pid) {
          it->ended = true;
          break;
        }
      }
    } else {
      break;  // not a line this file holds: stop rather than guess
    }
  }
  return noted;
}

}  // namespace

int end_noted_processes(const std::string& dir) {
  int ended = 0;
  for (const Noted& entry : read_noted(dir)) {
    if (entry.pid <= 0 || entry.ended) continue;
    const std::optional<ProcessStat> now = process_stat(entry.pid);
    if (now && (entry.start == 0 || now->start_ticks != entry.start)) continue;  // not ours
    if (entry.start != 0) {
      ::kill(-entry.pid, SIGKILL);
      ::kill(entry.pid, SIGKILL);
    }
    if (entry.under_faketime) remove_faketime_files(entry.pid);
    ++ended;
  }
  return ended;
}

}  // namespace locklab
