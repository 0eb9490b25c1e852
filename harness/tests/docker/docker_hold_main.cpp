// docker_hold: stands in for a harness that is killed mid-run. It acquires a Docker engine
// (starting dockerd when none is reachable), builds the run's image, starts a 1-member set,
// prints one line "ready <run id> <dockerd pid or 0> <daemon root or -> <network>" and then
// waits to be killed. The sweep test SIGKILLs it and checks that the next sweep leaves nothing.
//
// Usage: docker_hold <bin dir> <source dir> <work dir>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <string>

#include "db/docker_engine.h"
#include "db/docker_image.h"
#include "docker_set.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: docker_hold <bin dir> <source dir> <work dir>\n");
    return 2;
  }
  const std::string bin = argv[1];
  const std::string source = argv[2];
  const std::string work = argv[3];
  try {
    locklab::DockerEngine engine = locklab::DockerEngine::acquire();
    std::string run_id = "hold-" + std::to_string(getpid());
    const locklab::BuiltImage image = locklab::build_image(
        engine, {{bin + "/mongosim"}, source + "/docker/Dockerfile", work + "/image", run_id});
    locklab::DockerSetOptions options;
    options.image = image.image;
    options.members = 1;
    options.run_id = run_id;
    options.run_dir = work + "/set";
    locklab::DockerSet set(engine, options);
    set.start();
    std::printf("ready %s %d %s %s\n", run_id.c_str(), static_cast<int>(engine.dockerd_pid()),
                engine.root().empty() ? "-" : engine.root().c_str(), set.network().c_str());
    std::fflush(stdout);
    for (;;) pause();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "docker_hold: %s\n", e.what());
    return 1;
  }
}
