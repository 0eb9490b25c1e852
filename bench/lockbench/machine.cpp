#include "machine.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace lockbench {

nlohmann::ordered_json load_average() {
  std::ifstream in("/proc/loadavg");
  double one = 0, five = 0, fifteen = 0;
  in >> one >> five >> fifteen;
  return {one, five, fifteen};
}

nlohmann::ordered_json machine_info() {
  std::string model = "unknown";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(colon + 2);
      break;
    }
  }
  utsname u{};
  uname(&u);
  return {{"cpu_model", model},
          {"cores_online", sysconf(_SC_NPROCESSORS_ONLN)},
          {"kernel", std::string(u.sysname) + " " + u.release + " " + u.machine}};
}

}  // namespace lockbench
