#include "validation.h"

#include <string>

#include "mongolock/errors.h"

namespace mongolock::detail {

namespace {

// Length of the sequence a lead byte starts, or 0 if it cannot start one.
size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

bool is_continuation(unsigned char byte) {
  return (byte & 0xC0) == 0x80;
}

// The second byte's allowed range depends on the lead (excludes overlongs, surrogates, >U+10FFFF).
bool second_byte_ok(unsigned char lead, unsigned char second) {
  if (lead == 0xE0) return second >= 0xA0 && second <= 0xBF;
  if (lead == 0xED) return second >= 0x80 && second <= 0x9F;
  if (lead == 0xF0) return second >= 0x90 && second <= 0xBF;
  if (lead == 0xF4) return second >= 0x80 && second <= 0x8F;
  return is_continuation(second);
}

[[noreturn]] void fail(std::string_view what, const std::string& why) {
  throw InvalidArgument("mongolock: " + std::string(what) + " " + why);
}

}  // namespace

std::optional<size_t> first_invalid_utf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const size_t length = sequence_length(lead);
    if (length == 0 || i + length > text.size()) return i;
    if (length > 1 && !second_byte_ok(lead, static_cast<unsigned char>(text[i + 1]))) return i;
    for (size_t k = 2; k < length; ++k) {
      if (!is_continuation(static_cast<unsigned char>(text[i + k]))) return i;
    }
    i += length;
  }
  return std::nullopt;
}

void check_utf8_text(std::string_view what, std::string_view text, size_t bytes_max) {
  if (text.size() > bytes_max) {
    fail(what,
         "is " + std::to_string(text.size()) + " bytes; the limit is " + std::to_string(bytes_max));
  }
  if (auto bad = first_invalid_utf8(text)) {
    fail(what, "is not valid UTF-8 at byte " + std::to_string(*bad));
  }
  if (auto nul = text.find('\0'); nul != std::string_view::npos) {
    fail(what, "contains a NUL byte at byte " + std::to_string(nul));
  }
}

void check_lock_name(std::string_view name) {
  if (name.empty()) fail("lock name", "is empty");
  check_utf8_text("lock name", name, kLockNameBytesMax);
}

void check_collection_name(std::string_view what, std::string_view name) {
  if (name.empty()) fail(what, "is empty");
  check_utf8_text(what, name, kCollectionNameBytesMax);
  if (auto dollar = name.find('$'); dollar != std::string_view::npos) {
    fail(what, "'" + std::string(name) + "' contains '$' at byte " + std::to_string(dollar));
  }
  if (name.starts_with("system.")) fail(what, "'" + std::string(name) + "' starts with 'system.'");
}

void check_timeout(std::chrono::milliseconds timeout) {
  if (timeout.count() < 0) {
    fail("timeout", "is negative (" + std::to_string(timeout.count()) + " ms)");
  }
}

}  // namespace mongolock::detail
