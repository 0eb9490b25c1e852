// UTC calendar arithmetic for dates stored as milliseconds since the epoch ($dateAdd, $toDate
// on strings). Proleptic Gregorian, no time zones other than fixed offsets. Internal.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace mongosim::query {

struct CivilTime {
  int64_t year = 1970;
  int month = 1;  // 1..12
  int day = 1;    // 1..31
  int64_t ms_of_day = 0;
};

CivilTime civil_from_ms(int64_t ms);
// Days beyond the month's end are clamped to its last day, as $dateAdd does for months.
int64_t ms_from_civil(const CivilTime& t);

// ISO-8601 as $toDate/$dateFromString accept it: "2024-01-31", "2024-01-31T10:00:00Z",
// "2024-01-31T10:00:00.123+02:00". nullopt if the string is not such a date.
std::optional<int64_t> parse_iso_date_ms(std::string_view text);

}  // namespace mongosim::query
