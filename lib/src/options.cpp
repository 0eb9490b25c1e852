#include "mongolock/options.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <string>

#include "mongolock/errors.h"
#include "validation.h"

namespace mongolock {

namespace {

constexpr int64_t kExpiryMsMin = 100;
constexpr int64_t kExpiryMsMax = 86'400'000;
constexpr int64_t kBusyWaitMsMax = 60'000;
constexpr int64_t kReapAfterSMax = 31'536'000;

[[noreturn]] void fail(const std::string& field, int64_t value, const std::string& rule) {
  throw InvalidArgument("mongolock: Options::" + field + " = " + std::to_string(value) + ": " +
                        rule);
}

void check_range(const std::string& field, int64_t value, int64_t low, int64_t high) {
  if (value < low || value > high) {
    fail(field, value, "must be in [" + std::to_string(low) + ", " + std::to_string(high) + "]");
  }
}

std::string host_name() {
  std::array<char, 256> buffer{};
  if (gethostname(buffer.data(), buffer.size() - 1) != 0) return "unknown";
  return std::string(buffer.data());
}

void fill_owner(Owner& owner) {
  if (owner.host.empty()) owner.host = host_name();
  if (owner.pid == 0) owner.pid = static_cast<int64_t>(getpid());
  detail::check_utf8_text("Options::owner.host", owner.host, 255);
  detail::check_utf8_text("Options::owner.description", owner.description,
                          detail::kDescriptionBytesMax);
}

void derive_durations(Options& out) {
  check_range("expiry_ms", out.expiry_ms, kExpiryMsMin, kExpiryMsMax);
  if (out.extension_cadence_ms == 0) out.extension_cadence_ms = out.expiry_ms / 3;
  if (out.lost_safety_margin_ms == 0)
    out.lost_safety_margin_ms = std::max<int64_t>(1, out.expiry_ms / 10);
  if (out.write_timeout_ms == 0) out.write_timeout_ms = out.expiry_ms - out.lost_safety_margin_ms;
  check_range("lost_safety_margin_ms", out.lost_safety_margin_ms, 1, out.expiry_ms / 2 - 1);
  check_range("extension_cadence_ms", out.extension_cadence_ms, 1,
              out.expiry_ms - out.lost_safety_margin_ms - 1);
  check_range("write_timeout_ms", out.write_timeout_ms, 1, kExpiryMsMax);
  check_range("busy_wait_min_ms", out.busy_wait_min_ms, 1, kBusyWaitMsMax);
  check_range("busy_wait_max_ms", out.busy_wait_max_ms, out.busy_wait_min_ms, kBusyWaitMsMax);
  check_range("reap_after_s", out.reap_after_s, 0, kReapAfterSMax);
  check_range("write_concern.members_count", out.write_concern.members_count, 0,
              WriteConcern::kWriteConcernMembersMax);
}

}  // namespace

Options Options::validated() const {
  Options out = *this;
  derive_durations(out);
  detail::check_collection_name("Options::collection", out.collection);
  detail::check_collection_name("Options::rw_collection", out.rw_collection);
  if (out.collection == out.rw_collection) {
    throw InvalidArgument("mongolock: Options::collection and Options::rw_collection are both '" +
                          out.collection + "'; plain and reader/writer locks need their own");
  }
  detail::check_utf8_text("Options::app_name", out.app_name, 128);
  fill_owner(out.owner);
  return out;
}

}  // namespace mongolock
