#include "mongolock/handle.h"

#include "lease.h"
#include "mongolock/errors.h"

namespace mongolock {

namespace {

const detail::Lease& checked(const std::shared_ptr<detail::Lease>& lease) {
  if (!lease) throw InvalidArgument("mongolock: use of an invalid (released or moved-from) Handle");
  return *lease;
}

}  // namespace

Handle::Handle(std::shared_ptr<detail::Lease> lease) : lease_(std::move(lease)) {}

namespace detail {
Handle make_handle(std::shared_ptr<Lease> lease) {
  return Handle(std::move(lease));
}
}  // namespace detail

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    release();
    lease_ = std::move(other.lease_);
  }
  return *this;
}

Handle::~Handle() {
  release();
}

bool Handle::release() noexcept {
  return release_result() == ReleaseResult::kReleased;
}

ReleaseResult Handle::release_result() noexcept {
  if (!lease_) return ReleaseResult::kNotHeld;
  const ReleaseResult result = lease_->release();
  lease_.reset();
  return result;
}

bool Handle::extend() {
  checked(lease_);
  // A lost callback run by this extension may release or reassign this Handle.
  const std::shared_ptr<detail::Lease> lease = lease_;
  return lease->extend();
}

int64_t Handle::fencing_token() const {
  return checked(lease_).token();
}
const std::string& Handle::lock_name() const {
  return checked(lease_).name();
}
const std::string& Handle::acquisition_id() const {
  return checked(lease_).id();
}
bool Handle::lost() const {
  return checked(lease_).lost();
}
std::stop_token Handle::lost_token() const {
  return checked(lease_).lost_token();
}

void Handle::on_lost(std::function<void()> callback) {
  checked(lease_);
  const std::shared_ptr<detail::Lease> lease = lease_;  // the callback may run here, at once
  lease->on_lost(std::move(callback));
}

bool Handle::wait_lost(std::chrono::milliseconds timeout) const {
  return checked(lease_).wait_lost(timeout);
}

std::chrono::steady_clock::time_point Handle::lease_deadline() const {
  return checked(lease_).deadline();
}

}  // namespace mongolock
