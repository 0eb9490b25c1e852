// libFuzzer entry point for the wire target (clang builds with -DLOCKLAB_FUZZ=ON; see
// `make fuzz`). The seed corpus comes from fuzz_seed_corpus.
#include <cstddef>
#include <cstdint>

#include "fuzz/wire_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mongosim::fuzz::run_wire_input(data, size);
  return 0;
}
