#include "lease_monitor.h"

#include <cassert>

namespace locklab::clients::distributedlock {
namespace {

// update {_id, lockId} with [{$set: {expiresAt: $$NOW + expiry}}]: no expiry predicate.
Json renew_command(const std::string& collection, const WatchedHold& hold, int64_t expiry_ms) {
  const Json lease_end = {
      {"$dateAdd",
       {{"startDate", "$$NOW"}, {"unit", "millisecond"}, {"amount", json_int64(expiry_ms)}}}};
  const Json pipeline = Json::array({{{"$set", {{"expiresAt", lease_end}}}}});
  const Json statement = {{"q", {{"_id", hold.lock}, {"lockId", hold.lock_id}}}, {"u", pipeline}};
  return {{"update", collection}, {"updates", Json::array({statement})}};
}

}  // namespace

LeaseMonitor::LeaseMonitor(std::unique_ptr<Connection> connection, Recorder& recorder,
                           std::string collection, int64_t expiry_ms, int64_t cadence_ms)
    : connection_(std::move(connection)),
      recorder_(recorder),
      collection_(std::move(collection)),
      expiry_(expiry_ms),
      cadence_(cadence_ms),
      thread_([this](std::stop_token stop) { loop(stop); }) {
  assert(connection_ && cadence_ms > 0 && cadence_ms < expiry_ms);
}

LeaseMonitor::~LeaseMonitor() {
  thread_.request_stop();
  cv_.notify_all();
}

void LeaseMonitor::watch(WatchedHold hold) {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    hold_ = std::move(hold);
    ++generation_;
    renewed_at_ = Clock::now();
    next_tick_ = renewed_at_ + cadence_;
  }
  cv_.notify_all();
}

void LeaseMonitor::unwatch() {
  {
    std::unique_lock<std::mutex> guard(mutex_);
    hold_.reset();
    ++generation_;
    // A lost notification being delivered finishes before the hold is released.
    cv_.wait(guard, [&] { return !notifying_; });
  }
  cv_.notify_all();
}

void LeaseMonitor::loop(std::stop_token stop) {
  std::unique_lock<std::mutex> guard(mutex_);
  while (!stop.stop_requested()) {
    if (!hold_) {
      cv_.wait(guard, stop, [&] { return hold_.has_value(); });
      continue;
    }
    const uint64_t generation = generation_;
    const bool changed =
        cv_.wait_until(guard, stop, next_tick_, [&] { return generation_ != generation; });
    if (changed || stop.stop_requested()) continue;
    tick(guard, generation);
  }
}

// One cadence: the stopwatch check, then a renewal. Called and returns with `guard` held.
void LeaseMonitor::tick(std::unique_lock<std::mutex>& guard, uint64_t generation) {
  assert(hold_.has_value());
  if (Clock::now() - renewed_at_ > expiry_) {
    lose(guard);
    return;
  }
  const WatchedHold hold = *hold_;
  guard.unlock();
  recorder_.record("extend", EventType::kInvoke, hold.lock, hold.token, nullptr);
  const Reply reply = connection_->write(renew_command(collection_, hold, expiry_.count()));
  guard.lock();
  if (generation_ != generation) return;  // released meanwhile: the completion goes unrecorded
  next_tick_ = Clock::now() + cadence_;
  if (!reply.ok()) {
    recorder_.record("extend", EventType::kInfo, hold.lock, hold.token, {{"error", reply.message}});
    return;  // unknown: keep going, the stopwatch keeps running
  }
  if (reply.doc.value("n", 0) > 0) {
    renewed_at_ = Clock::now();  // after the reply was processed
    recorder_.record("extend", EventType::kOk, hold.lock, hold.token,
                     {{"lease_ms", expiry_.count()}});
    return;
  }
  recorder_.record("extend", EventType::kFail, hold.lock, hold.token,
                   {{"reason", "no lock document with this hold's lockId"}});
  lose(guard);
}

// The hold is lost: stop watching it and notify, with the mutex released.
void LeaseMonitor::lose(std::unique_lock<std::mutex>& guard) {
  assert(hold_.has_value());
  const WatchedHold hold = std::move(*hold_);
  hold_.reset();
  ++generation_;
  notifying_ = true;
  guard.unlock();
  if (hold.on_lost) hold.on_lost(hold.token);
  guard.lock();
  notifying_ = false;
  cv_.notify_all();
}

}  // namespace locklab::clients::distributedlock
