#include "query/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "base/command_error.h"
#include "base/error_codes.h"

namespace mongosim::query {
namespace {

std::string pcre2_message(int error) {
  PCRE2_UCHAR buffer[256];
  int n = pcre2_get_error_message(error, buffer, sizeof buffer);
  return n < 0 ? "PCRE2 error " + std::to_string(error)
               : std::string(reinterpret_cast<const char*>(buffer), static_cast<size_t>(n));
}

uint32_t compile_flags(const std::string& options) {
  uint32_t flags = PCRE2_UTF;
  for (char c : options) {
    if (c == 'i') {
      flags |= PCRE2_CASELESS;
    } else if (c == 'm') {
      flags |= PCRE2_MULTILINE;
    } else if (c == 's') {
      flags |= PCRE2_DOTALL;
    } else if (c == 'x') {
      flags |= PCRE2_EXTENDED;
    } else if (c != 'u') {
      throw CommandError(51108, std::string("$regex invalid flag in regex options: ") + c);
    }
  }
  return flags;
}

}  // namespace

struct Regex::Compiled {
  pcre2_code* code = nullptr;
  pcre2_match_context* limits = nullptr;
  ~Compiled() {
    pcre2_match_context_free(limits);
    pcre2_code_free(code);
  }
};

Regex::Regex(const std::string& pattern, const std::string& options) {
  if (pattern.find('\0') != std::string::npos) {
    throw CommandError(code::kBadValue, "Regular expression cannot contain an embedded null byte");
  }
  const uint32_t flags = compile_flags(options);
  int error = 0;
  PCRE2_SIZE offset = 0;
  auto compiled = std::make_shared<Compiled>();
  compiled->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                 flags, &error, &offset, nullptr);
  if (compiled->code == nullptr) {
    throw CommandError(51091, "Regular expression is invalid: " + pcre2_message(error));
  }
  compiled->limits = pcre2_match_context_create(nullptr);
  if (compiled->limits == nullptr) throw std::bad_alloc();
  pcre2_set_match_limit(compiled->limits, kMatchLimit);
  compiled_ = std::move(compiled);
}

bool Regex::search(std::string_view subject) const {
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create_from_pattern(compiled_->code, nullptr), &pcre2_match_data_free);
  if (!data) throw std::bad_alloc();
  const int rc = pcre2_match(compiled_->code, reinterpret_cast<PCRE2_SPTR>(subject.data()),
                             subject.size(), 0, 0, data.get(), compiled_->limits);
  // Any error (the step limit reached, a subject that is not UTF-8) is no match, as mongod counts
  // it.
  return rc >= 0;
}

}  // namespace mongosim::query
