// Loopback ports for test servers.
//
// free_port() is the harness's own port picking (db/admin.h pick_free_port): a port the kernel
// handed out a moment ago, free unless another process takes it before the server binds it;
// MongosimNode covers that window by starting again on another port.
//
// Thread rules: none (no shared state).
#pragma once

namespace locklab::testkit {

// A TCP port on 127.0.0.1 that was free a moment ago. Throws std::runtime_error.
int free_port();

// A blocking TCP connection to 127.0.0.1:port (close-on-exec); -1 when refused or on error.
int connect_loopback(int port);

}  // namespace locklab::testkit
