// mongolock::Lock: a named exclusive lease lock in one MongoDB collection.
//
// A Lock is a cheap value (a name plus a shared reference to its Provider's state); it holds no
// server state itself. Copies refer to the same lock name. It keeps the Provider's pool in use
// until the last Lock/Handle made from it is gone.
// Not reentrant: a second acquire of a held name from the same process waits like any other.
//
// Waiting: one attempt immediately; while the lock is held by someone else, sleep per
// Options::backoff and retry; when `timeout` passes during a sleep, one last attempt is made.
// An attempt whose outcome is unknown is resolved with a tombstone (see mongolock.h "Unknown
// outcomes") before the call goes on, so "not acquired" (std::nullopt, Timeout, Cancelled,
// ServerError) is only reported when the caller does not hold the lock and the attempt can
// never take effect later, however many attempts the call made (each attempt has its own id
// and its own tombstone, kept by age, never dropped for a newer one). The whole call is
// bounded (mongolock.h "Bounds").
//
// Thread rules: all methods may be called from any thread concurrently.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "mongolock/handle.h"

namespace mongolock {

namespace detail {
class Context;
}

// Wait without a time limit (only the stop_token ends the wait).
inline constexpr std::chrono::milliseconds kWaitForever = std::chrono::milliseconds::max();

class Provider;

// Made by Provider::create_lock.
class Lock {
 public:
  // Blocks until held. Throws Timeout, Cancelled, UnknownOutcome, ServerError; InvalidArgument
  // for a negative timeout (before any round trip).
  Handle acquire(std::chrono::milliseconds timeout = kWaitForever, std::stop_token stop = {});
  // Like acquire() but returns std::nullopt instead of throwing Timeout. timeout 0 = one attempt.
  std::optional<Handle> try_acquire(
      std::chrono::milliseconds timeout = std::chrono::milliseconds(0), std::stop_token stop = {});

  const std::string& name() const { return name_; }

 private:
  friend class Provider;
  // Throws InvalidArgument for a bad name (see Provider::create_lock).
  Lock(std::shared_ptr<detail::Context> context, std::string name);

  std::shared_ptr<detail::Context> context_;
  std::string name_;
};

}  // namespace mongolock
