// Loopback connections for tests. A port for a test server comes from the harness's
// PortReservation (db/port_reservation.h), which MongosimNode holds for its whole life.
//
// Thread rules: none (no shared state).
#pragma once

namespace locklab::testkit {

// A blocking TCP connection to 127.0.0.1:port (close-on-exec); -1 when refused or on error.
int connect_loopback(int port);

}  // namespace locklab::testkit
