// mongolock::Handle: proof of one hold of one lock (exclusive, or a shared hold of an RwLock).
//
// A Handle is move-only. While it is valid (acquired, not yet released or moved from):
//   * fencing_token() is the token the server minted for this hold (for a shared hold: its
//     epoch's token, common to every reader live with it); pass it to every resource you
//     access under the lock and let the resource refuse tokens lower than the highest it has
//     seen. The token is the only protection against a holder that was paused or partitioned
//     past its lease (no lease lock can prevent that; see mongolock.h "Fencing").
//   * the Provider's background threads extend the lease every extension_cadence_ms (if
//     auto_extend), on one of its extension workers;
//   * the Provider's timer thread marks the hold lost at lease_deadline(), whatever the
//     extensions are doing (they may be blocked in requests during a partition), and a notifier
//     thread then fires the lost notification. A Handle has no thread of its own (provider.h
//     "Threads").
// Once lost, a Handle stays lost (lost() never goes back to false). release() and the destructor
// send one owner-checked release and never throw. In a process forked after the acquire they
// do nothing (the hold is the parent's; see mongolock.h [fork]).
//
// Thread rules: release(), extend() and move/destruction from one thread at a time.
// fencing_token(), lost(), lost_token(), wait_lost(), lease_deadline(), on_lost() may be called
// from any thread concurrently with each other and with the Provider's background threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>

namespace mongolock {

class Handle;
namespace detail {
class Lease;
// The library's one way to make a valid Handle (a Handle's constructor from a Lease is private).
Handle make_handle(std::shared_ptr<Lease> lease);
}  // namespace detail

// What a release did: removed this hold (kReleased), found it already gone (kNotHeld: the
// server answered that no hold with this id exists -- expired and taken, force-released -- or
// this Handle was already released, or moved from, or is the parent's after fork()), or cannot
// say (kUnknown: the request timed out, was refused by the server, e.g. NotWritablePrimary, or
// was never sent, e.g. no pooled client in time; it may or may not have been applied, and if
// not, the hold stays on the server until its lease ends, extended by nobody).
enum class ReleaseResult { kReleased, kNotHeld, kUnknown };

class Handle {
 public:
  Handle() = default;  // an invalid handle (valid() == false)
  Handle(Handle&& other) noexcept = default;
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle();

  bool valid() const { return lease_ != nullptr; }

  // Releases the hold (one owner-checked round trip) after taking it off the Provider's
  // background threads: an extension of it in flight is waited for (unless release() is called
  // from inside that extension's observer or this hold's lost callback); afterwards nothing of
  // this hold runs and no event of it is emitted.
  // Returns true iff this call removed the caller's own hold on the server; false if the hold
  // was already gone (expired and taken, force-released), or the release was refused, never
  // sent or timed out (then the hold, if it stayed, lapses by itself at its lease end). Never
  // throws. The handle becomes invalid.
  bool release() noexcept;
  // release() that tells a refused release from one whose outcome is unknown. An invalid
  // handle gives kNotHeld. release() == (release_result() == ReleaseResult::kReleased).
  ReleaseResult release_result() noexcept;

  // Extends the lease now (one round trip), as the background extender does. Returns true iff
  // the server extended it; a refused or failed extension never moves lease_deadline(). An
  // expired lease is never revived, even if nobody else took the lock. Throws InvalidArgument
  // on an invalid handle; never throws for server errors.
  bool extend();

  int64_t fencing_token() const;
  const std::string& lock_name() const;
  // Random 128-bit id (32 hex chars) of this hold, stored in the lock document.
  const std::string& acquisition_id() const;

  // True once the lost notification has fired or lease_deadline() has passed: the client can
  // no longer be sure it holds the lock. Sticky.
  bool lost() const;
  // Requested when the hold is lost (not on a normal release).
  std::stop_token lost_token() const;
  // Calls `callback` once when the hold is lost: on a notifier thread of the Provider (the
  // deadline passed, or a background extension was refused), on the caller of extend() (refused
  // there), or on this caller at once if the hold is already lost. Not called on a normal
  // release. The callback may call release() or drop this Handle. A slow callback delays no
  // other hold's notification while fewer than 16 callbacks of the Provider block at once
  // (provider.h "Threads"). At most 64 callbacks.
  void on_lost(std::function<void()> callback);
  // Waits until lost or `timeout` passed; returns lost().
  bool wait_lost(std::chrono::milliseconds timeout) const;
  // The client's view of the lease end: send time of the last successful acquire/extend request
  // + expiry_ms - lost_safety_margin_ms. The lost notification fires at this instant (see
  // mongolock.h "Assumptions" for when the server's lease may end earlier).
  std::chrono::steady_clock::time_point lease_deadline() const;

 private:
  friend Handle detail::make_handle(std::shared_ptr<detail::Lease> lease);
  explicit Handle(std::shared_ptr<detail::Lease> lease);

  std::shared_ptr<detail::Lease> lease_;
};

}  // namespace mongolock
