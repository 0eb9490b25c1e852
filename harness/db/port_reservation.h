// A loopback TCP port held for a server that is not running yet, or is between a kill and its
// restart.
//
// Picking a free port and handing its number to a server leaves a window in which the kernel
// may give the same port to anyone else: to another test's bind(0), or, far more often, as the
// source port of an outbound connection (both come from the ephemeral range). A member that
// then starts, or restarts after a kill, fails with "Address already in use".
//
// A reservation closes that window for as long as it lives: a socket bound to 127.0.0.1:<port>
// without SO_REUSEADDR (so the kernel picks a port nobody holds), then given SO_REUSEADDR, and
// never listening. Linux then (measured, kernel 6.x, in a namespace with an eight-port range):
//   - refuses the port to any other bind(0) on 127.0.0.1, 0.0.0.0 or a dual-stack ::, with or
//     without SO_REUSEADDR, listening or not (one on 127.0.0.2 or a v6-only socket may share
//     the number: harmless, members bind 127.0.0.1);
//   - skips it as the source port of outbound connections;
//   - refuses a plain bind() to it (EADDRINUSE);
//   - lets a server that sets SO_REUSEADDR (mongosim's listener, mongod, Node's net.Server)
//     bind and listen on it, and listen again after a kill; a second listener is still refused.
// The test (harness/tests/port_reservation_test.cpp) repeats that measurement on the host it runs
// on; docs/architecture.md (Tests and tiers) says why every loopback port is one of these.
//
// Invariants: port() is in 1..65535 and held from construction to destruction (or until moved
// from, when port() is 0). Thread rules: none (the object owns one descriptor, close-on-exec).
#pragma once

namespace locklab {

class PortReservation {
 public:
  // Throws std::runtime_error naming the call that failed (no port left, no descriptors).
  PortReservation();
  ~PortReservation();
  PortReservation(PortReservation&& other) noexcept;
  PortReservation& operator=(PortReservation&& other) noexcept;
  PortReservation(const PortReservation&) = delete;
  PortReservation& operator=(const PortReservation&) = delete;

  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace locklab
