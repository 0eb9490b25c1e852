#include "recipe_lock.h"

#include <cassert>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>

#include "checker/clock.h"

namespace locklab::clients::alistairjevans {
namespace {

// Sleeps ms; false when stopped meanwhile.
bool pause(int64_t ms, std::stop_token stop) {
  std::mutex mutex;
  std::condition_variable_any cv;
  std::unique_lock<std::mutex> guard(mutex);
  cv.wait_for(guard, stop, std::chrono::milliseconds(ms), [] { return false; });
  return !stop.stop_requested();
}

}  // namespace

RecipeLock::RecipeLock(const WorkerConfig& config, Recorder& /*recorder*/)
    : config_(config), connection_(config.uri, config.database, config.lock.write_concern_w) {
  const Json index = {
      {"key", {{"ExpireAt", 1}}}, {"name", "ExpireAt_1"}, {"expireAfterSeconds", 0}};
  const Reply reply =
      connection_.write({{"createIndexes", kCollection}, {"indexes", Json::array({index})}});
  if (!reply.ok())
    throw std::runtime_error("createIndexes on " + std::string(kCollection) +
                             " failed: " + reply.message);
}

Reply RecipeLock::attempt(const std::string& lock) {
  const int64_t expire_at = locklab::wall_now_ms() + config_.lock.expiry_ms;
  return connection_.write({{"findAndModify", kCollection},
                            {"query", {{"_id", lock}}},
                            {"update", {{"$setOnInsert", {{"ExpireAt", json_date_ms(expire_at)}}}}},
                            {"upsert", true},
                            {"new", false}});
}

AcquireResult RecipeLock::acquire(const std::string& lock, HoldMode mode, std::stop_token stop,
                                  std::function<void(std::optional<int64_t>)> /*on_lost*/) {
  assert(mode == HoldMode::kExclusive);  // the recipe has no shared lock
  (void)mode;
  using Clock = std::chrono::steady_clock;
  AcquireResult result;
  const auto give_up = Clock::now() + std::chrono::milliseconds(kAcquireTimeoutMs);
  while (Clock::now() < give_up) {
    if (stop.stop_requested()) {
      result.detail = "cancelled";
      return result;
    }
    const Reply reply = attempt(lock);
    if (reply.ok() && at_path(reply.doc, {"value"}).is_null()) {
      result.kind = AcquireResult::Kind::kAcquired;
      result.lease_ms = config_.lock.expiry_ms;
      return result;
    }
    if (!reply.ok() && !reply.duplicate_key()) {
      result.kind =
          reply.proves_not_applied() ? AcquireResult::Kind::kFailed : AcquireResult::Kind::kUnknown;
      result.detail = reply.message;
      return result;
    }
    if (!pause(kAttemptEveryMs, stop)) {
      result.detail = "cancelled";
      return result;
    }
  }
  result.detail = "not acquired within " + std::to_string(kAcquireTimeoutMs) + " ms";
  return result;
}

ReleaseResult RecipeLock::release(const std::string& lock) {
  const Reply reply =
      connection_.write({{"delete", kCollection},
                         {"deletes", Json::array({{{"q", {{"_id", lock}}}, {"limit", 1}}})}});
  ReleaseResult result;
  if (reply.ok()) {
    const Json n = at_path(reply.doc, {"n"});
    const bool deleted = n.is_number_integer() && n.get<int64_t>() > 0;
    result.kind = deleted ? ReleaseResult::Kind::kReleased : ReleaseResult::Kind::kNotHeld;
    if (!deleted) result.detail = "no lock document (the TTL monitor removed it)";
    return result;
  }
  result.kind = reply.outcome == Reply::Outcome::kNotSent ? ReleaseResult::Kind::kNotHeld
                                                          : ReleaseResult::Kind::kUnknown;
  result.detail = reply.message;
  return result;
}

}  // namespace locklab::clients::alistairjevans
