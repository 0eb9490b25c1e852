// lockbench: mongolock's backoff strategies measured across contention (run.h: the driver;
// config.h: the command line; child.h: the --child form processes mode re-executes).
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>

#include "child.h"
#include "config.h"
#include "run.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--child") == 0) return lockbench::child_main(argc, argv);
  lockbench::Config config;
  try {
    if (!lockbench::parse_config(argc, argv, config)) return 0;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "lockbench: %s\n(lockbench --help lists the flags)\n", e.what());
    return 2;
  }
  try {
    return lockbench::run(config);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lockbench: %s\n", e.what());
    return 1;
  }
}
