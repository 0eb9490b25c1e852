// libFuzzer entry point for a fuzz target (clang builds with -DLOCKLAB_FUZZ=ON; see `make fuzz`),
// built once per target with LOCKLAB_FUZZ_RUN naming its run function: fuzz_wire
// (run_wire_input, wire_target.h) and fuzz_peer (run_peer_input, peer_target.h). The seed corpora
// come from fuzz_seed_corpus. Half of the mutations are the structure-aware edit
// (bson_mutation.h), which retypes a body's element with every length fixed (a peer's script is
// OP_MSG frames too); the rest are libFuzzer's own byte edits.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "fuzz/bson_mutation.h"
#include "fuzz/peer_target.h"
#include "fuzz/wire_target.h"

#ifndef LOCKLAB_FUZZ_RUN
#error "LOCKLAB_FUZZ_RUN must name the target's run function"
#endif

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mongosim::fuzz::LOCKLAB_FUZZ_RUN(data, size);
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
