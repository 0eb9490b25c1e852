// mongolock errors: every failure the library reports is one of these types.
//
// Error            base of all; what() names the operation, the lock and the cause.
// InvalidArgument  bad input (name, option, timeout); thrown before any round trip to the server.
// Timeout          acquire() waited `timeout` without obtaining the lock. The lock is NOT held by
//                  the caller: every attempt whose outcome was uncertain was resolved first.
// Cancelled        the caller's std::stop_token was requested while waiting. Not held.
// UnknownOutcome   an acquire was sent (once; the driver does not retry it) but its outcome
//                  could not be learned (reply lost, write concern timed out, a server error
//                  that may follow an applied write) and resolving it failed too, or the lock
//                  document already keeps the most tombstones it may (1000, mongolock.h
//                  "Unknown outcomes"). The caller may or may not hold the lock on the server, now
//                  or later (the request may still be queued). A hold, if any, is extended by
//                  nobody and lapses expiry_ms after the server RAN the request.
//                  `lease_expires_by` = send time + expiry_ms on the client's steady clock: the
//                  lapse instant only if the server ran it at once; a request held up in the
//                  network or the server lapses later by that delay. It is a lower bound on the
//                  lapse, not an upper one; no upper bound exists without one on the delay.
// ServerError      the server or driver refused a request in a way that is neither contention
//                  nor uncertainty (authorization, bad collection, unsupported command). For an
//                  acquire it is thrown only after the attempt was resolved: not held.
// Error (itself)   also: a Provider at its hold limit, a granted hold whose Provider's
//                  background threads could not start (the hold was given back first; only
//                  the first hold of a Provider starts them), or a plain collection
//                  that still has the expiresAt TTL index of earlier versions (mongolock.h
//                  [index]; nothing was sent). Not held.
//
// Thread rules: plain value types.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>

namespace mongolock {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class InvalidArgument : public Error {
 public:
  using Error::Error;
};

class Timeout : public Error {
 public:
  using Error::Error;
};

class Cancelled : public Error {
 public:
  using Error::Error;
};

class UnknownOutcome : public Error {
 public:
  UnknownOutcome(const std::string& what, std::chrono::steady_clock::time_point expires_by)
      : Error(what), lease_expires_by(expires_by) {}
  std::chrono::steady_clock::time_point lease_expires_by;
};

class ServerError : public Error {
 public:
  ServerError(const std::string& what, int domain_value, int code_value)
      : Error(what), domain(domain_value), code(code_value) {}
  int domain;  // libmongoc error domain (MONGOC_ERROR_*), error API version 2
  int code;    // libmongoc or server error code
};

}  // namespace mongolock
