// libFuzzer entry point for the peer target (peer_target.h; clang builds with -DLOCKLAB_FUZZ=ON,
// `make fuzz-peer`). The seed corpus comes from fuzz_seed_corpus's PEER_DIR. Half of the
// mutations are the structure-aware edit (bson_mutation.h: a script is OP_MSG frames too), the
// rest libFuzzer's own byte edits. A run takes up to kPeerBudgetMs of the member's own timers.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "fuzz/bson_mutation.h"
#include "fuzz/peer_target.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mongosim::fuzz::run_peer_input(data, size);
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::mt19937_64 rng(seed);
  if (rng() % 2 == 0) {
    std::vector<uint8_t> in(data, data + size);
    if (mongosim::fuzz::edit_one_element(in, rng) && in.size() <= max_size) {
      std::memcpy(data, in.data(), in.size());
      return in.size();
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
