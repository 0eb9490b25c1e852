// acquire_loop: the waiting acquire shared by Lock and RwLock.
//
// One attempt now; while busy, sleep per the backoff policy and retry until `timeout`, with one
// last attempt when the timeout falls inside a sleep. Unknown outcomes are resolved by an
// owner-checked release of the attempt's own id before the loop goes on; if that fails the
// loop throws UnknownOutcome. Returns std::nullopt only when the caller does not hold the lock.
// Thread rules: reentrant; one call per waiting thread.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <stop_token>

#include "context.h"
#include "hold_spec.h"
#include "mongolock/handle.h"

namespace mongolock::detail {

inline constexpr int kResolveAttemptsMax = 3;

// `unchecked`, when given, receives why the last attempt sent nothing because the collection's
// indexes could not be checked (empty when the last attempt was sent).
std::optional<Handle> acquire_loop(const std::shared_ptr<Context>& context, const HoldSpec& spec,
                                   std::chrono::milliseconds timeout, std::stop_token stop,
                                   std::string* unchecked = nullptr);

// acquire_loop that throws Timeout instead of returning std::nullopt; the message says when the
// last attempt could not check the indexes (a missing listIndexes privilege reads as busy
// otherwise).
Handle acquire_or_throw(const std::shared_ptr<Context>& context, const HoldSpec& spec,
                        std::chrono::milliseconds timeout, std::stop_token stop);

}  // namespace mongolock::detail
