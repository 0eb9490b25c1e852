// locklab-square: a locklab worker (same flags and history events as locklab-worker) whose lock
// is the square/mongo-lock re-creation's exclusive lock (square_lock.h). The library has no
// default TTL (a lock without one never expires, which no run could judge); --expiry-ms keeps
// locklab's default and is rounded up to whole seconds.
#include "client_run.h"
#include "square_lock.h"

int main(int argc, char** argv) {
  using namespace locklab::clients;
  SeedClient spec;
  spec.program = "locklab-square";
  spec.description = "a worker on a re-creation of square/mongo-lock (exclusive locks)";
  spec.kinds = {"mutex", "counter"};
  spec.make_lock = [](const locklab::WorkerConfig& c, Recorder& recorder) {
    return std::make_unique<square::SquareLock>(c, recorder);
  };
  return client_main(argc, argv, spec);
}
