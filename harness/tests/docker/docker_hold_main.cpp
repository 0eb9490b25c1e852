// docker_hold: stands in for a harness that is killed mid-run. It starts a 1-member DockerDb
// (acquiring a Docker engine, starting dockerd when none is reachable, building the run's image),
// prints one line "ready <run id> <dockerd pid or 0> <daemon root or -> <network>" and then waits
// to be killed. The sweep test SIGKILLs it and checks that the next sweep leaves nothing.
//
// Usage: docker_hold <bin dir> <source dir> <work dir>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <string>

#include "db/docker_db.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: docker_hold <bin dir> <source dir> <work dir>\n");
    return 2;
  }
  const std::string bin = argv[1];
  const std::string source = argv[2];
  const std::string work = argv[3];
  try {
    locklab::DbConfig config;
    config.members = 1;
    config.run_prefix = "ll-" + std::to_string(getpid());
    config.data_dir = work + "/data";
    config.ready_timeout_ms = 120'000;
    locklab::DockerDbOptions options;
    options.programs = {bin + "/mongosim"};
    options.dockerfile = source + "/docker/Dockerfile";
    locklab::DockerDb db(config, options);
    db.start();
    const locklab::DockerEngine& engine = *db.engine();
    std::printf("ready %s %d %s %s\n", db.run_id().c_str(), static_cast<int>(engine.dockerd_pid()),
                engine.root().empty() ? "-" : engine.root().c_str(), db.network().c_str());
    std::fflush(stdout);
    for (;;) pause();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "docker_hold: %s\n", e.what());
    return 1;
  }
}
