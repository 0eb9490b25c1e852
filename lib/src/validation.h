// Input validation shared by every entry point: names, UTF-8, timeouts.
//
// All checks run before any round trip and throw InvalidArgument with a message that names the
// argument, the limit and the offending position.
// Thread rules: pure functions.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>

namespace mongolock::detail {

inline constexpr size_t kLockNameBytesMax = 1024;
inline constexpr size_t kCollectionNameBytesMax = 120;
inline constexpr size_t kDescriptionBytesMax = 1024;

// Byte offset of the first byte that is not part of a well-formed UTF-8 sequence (overlong
// forms, surrogates and code points above U+10FFFF are ill-formed), or nullopt if valid.
std::optional<size_t> first_invalid_utf8(std::string_view text);

// what: the argument's name for the message, e.g. "lock name".
void check_utf8_text(std::string_view what, std::string_view text, size_t bytes_max);
void check_lock_name(std::string_view name);
void check_collection_name(std::string_view what, std::string_view name);
void check_timeout(std::chrono::milliseconds timeout);

}  // namespace mongolock::detail
