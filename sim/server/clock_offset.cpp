#include "server/clock_offset.h"

#include <cassert>
#include <charconv>
#include <cmath>
#include <mutex>

#include "base/error_codes.h"
#include "command/command.h"

namespace mongosim::server {

namespace {

constexpr const char* kField = "mongosimSetClockOffset";

bool in_range(int64_t offset_ms) {
  return offset_ms >= -kMaxClockOffsetMs && offset_ms <= kMaxClockOffsetMs;
}

std::string range_text() {
  return "[" + std::to_string(-kMaxClockOffsetMs) + ", " + std::to_string(kMaxClockOffsetMs) +
         "] (10 years)";
}

}  // namespace

int64_t parse_clock_offset_value(const bson::Value& value) {
  int64_t offset_ms = 0;
  if (value.type() == bson::Type::kInt32) {
    offset_ms = value.as_int32();
  } else if (value.type() == bson::Type::kInt64) {
    offset_ms = value.as_int64();
  } else if (value.type() == bson::Type::kDouble) {
    // Shells send whole numbers as doubles; a fraction of a millisecond has no meaning here.
    double d = value.number_as_double();
    if (!std::isfinite(d) || d != std::trunc(d) || std::fabs(d) > 1e15) {
      throw CommandError(code::kBadValue, std::string("'") + kField +
                                              "' must be a whole number of milliseconds, got " +
                                              std::to_string(d));
    }
    offset_ms = static_cast<int64_t>(d);
  } else {
    throw CommandError(code::kBadValue,
                       std::string("'") + kField + "' must be an integer number of milliseconds, " +
                           "got type " + std::string(bson::type_name(value.type())));
  }
  if (!in_range(offset_ms)) {
    throw CommandError(code::kBadValue, std::string("'") + kField + "' " +
                                            std::to_string(offset_ms) + " is outside " +
                                            range_text());
  }
  return offset_ms;
}

std::string parse_clock_offset_flag(std::string_view text, int64_t& offset_ms) {
  int64_t parsed = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, parsed);
  if (text.empty() || ec != std::errc() || ptr != end) {
    return "--clockOffsetMillis expects an integer number of milliseconds, got '" +
           std::string(text) + "'";
  }
  if (!in_range(parsed)) {
    return "--clockOffsetMillis " + std::string(text) + " is outside " + range_text();
  }
  offset_ms = parsed;
  return {};
}

bson::Document set_clock_offset(ServerClock& clock, int64_t offset_ms) {
  assert(in_range(offset_ms));
  // Two setters at once must each report the offset they replaced.
  static std::mutex setter_mutex;
  std::lock_guard lock(setter_mutex);
  int64_t previous_ms = clock.offset_ms();
  clock.set_offset_ms(offset_ms);
  return bson::Document{{"previousOffsetMillis", bson::V(previous_ms)},
                        {"offsetMillis", bson::V(offset_ms)}};
}

}  // namespace mongosim::server
