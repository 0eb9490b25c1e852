#include "hold_spec.h"

#include <sys/random.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <random>

#include "commands.h"

namespace mongolock::detail {

namespace {

HoldRequest request_for(const HoldSpec& spec, const std::string& id, const Options& options) {
  return HoldRequest{
      spec.collection, spec.name,         id,
      &options.owner,  options.expiry_ms, options.expiry_ms + options.reap_after_s * 1000};
}

std::optional<int64_t> shared_token(const bson_t& value, const std::string& id) {
  std::optional<int64_t> token;
  for_each_document(value, "shared", [&](const bson_t& entry) {
    if (find_utf8(entry, "id") != id) return true;
    token = find_int64(entry, "token");
    return false;
  });
  return token;
}

}  // namespace

Bson acquire_for(const HoldSpec& spec, const std::string& id, const Options& options,
                 const QueueTicket* ticket) {
  HoldRequest request = request_for(spec, id, options);
  if (!spec.rw) {
    request.ticket = ticket;
    return acquire_command(request);
  }
  return rw_acquire_command(request, spec.exclusive, spec.max_shared);
}

Bson extend_for(const HoldSpec& spec, const std::string& id, const Options& options,
                int64_t token) {
  HoldRequest request = request_for(spec, id, options);
  request.token = token;
  if (!spec.rw) return extend_command(request);
  return rw_extend_command(request, spec.exclusive);
}

Bson release_for(const HoldSpec& spec, const std::string& id, const Options& options,
                 std::string_view seat) {
  HoldRequest request = request_for(spec, id, options);
  if (!spec.rw) {
    // A notify holder hands the lock over to the queue's head, or else to the seat offered
    // (mongolock.h [notify]).
    request.hand_over = options.backoff == Backoff::kNotify;
    if (request.hand_over) request.seat = seat;
    return release_command(request);
  }
  return rw_release_command(request, spec.exclusive);
}

Bson seat_release_for(const HoldSpec& spec, const std::string& id, const Options& options,
                      std::string_view seat) {
  assert(!spec.rw && options.backoff == Backoff::kNotify);
  HoldRequest request = request_for(spec, id, options);
  request.hand_over = true;
  request.seat = seat;
  return seat_release_command(request);
}

Bson resolve_for(const HoldSpec& spec, const std::string& id, const Options& options,
                 int64_t keep_at_least_ms) {
  HoldRequest request = request_for(spec, id, options);
  request.tombstone_keep_ms = std::max(request.tombstone_keep_ms, keep_at_least_ms);
  return resolve_command(request, spec.rw);
}

std::optional<int64_t> granted_token(const HoldSpec& spec, const bson_t& reply,
                                     const std::string& id) {
  std::optional<Bson> value = find_document(reply, "value");
  if (!value) return std::nullopt;
  if (spec.rw && !spec.exclusive) return shared_token(**value, id);
  if (find_utf8(**value, "holder") != id) return std::nullopt;
  return find_int64(**value, "token");
}

uint64_t random_u64() {
  // getrandom(2) itself, not std::random_device: constructing one costs tens of microseconds on
  // some virtual machines (it probes the CPU), twice per acquire. Not a seeded engine: values
  // must differ across fork().
  uint64_t value = 0;
  if (getrandom(&value, sizeof value, 0) == static_cast<ssize_t>(sizeof value)) return value;
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) | device();
}

std::string new_acquisition_id() {
  static constexpr std::array<char, 16> kHex = {'0', '1', '2', '3', '4', '5', '6', '7',
                                                '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};
  std::string id;
  id.reserve(32);
  for (int word = 0; word < 2; ++word) {
    uint64_t bits = random_u64();
    for (int nibble = 0; nibble < 16; ++nibble) {
      id.push_back(kHex[bits & 0xF]);
      bits >>= 4;
    }
  }
  return id;
}

}  // namespace mongolock::detail
