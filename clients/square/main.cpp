// locklab-square: a locklab worker (same flags and history events as locklab-worker) whose lock
// is the square/mongo-lock re-creation (square_lock.h): XLock, and SLock for the rw workload's
// readers. The library has no
// default TTL (a lock without one never expires, which no run could judge); --expiry-ms keeps
// locklab's default and is rounded up to whole seconds.
//
// Its own flags, taken out before the protocol's: --without-unique-index (the client table's
// square-without-unique-index row) runs the lock on a collection without the unique
// {resource: 1} index its README requires; --without-ttl (row square-without-ttl) takes every
// lock with the library's default TTL of 0, so a lock is never expired: --expiry-ms is then
// ignored and each grant reports lease_ms 0.
#include <string_view>
#include <vector>

#include "client_run.h"
#include "db/admin.h"
#include "square_lock.h"

int main(int argc, char** argv) {
  using namespace locklab::clients;
  auto indexes = square::Indexes::kAsRequired;
  auto expiry = square::Expiry::kTtl;
  // The restart without /dev/shm execs this program again with the arguments it is given: the
  // whole command line, before the variant flags are taken out (and NULL-terminated, as execv
  // needs: the filtered list below is not).
  locklab::keep_driver_out_of_shm(argv);
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--without-unique-index") {
      indexes = square::Indexes::kWithoutUniqueResource;
    } else if (std::string_view(argv[i]) == "--without-ttl") {
      expiry = square::Expiry::kNone;
    } else {
      args.push_back(argv[i]);
    }
  }
  SeedClient spec;
  spec.program = "locklab-square";
  spec.description = "a worker on a re-creation of square/mongo-lock (XLock; SLock for rw readers)";
  spec.kinds = {"mutex", "counter", "rw"};
  spec.make_lock = [indexes, expiry](const ClientConfig& c, Recorder& /*recorder*/) {
    return std::make_unique<square::SquareLock>(c.worker, c.max_shared, indexes, expiry);
  };
  const int count = static_cast<int>(args.size());
  args.push_back(nullptr);  // argv[argc] is NULL
  return client_main(count, args.data(), spec);
}
