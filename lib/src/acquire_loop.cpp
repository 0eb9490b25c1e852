#include "acquire_loop.h"

#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include "backoff.h"
#include "lease.h"
#include "mongolock/errors.h"
#include "validation.h"

namespace mongolock::detail {

namespace {

using Clock = std::chrono::steady_clock;

enum class Attempt { kGranted, kBusy };

struct AttemptResult {
  Attempt kind = Attempt::kBusy;
  std::optional<Handle> handle;
};

std::string describe(const HoldSpec& spec) {
  std::string kind =
      spec.rw ? (spec.exclusive ? "exclusive hold of rw lock" : "shared hold of rw lock") : "lock";
  return kind + " '" + spec.name + "'";
}

Clock::time_point deadline_after(std::chrono::milliseconds timeout) {
  const Clock::time_point now = Clock::now();
  if (timeout >=
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::time_point::max() - now)) {
    return Clock::time_point::max();
  }
  return now + timeout;
}

// Removes a hold that attempt `id` may have been granted. True once the server confirmed that
// no hold with that id remains.
bool resolve_by_release(Context& context, const HoldSpec& spec, const std::string& id) {
  for (int attempt = 0; attempt < kResolveAttemptsMax; ++attempt) {
    Reply reply = context.write(*release_for(spec, id, context.options()));
    if (reply.outcome == Outcome::kOk) return true;
    if (reply.outcome == Outcome::kRefused && !reply.transient) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(context.options().busy_wait_min_ms));
  }
  return false;
}

AttemptResult attempt_once(const std::shared_ptr<Context>& context, const HoldSpec& spec) {
  const Options& options = context->options();
  const std::string id = new_acquisition_id();
  const Clock::time_point sent_at = Clock::now();  // the lease clock starts before sending
  Reply reply = context->write(*acquire_for(spec, id, options));
  const auto lease_end =
      sent_at + std::chrono::milliseconds(options.expiry_ms - options.lost_safety_margin_ms);
  if (reply.outcome == Outcome::kOk) {
    std::optional<int64_t> token = granted_token(spec, *reply.doc, id);
    if (!token) return {};
    if (Clock::now() < lease_end) {
      auto lease = std::make_shared<Lease>(context, spec, id, *token, sent_at);
      lease->start();
      return {Attempt::kGranted, Handle(std::move(lease))};
    }
    // The reply came back after the client-side lease ended: hand it back rather than return a
    // hold that is already lost.
  } else if (reply.outcome == Outcome::kRefused) {
    if (!reply.transient) {
      throw ServerError("mongolock: acquire of " + describe(spec) + " refused: " + reply.message,
                        reply.domain, reply.code);
    }
    return {};
  } else if (reply.outcome == Outcome::kNotSent) {
    return {};
  }
  if (!resolve_by_release(*context, spec, id)) {
    throw UnknownOutcome("mongolock: acquire of " + describe(spec) +
                             " has an unknown outcome and could not be resolved: " + reply.message,
                         sent_at + std::chrono::milliseconds(options.expiry_ms));
  }
  return {};
}

// Sleeps until `wake` or a stop request. Returns false if stopped.
bool sleep_until(Clock::time_point wake, const std::stop_token& stop) {
  std::mutex mutex;
  std::condition_variable_any cv;
  std::unique_lock lock(mutex);
  cv.wait_until(lock, stop, wake, [] { return false; });
  return !stop.stop_requested();
}

}  // namespace

std::optional<Handle> acquire_loop(const std::shared_ptr<Context>& context, const HoldSpec& spec,
                                   std::chrono::milliseconds timeout, std::stop_token stop) {
  check_timeout(timeout);
  const Options& options = context->options();
  const Clock::time_point deadline = deadline_after(timeout);
  BackoffPolicy backoff(options.backoff, options.busy_wait_min_ms, options.busy_wait_max_ms,
                        std::random_device{}());
  while (true) {
    if (stop.stop_requested())
      throw Cancelled("mongolock: acquire of " + describe(spec) + " cancelled");
    AttemptResult result = attempt_once(context, spec);
    if (result.kind == Attempt::kGranted) return std::move(result.handle);
    const Clock::time_point now = Clock::now();
    if (now >= deadline) return std::nullopt;
    const Clock::time_point wake =
        std::min(deadline, now + std::chrono::milliseconds(backoff.next_sleep_ms()));
    if (!sleep_until(wake, stop)) {
      throw Cancelled("mongolock: acquire of " + describe(spec) + " cancelled");
    }
  }
}

Handle acquire_or_throw(const std::shared_ptr<Context>& context, const HoldSpec& spec,
                        std::chrono::milliseconds timeout, std::stop_token stop) {
  std::optional<Handle> handle = acquire_loop(context, spec, timeout, std::move(stop));
  if (!handle) {
    throw Timeout("mongolock: " + describe(spec) + " not acquired within " +
                  std::to_string(timeout.count()) + " ms");
  }
  return std::move(*handle);
}

}  // namespace mongolock::detail
