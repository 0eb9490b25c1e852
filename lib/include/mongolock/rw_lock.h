// mongolock::RwLock: a named reader/writer lease lock (the model of square/mongo-lock, with
// server-clock leases and fencing tokens).
//
// Rules: at most one exclusive hold; shared holds may coexist with each other, up to
// `max_shared` (0 = unlimited, i.e. a plain reader lock; N > 0 makes it a counting semaphore);
// exclusive and shared never coexist. An expired hold of either kind blocks nobody: the acquire
// pipeline drops expired shared entries and ignores an expired exclusive hold, deciding on the
// server clock ($$NOW). Tokens come from one per-name counter: each exclusive hold gets a new
// one; shared holds get their epoch's token (shared by every reader live at the same time, above
// every earlier writer's, below every later writer's), so a resource applies the same rule to
// both kinds: refuse a token lower than the highest seen (mongolock.h "Fencing"). Same expiry,
// extension and lost-notification guarantees as Lock. No fairness: a steady stream of readers
// can starve a writer (and keeps one epoch alive).
// RwLock documents live in Options::rw_collection, separate from plain locks, so a name used
// for both a Lock and an RwLock denotes two unrelated locks.
//
// Thread rules: all methods may be called from any thread concurrently.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "mongolock/handle.h"
#include "mongolock/lock.h"

namespace mongolock {

class Provider;

// Made by Provider::create_rw_lock.
class RwLock {
 public:
  Handle acquire_shared(std::chrono::milliseconds timeout = kWaitForever,
                        std::stop_token stop = {});
  std::optional<Handle> try_acquire_shared(
      std::chrono::milliseconds timeout = std::chrono::milliseconds(0), std::stop_token stop = {});
  Handle acquire_exclusive(std::chrono::milliseconds timeout = kWaitForever,
                           std::stop_token stop = {});
  std::optional<Handle> try_acquire_exclusive(
      std::chrono::milliseconds timeout = std::chrono::milliseconds(0), std::stop_token stop = {});

  const std::string& name() const { return name_; }
  int32_t max_shared() const { return max_shared_; }

 private:
  friend class Provider;
  // Throws InvalidArgument for a bad name or max_shared < 0 or > 100'000.
  RwLock(std::shared_ptr<detail::Context> context, std::string name, int32_t max_shared = 0);

  std::shared_ptr<detail::Context> context_;
  std::string name_;
  int32_t max_shared_;
};

}  // namespace mongolock
