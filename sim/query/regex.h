// A $regex pattern, compiled by PCRE2 as mongod compiles its patterns (UTF-8; options i, m, s, x;
// u accepted), and searched within bounds: PCRE2 keeps its backtracking on the heap, not the
// stack (std::regex recursed once per character and a 20 KB subject ended the process), and a
// search that needs more than kMatchLimit backtracking steps or kHeapLimitKiB of memory is
// refused instead of running for minutes (docs/mongodb-behaviour.md, Query engine, Filters 6).
//
// Thread rules: a Regex is immutable after construction; search() may run on many threads at
// once (each call has its own match data).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace mongosim::query {

class Regex {
 public:
  // Steps of PCRE2's matching machine per search (its default is 10,000,000: seconds on a
  // pathological pattern here) and the heap its backtracking may use.
  static constexpr uint32_t kMatchLimit = 1'000'000;
  static constexpr uint32_t kHeapLimitKiB = 64 * 1024;

  // Throws CommandError 51091 for a pattern PCRE2 refuses, BadValue (2) for an unknown option.
  Regex(const std::string& pattern, const std::string& options);
  // Whether the pattern matches somewhere in `subject` (bytes that are not UTF-8 match nothing
  // but do not fail the search). Throws CommandError BadValue (2) when the search exceeds a limit.
  bool search(std::string_view subject) const;

 private:
  struct Compiled;
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace mongosim::query
