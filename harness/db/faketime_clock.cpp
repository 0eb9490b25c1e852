#include "db/faketime_clock.h"

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

std::vector<std::string> faketime_environment(const std::string& preload,
                                              const std::string& timestamp_file) {
  return {"LD_PRELOAD=" + preload, "FAKETIME_DONT_FAKE_MONOTONIC=1",
          "FAKETIME_TIMESTAMP_FILE=" + timestamp_file, "FAKETIME_NO_CACHE=1"};
}

}  // namespace locklab
