#include "mongolock/lock.h"

#include "acquire_loop.h"
#include "validation.h"

namespace mongolock {

namespace {

detail::HoldSpec plain_spec(const detail::Context& context, const std::string& name) {
  return detail::HoldSpec{context.options().collection, name, false, true, 0};
}

}  // namespace

Lock::Lock(std::shared_ptr<detail::Context> context, std::string name)
    : context_(std::move(context)), name_(std::move(name)) {
  detail::check_lock_name(name_);
}

Handle Lock::acquire(std::chrono::milliseconds timeout, std::stop_token stop) {
  return detail::acquire_or_throw(context_, plain_spec(*context_, name_), timeout, std::move(stop));
}

std::optional<Handle> Lock::try_acquire(std::chrono::milliseconds timeout, std::stop_token stop) {
  return detail::acquire_loop(context_, plain_spec(*context_, name_), timeout, std::move(stop));
}

}  // namespace mongolock
