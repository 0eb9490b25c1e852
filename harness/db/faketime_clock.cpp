#include "db/faketime_clock.h"

#include <semaphore.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

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

}  // namespace locklab
