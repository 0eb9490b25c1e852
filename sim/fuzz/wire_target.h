// The wire fuzz target: one input is the byte stream a client sends on one connection. It runs
// through the real path a socket's bytes take in mongosim — framing, OP_MSG / OP_QUERY parsing,
// BSON decoding, command dispatch and the data commands against a fresh in-memory store — so a
// crash, an assertion, a sanitizer report or a hang anywhere on that path is a finding.
//
// Used by the libFuzzer entry point (wire_fuzz.cpp, clang builds with -DLOCKLAB_FUZZ=ON) and by
// the standalone corpus/mutation driver (fuzz_driver.cpp) that every build runs as a ctest.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mongosim::fuzz {

// Inputs longer than this are ignored: a stream this size already holds many messages, and a
// bound keeps every iteration fast.
inline constexpr size_t kMaxInputBytes = 256 * 1024;

// Serves `data` as one client connection on a fresh server and store, then tears both down.
void run_wire_input(const uint8_t* data, size_t size);

}  // namespace mongosim::fuzz
