#include "mongolock/rw_lock.h"

#include "acquire_loop.h"
#include "mongolock/errors.h"
#include "validation.h"

namespace mongolock {

namespace {

constexpr int32_t kMaxSharedLimit = 100'000;

detail::HoldSpec rw_spec(const detail::Context& context, const std::string& name, bool exclusive,
                         int32_t max_shared) {
  return detail::HoldSpec{context.options().rw_collection, name, true, exclusive, max_shared};
}

}  // namespace

RwLock::RwLock(std::shared_ptr<detail::Context> context, std::string name, int32_t max_shared)
    : context_(std::move(context)), name_(std::move(name)), max_shared_(max_shared) {
  detail::check_lock_name(name_);
  if (max_shared_ < 0 || max_shared_ > kMaxSharedLimit) {
    throw InvalidArgument("mongolock: max_shared = " + std::to_string(max_shared_) +
                          " for rw lock '" + name_ + "' must be in [0, 100000] (0 = unlimited)");
  }
}

Handle RwLock::acquire_shared(std::chrono::milliseconds timeout, std::stop_token stop) {
  return detail::acquire_or_throw(context_, rw_spec(*context_, name_, false, max_shared_), timeout,
                                  std::move(stop));
}

std::optional<Handle> RwLock::try_acquire_shared(std::chrono::milliseconds timeout,
                                                 std::stop_token stop) {
  return detail::acquire_loop(context_, rw_spec(*context_, name_, false, max_shared_), timeout,
                              std::move(stop));
}

Handle RwLock::acquire_exclusive(std::chrono::milliseconds timeout, std::stop_token stop) {
  return detail::acquire_or_throw(context_, rw_spec(*context_, name_, true, max_shared_), timeout,
                                  std::move(stop));
}

std::optional<Handle> RwLock::try_acquire_exclusive(std::chrono::milliseconds timeout,
                                                    std::stop_token stop) {
  return detail::acquire_loop(context_, rw_spec(*context_, name_, true, max_shared_), timeout,
                              std::move(stop));
}

}  // namespace mongolock
