// A $regex pattern, compiled by PCRE2 as mongod compiles its patterns (UTF-8; options i, m, s, x;
// u accepted), and searched as mongod searches: a search that fails (PCRE2's match limit of
// kMatchLimit steps reached, a subject that is not valid UTF-8) is no match. PCRE2 keeps its
// backtracking on the heap, not the stack: std::regex recursed once per character and a 20 KB
// subject ended the process, and it had no step limit (docs/mongodb-behaviour.md, Query engine,
// Filters 6).
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
  // Steps of PCRE2's matching machine per search: its default, which mongod keeps (about 0.3 s
  // of a pathological pattern here).
  static constexpr uint32_t kMatchLimit = 10'000'000;

  // Throws CommandError 51091 for a pattern PCRE2 refuses, 51108 for an unknown option, BadValue
  // (2) for a pattern with a NUL byte.
  Regex(const std::string& pattern, const std::string& options);
  // Whether the pattern matches somewhere in `subject`; false when the search fails.
  bool search(std::string_view subject) const;

 private:
  struct Compiled;
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace mongosim::query
