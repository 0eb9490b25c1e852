// locklab-square: a locklab worker (same flags and history events as locklab-worker) whose lock
// is the square/mongo-lock re-creation (square_lock.h): XLock, and SLock for the rw workload's
// readers. The library has no
// default TTL (a lock without one never expires, which no run could judge); --expiry-ms keeps
// locklab's default and is rounded up to whole seconds.
#include "client_run.h"
#include "square_lock.h"

int main(int argc, char** argv) {
  using namespace locklab::clients;
  SeedClient spec;
  spec.program = "locklab-square";
  spec.description = "a worker on a re-creation of square/mongo-lock (XLock; SLock for rw readers)";
  spec.kinds = {"mutex", "counter", "rw"};
  spec.make_lock = [](const ClientConfig& c, Recorder& /*recorder*/) {
    return std::make_unique<square::SquareLock>(c.worker, c.max_shared);
  };
  return client_main(argc, argv, spec);
}
