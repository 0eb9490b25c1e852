#include "run/noted_processes.h"

#include <signal.h>
#include <sys/stat.h>
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

// The inode of this process's PID namespace, 0 when it cannot be read.
uint64_t own_pid_namespace() {
  struct stat st {};
  return ::stat("/proc/self/ns/pid", &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

// Owned by this process's effective user, of the given type, writable by nobody else.
bool owned_and_private(const std::string& path, mode_t type) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == type &&
         st.st_uid == ::geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

}  // namespace

void note_run_process(const std::string& dir, pid_t pid, bool under_faketime) {
  const std::optional<ProcessStat> stat = process_stat(pid);
  const uint64_t start = stat && stat->parent == ::getpid() ? stat->start_ticks : 0;
  append_line(dir, "+ " + std::to_string(pid) + " " + std::to_string(start) + " " +
                       (under_faketime ? "1" : "0") + " " + std::to_string(own_pid_namespace()));
}

void note_run_process_ended(const std::string& dir, pid_t pid) {
  append_line(dir, "- " + std::to_string(pid));
}

namespace {

struct Noted {
  pid_t pid = 0;
  uint64_t start = 0;
  bool under_faketime = false;
  uint64_t pid_namespace = 0;
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
      if (!(in >> entry.pid >> entry.start >> faketime >> entry.pid_namespace)) break;
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

int end_noted_processes(const std::string& dir, GoneGroups gone) {
  if (!owned_and_private(dir, S_IFDIR) || !owned_and_private(dir + kNotedProcessesFile, S_IFREG)) {
    return 0;
  }
  const uint64_t pid_namespace = own_pid_namespace();
  int ended = 0;
  for (const Noted& entry : read_noted(dir)) {
    if (entry.pid <= 0 || entry.ended) continue;
    if (pid_namespace == 0 || entry.pid_namespace != pid_namespace) continue;  // not our pids
    const std::optional<ProcessStat> now = process_stat(entry.pid);
    if (now && (entry.start == 0 || now->start_ticks != entry.start)) continue;  // not ours
    if (entry.start != 0 && (now || gone == GoneGroups::kEnd)) {
      ::kill(-entry.pid, SIGKILL);
      ::kill(entry.pid, SIGKILL);
    }
    if (entry.under_faketime) remove_faketime_files(entry.pid);
    ++ended;
  }
  return ended;
}

}  // namespace locklab
