// locklab-alistairjevans: a locklab worker (same flags and history events as locklab-worker)
// whose lock is the re-created MongoDB recipe of Alistair Evans's article (recipe_lock.h). Its
// --expiry-ms default is the recipe's one minute.
#include "client_run.h"
#include "recipe_lock.h"

int main(int argc, char** argv) {
  using namespace locklab::clients;
  SeedClient spec;
  spec.program = "locklab-alistairjevans";
  spec.description = "a worker on a re-creation of the alistairjevans MongoDB lock recipe";
  spec.kinds = {"mutex", "counter"};
  spec.defaults.expiry_ms = alistairjevans::kDefaultExpiryMs;
  spec.make_lock = [](const ClientConfig& c, Recorder& recorder) {
    return std::make_unique<alistairjevans::RecipeLock>(c.worker, recorder);
  };
  return client_main(argc, argv, spec);
}
