// The --seed flag of `locklab run` and `locklab explore` as a CLI11 check: a whole number that
// fits in 64 bits, written in decimal digits only. CLI11's own conversion to uint64_t takes "-1"
// and clamps a number too large for 64 bits to the largest one, so a run would quietly use
// another seed than the one typed; this refuses both, naming the text.
#pragma once

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <string>

namespace locklab {

// "" when `text` is a seed; otherwise why not.
inline std::string seed_text_error(const std::string& text) {
  const std::string expected =
      "expected a whole number 0..18446744073709551615, got \"" + text + "\"";
  if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos)
    return expected;
  errno = 0;
  (void)std::strtoull(text.c_str(), nullptr, 10);
  return errno == ERANGE ? expected : std::string();
}

inline CLI::Validator seed_validator() {
  return CLI::Validator([](std::string& text) { return seed_text_error(text); }, "SEED");
}

}  // namespace locklab
