// locklab-distributedlock: a locklab worker (same flags and history events as locklab-worker)
// whose lock is the DistributedLock.MongoDB re-creation (distributed_lock.h). Its flag
// defaults are the library's: expiry 30 s, cadence a third of it, busy wait 10..800 ms.
#include "client_run.h"
#include "distributed_lock.h"

int main(int argc, char** argv) {
  using namespace locklab::clients;
  SeedClient spec;
  spec.program = "locklab-distributedlock";
  spec.description = "a worker on a re-creation of DistributedLock.MongoDB 1.0";
  spec.kinds = {"mutex", "fenced", "counter"};
  spec.defaults.expiry_ms = distributedlock::kDefaultExpiryMs;
  spec.defaults.extension_cadence_ms = 0;
  spec.defaults.busy_wait_min_ms = distributedlock::kDefaultBusyWaitMinMs;
  spec.defaults.busy_wait_max_ms = distributedlock::kDefaultBusyWaitMaxMs;
  spec.refuse = [](const ClientConfig& client) -> std::string {
    const locklab::WorkerConfig& c = client.worker;
    if (c.lock.backoff != locklab::Backoff::kRandom)
      return "--backoff adaptive: DistributedLock.MongoDB 1.0 has only the uniform random wait";
    const int64_t cadence =
        c.lock.extension_cadence_ms > 0 ? c.lock.extension_cadence_ms : c.lock.expiry_ms / 3;
    if (cadence >= c.lock.expiry_ms)
      return "--extension-cadence-ms " + std::to_string(cadence) + " must be below --expiry-ms " +
             std::to_string(c.lock.expiry_ms);
    return "";
  };
  spec.make_lock = [](const ClientConfig& c, Recorder& recorder) {
    return std::make_unique<distributedlock::DistributedLock>(c.worker, recorder);
  };
  return client_main(argc, argv, spec);
}
