#include "query/civil_time.h"

#include <algorithm>

namespace mongosim::query {

namespace {

constexpr int64_t kMsPerDay = 86400000;

// Howard Hinnant's days_from_civil / civil_from_days.
int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool is_leap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int days_in_month(int64_t y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

// Reads exactly n digits at text[pos]; advances pos.
std::optional<int> digits(std::string_view text, size_t& pos, size_t n) {
  if (pos + n > text.size()) return std::nullopt;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = text[pos + i];
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  pos += n;
  return v;
}

bool expect(std::string_view text, size_t& pos, char c) {
  if (pos < text.size() && text[pos] == c) {
    ++pos;
    return true;
  }
  return false;
}

}  // namespace

CivilTime civil_from_ms(int64_t ms) {
  int64_t days = ms / kMsPerDay;
  int64_t rem = ms % kMsPerDay;
  if (rem < 0) {
    rem += kMsPerDay;
    --days;
  }
  int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  CivilTime t;
  t.day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  t.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  t.year = yoe + era * 400 + (t.month <= 2);
  t.ms_of_day = rem;
  return t;
}

int64_t ms_from_civil(const CivilTime& t) {
  int day = std::min(t.day, days_in_month(t.year, t.month));
  return days_from_civil(t.year, t.month, day) * kMsPerDay + t.ms_of_day;
}

std::optional<int64_t> parse_iso_date_ms(std::string_view text) {
  size_t pos = 0;
  auto year = digits(text, pos, 4);
  if (!year || !expect(text, pos, '-')) return std::nullopt;
  auto month = digits(text, pos, 2);
  if (!month || !expect(text, pos, '-')) return std::nullopt;
  auto day = digits(text, pos, 2);
  if (!day || *month < 1 || *month > 12 || *day < 1 || *day > days_in_month(*year, *month)) {
    return std::nullopt;
  }
  int64_t ms_of_day = 0;
  if (expect(text, pos, 'T') || expect(text, pos, ' ')) {
    auto hh = digits(text, pos, 2);
    if (!hh || !expect(text, pos, ':')) return std::nullopt;
    auto mm = digits(text, pos, 2);
    if (!mm) return std::nullopt;
    int ss = 0, frac_ms = 0;
    if (expect(text, pos, ':')) {
      auto s = digits(text, pos, 2);
      if (!s) return std::nullopt;
      ss = *s;
      if (expect(text, pos, '.')) {
        auto f = digits(text, pos, 3);
        if (!f) return std::nullopt;
        frac_ms = *f;
      }
    }
    if (*hh > 23 || *mm > 59 || ss > 59) return std::nullopt;
    ms_of_day = ((*hh * 60 + *mm) * 60 + ss) * int64_t{1000} + frac_ms;
  }
  int64_t offset_ms = 0;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    auto oh = digits(text, pos, 2);
    expect(text, pos, ':');
    auto om = digits(text, pos, 2);
    if (!oh || !om) return std::nullopt;
    offset_ms = sign * (*oh * 60 + *om) * int64_t{60000};
  } else {
    expect(text, pos, 'Z');
  }
  if (pos != text.size()) return std::nullopt;
  CivilTime t{*year, *month, *day, ms_of_day};
  return ms_from_civil(t) - offset_ms;
}

}  // namespace mongosim::query
