#include "square_lock.h"

#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <stdexcept>

#include "checker/clock.h"
#include "uniform_pause.h"

namespace locklab::clients::square {
namespace {

std::string hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

Json null_lock() {
  return {{"lockId", nullptr},    {"owner", nullptr},     {"host", nullptr},
          {"comment", nullptr},   {"createdAt", nullptr}, {"renewedAt", nullptr},
          {"expiresAt", nullptr}, {"acquired", false}};
}

}  // namespace

SquareLock::SquareLock(const WorkerConfig& config, int32_t max_shared, Indexes indexes,
                       Expiry expiry)
    : config_(config),
      max_shared_(max_shared > 0 ? max_shared : -1),
      connection_(config.uri, config.database, config.lock.write_concern_w),
      wait_rng_(config.seed),
      host_(hostname()),
      ttl_s_(expiry == Expiry::kNone ? 0 : (config.lock.expiry_ms + 999) / 1000) {
  assert(expiry == Expiry::kNone || ttl_s_ >= 1);
  create_indexes(indexes);
}

void SquareLock::create_indexes(Indexes which) {
  Json indexes = Json::array();
  if (which == Indexes::kAsRequired) {
    indexes.push_back(
        {{"key", {{"resource", 1}}}, {"name", "resource_1"}, {"unique", true}, {"sparse", true}});
  }
  for (const char* field : {"exclusive.lockId", "exclusive.expiresAt", "shared.locks.lockId",
                            "shared.locks.expiresAt"}) {
    indexes.push_back({{"key", {{field, 1}}}, {"name", std::string(field) + "_1"}});
  }
  const Reply reply = connection_.write({{"createIndexes", kCollection}, {"indexes", indexes}});
  if (!reply.ok())
    throw std::runtime_error("createIndexes on " + std::string(kCollection) +
                             " failed: " + reply.message);
}

Json SquareLock::lock_details(const std::string& lock_id, int64_t now_ms) const {
  return {{"lockId", lock_id},
          {"owner", config_.id},
          {"host", host_},
          {"comment", ""},
          {"createdAt", json_date_ms(now_ms)},
          {"renewedAt", nullptr},
          // The library sets expiresAt only for a lock with a TTL.
          {"expiresAt", ttl_s_ > 0 ? json_date_ms(now_ms + ttl_s_ * 1000) : Json(nullptr)},
          {"acquired", true}};
}

Reply SquareLock::xlock(const std::string& resource, const std::string& lock_id) {
  const int64_t now = locklab::wall_now_ms();
  const Json query = {
      {"resource", resource},
      {"$or", Json::array({{{"exclusive.acquired", false}},
                           {{"exclusive.expiresAt", {{"$lte", json_date_ms(now)}}}}})},
      {"shared.count", 0}};
  const Json set = {{"resource", resource},
                    {"exclusive", lock_details(lock_id, now)},
                    {"shared", {{"count", 0}, {"locks", Json::array()}}}};
  return connection_.write({{"findAndModify", kCollection},
                            {"query", query},
                            {"update", {{"$set", set}}},
                            {"upsert", true},
                            {"new", true}});
}

Reply SquareLock::slock(const std::string& resource, const std::string& lock_id) {
  const int64_t now = locklab::wall_now_ms();
  Json query = {{"resource", resource},
                {"exclusive.acquired", false},
                {"shared.locks.lockId", {{"$ne", lock_id}}}};
  if (max_shared_ >= 0) query["shared.count"] = Json{{"$lt", max_shared_}};
  return connection_.write({{"findAndModify", kCollection},
                            {"query", query},
                            {"update",
                             {{"$inc", {{"shared.count", 1}}},
                              {"$push", {{"shared.locks", lock_details(lock_id, now)}}}}},
                            {"upsert", true},
                            {"new", true}});
}

// The worker's retry pause: min + U(0,1) * (max - min); false when stopped meanwhile.
bool SquareLock::retry_wait(std::stop_token stop) {
  return uniform_pause(wait_rng_, config_.lock.busy_wait_min_ms, config_.lock.busy_wait_max_ms,
                       stop);
}

AcquireResult SquareLock::acquire(const std::string& lock, HoldMode mode, std::stop_token stop,
                                  std::function<void(std::optional<int64_t>)> /*on_lost*/) {
  AcquireResult result;
  const std::string lock_id =
      config_.id + "-" + std::to_string(config_.incarnation) + "-" + std::to_string(++holds_);
  for (bool first = true;; first = false) {
    if ((!first && !retry_wait(stop)) || stop.stop_requested()) {
      result.detail = "cancelled";
      return result;
    }
    const Reply reply = mode == HoldMode::kShared ? slock(lock, lock_id) : xlock(lock, lock_id);
    if (reply.duplicate_key()) continue;  // ErrAlreadyLocked
    if (!reply.ok()) {
      result.kind =
          reply.proves_not_applied() ? AcquireResult::Kind::kFailed : AcquireResult::Kind::kUnknown;
      result.detail = reply.message;
      return result;
    }
    lock_id_ = lock_id;
    result.kind = AcquireResult::Kind::kAcquired;
    result.lease_ms = ttl_s_ * 1000;
    return result;
  }
}

std::optional<Reply> SquareLock::unlock_one(const Json& doc, const std::string& id) {
  const Json resource = at_path(doc, {"resource"});
  if (at_path(doc, {"exclusive", "lockId"}) == id) {
    return connection_.write({{"findAndModify", kCollection},
                              {"query", {{"resource", resource}, {"exclusive.lockId", id}}},
                              {"update", {{"$set", {{"exclusive", null_lock()}}}}}});
  }
  const Json shared = at_path(doc, {"shared", "locks"});
  const bool holds_shared =
      shared.is_array() && std::any_of(shared.begin(), shared.end(),
                                       [&](const Json& l) { return at_path(l, {"lockId"}) == id; });
  if (!holds_shared) return std::nullopt;
  return connection_.write(
      {{"findAndModify", kCollection},
       {"query", {{"resource", resource}, {"shared.locks.lockId", id}}},
       {"update",
        {{"$inc", {{"shared.count", -1}}}, {"$pull", {{"shared.locks", {{"lockId", id}}}}}}}});
}

ReleaseResult SquareLock::release(const std::string& /*lock*/) {
  assert(!lock_id_.empty());
  const std::string id = lock_id_;
  lock_id_.clear();
  ReleaseResult result;
  const Json match = {
      {"$or", Json::array({{{"exclusive.lockId", id}}, {{"shared.locks.lockId", id}}})}};
  const Reply found = connection_.read(
      {{"aggregate", kCollection},
       {"pipeline", Json::array({{{"$match", match}}, {{"$sort", {{"_id", -1}}}}})},
       {"cursor", Json::object()}});
  if (!found.ok()) {
    result.kind = ReleaseResult::Kind::kNotHeld;  // Status only reads: nothing was unlocked
    result.detail = "Status failed: " + found.message;
    return result;
  }
  bool unlocked = false;
  const Json batch = at_path(found.doc, {"cursor", "firstBatch"});
  for (const Json& doc : batch.is_array() ? batch : Json::array()) {
    const std::optional<Reply> reply = unlock_one(doc, id);
    if (!reply) continue;
    if (!reply->ok()) {
      result.kind = ReleaseResult::Kind::kUnknown;
      result.detail = reply->message;
      return result;
    }
    unlocked = unlocked || at_path(reply->doc, {"value"}).is_object();
  }
  result.kind = unlocked ? ReleaseResult::Kind::kReleased : ReleaseResult::Kind::kNotHeld;
  if (!unlocked) result.detail = "no resource holds this lockId (expired and taken over)";
  return result;
}

}  // namespace locklab::clients::square
