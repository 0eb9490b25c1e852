#include "distributed_lock.h"

#include <cassert>
#include <cstdio>

#include "uniform_pause.h"

namespace locklab::clients::distributedlock {
namespace {

constexpr int kUnauthorized = 13;
constexpr int kIndexAlreadyExists = 68;
constexpr int kIndexOptionsConflict = 85;
constexpr int kIndexKeySpecsConflict = 86;
constexpr auto kIndexRetryAfter = std::chrono::minutes(1);

int64_t cadence_ms(const WorkerConfig& c) {
  return c.lock.extension_cadence_ms > 0 ? c.lock.extension_cadence_ms : c.lock.expiry_ms / 3;
}

// E: the stored lease is missing or over, on the server's clock.
Json expired_or_missing() {
  return {{"$lte",
           Json::array({{{"$ifNull", Json::array({"$expiresAt", json_date_ms(0)})}}, "$$NOW"})}};
}

Json cond(const Json& test, const Json& then, const char* keep) {
  return {{"$cond", Json::array({test, then, keep})}};
}

Json acquire_command(const std::string& lock, const std::string& guid, int64_t expiry_ms) {
  const Json e = expired_or_missing();
  const Json lease_end = {
      {"$dateAdd",
       {{"startDate", "$$NOW"}, {"unit", "millisecond"}, {"amount", json_int64(expiry_ms)}}}};
  const Json next_token = {
      {"$add",
       Json::array({{{"$ifNull", Json::array({"$fencingToken", json_int64(0)})}}, json_int64(1)})}};
  const Json set = {{"lockId", cond(e, guid, "$lockId")},
                    {"expiresAt", cond(e, lease_end, "$expiresAt")},
                    {"acquiredAt", cond(e, "$$NOW", "$acquiredAt")},
                    {"fencingToken", cond(e, next_token, "$fencingToken")}};
  return {{"findAndModify", kCollection},
          {"query", {{"_id", lock}}},
          {"update", Json::array({{{"$set", set}}})},
          {"upsert", true},
          {"new", true}};
}

}  // namespace

DistributedLock::DistributedLock(const WorkerConfig& config, Recorder& recorder)
    : config_(config),
      connection_(config.uri, config.database, config.lock.write_concern_w),
      monitor_(
          std::make_unique<Connection>(config.uri, config.database, config.lock.write_concern_w),
          recorder, kCollection, config.lock.expiry_ms, cadence_ms(config)),
      wait_rng_(config.seed),
      guid_rng_(std::random_device{}()) {}

DistributedLock::~DistributedLock() = default;

std::string DistributedLock::new_guid() {
  const uint64_t high = guid_rng_();
  const uint64_t low = guid_rng_();
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(high),
                static_cast<unsigned long long>(low));
  return text;
}

// Sleeps min + U(0,1) * (max - min); false when stopped meanwhile.
bool DistributedLock::busy_wait(std::stop_token stop) {
  return uniform_pause(wait_rng_, config_.lock.busy_wait_min_ms, config_.lock.busy_wait_max_ms,
                       stop);
}

AcquireResult DistributedLock::acquire(const std::string& lock, HoldMode mode, std::stop_token stop,
                                       std::function<void(std::optional<int64_t>)> on_lost) {
  assert(mode == HoldMode::kExclusive);  // the library has no shared lock
  (void)mode;
  AcquireResult result;
  for (bool first = true;; first = false) {
    if ((!first && !busy_wait(stop)) || stop.stop_requested()) {
      result.detail = "cancelled";
      return result;
    }
    const std::string guid = new_guid();
    const Reply reply = connection_.write(acquire_command(lock, guid, config_.lock.expiry_ms));
    if (!reply.ok()) {
      result.kind =
          reply.proves_not_applied() ? AcquireResult::Kind::kFailed : AcquireResult::Kind::kUnknown;
      result.detail = reply.message;
      return result;
    }
    const Json doc = at_path(reply.doc, {"value"});
    if (at_path(doc, {"lockId"}) != guid) continue;
    const Json token = at_path(doc, {"fencingToken"});
    if (!token.is_number_integer()) {
      result.kind = AcquireResult::Kind::kUnknown;
      result.detail = "granted document without an integer fencingToken: " + doc.dump();
      return result;
    }
    held_lock_id_ = guid;
    result.kind = AcquireResult::Kind::kAcquired;
    result.token = token.get<int64_t>();
    result.lease_ms = config_.lock.expiry_ms;
    monitor_.watch({lock, guid, *result.token, std::move(on_lost)});
    ensure_index();
    return result;
  }
}

ReleaseResult DistributedLock::release(const std::string& lock) {
  assert(!held_lock_id_.empty());
  monitor_.unwatch();
  const Json command = {
      {"delete", kCollection},
      {"deletes",
       Json::array({{{"q", {{"_id", lock}, {"lockId", held_lock_id_}}}, {"limit", 1}}})}};
  held_lock_id_.clear();
  const Reply reply = connection_.write(command);
  ReleaseResult result;
  if (reply.ok()) {
    const bool deleted = reply.doc.value("n", 0) > 0;
    result.kind = deleted ? ReleaseResult::Kind::kReleased : ReleaseResult::Kind::kNotHeld;
    if (!deleted) result.detail = "no lock document with this hold's lockId";
  } else {
    result.kind = reply.outcome == Reply::Outcome::kNotSent ? ReleaseResult::Kind::kNotHeld
                                                            : ReleaseResult::Kind::kUnknown;
    result.detail = reply.message;
  }
  return result;
}

// The fire-and-forget TTL index, started after a successful acquire.
void DistributedLock::ensure_index() {
  const IndexState state = index_state_.load();
  if (state == IndexState::kRunning || state == IndexState::kDone || state == IndexState::kGaveUp)
    return;
  if (state == IndexState::kFailed && Clock::now() - index_failed_at_ < kIndexRetryAfter) return;
  index_state_ = IndexState::kRunning;
  if (index_thread_.joinable()) index_thread_.join();  // the previous, finished attempt
  index_thread_ = std::jthread([this] {
    Connection connection(config_.uri, config_.database, config_.lock.write_concern_w);
    const Json command = {{"createIndexes", kCollection},
                          {"indexes", Json::array({{{"key", {{"expiresAt", 1}}},
                                                    {"name", "expiresAt_ttl"},
                                                    {"expireAfterSeconds", 0}}})}};
    const Reply reply = connection.write(command);
    const int code = reply.code;
    if (reply.ok() || code == kIndexAlreadyExists || code == kIndexOptionsConflict ||
        code == kIndexKeySpecsConflict) {
      index_state_ = IndexState::kDone;
    } else if (code == kUnauthorized) {
      index_state_ = IndexState::kGaveUp;
    } else {
      index_failed_at_ = Clock::now();
      index_state_ = IndexState::kFailed;
    }
  });
}

}  // namespace locklab::clients::distributedlock
