// The reply relay behind the reply-delay fault: a TCP relay that forwards each client's requests
// to its upstream at once and holds the upstream's replies for the current delay before passing
// them on, so a reply can arrive late after its command executed.
//
// In a worker's network namespace a redirect rule sends the worker's connections to the members
// to this relay; the upstream of each accepted connection is then its original destination
// (SO_ORIGINAL_DST), or a fixed upstream when one is given. The relay's own upstream connections
// carry a mark (SO_MARK) so the redirect rule can skip them.
//
// Contract:
//  - client -> upstream bytes are forwarded as soon as they are read (buffered only until the
//    upstream connect completes or while the upstream socket is full);
//  - upstream -> client: each chunk read is stamped release_at = now (CLOCK_MONOTONIC) + the
//    delay file's value at that moment, and chunks reach the client in the order read, none
//    before its release time (a chunk stamped earlier than the chunk before it waits for it);
//  - the delay file holds a decimal number of milliseconds in 0..kRelayMaxDelayMs (surrounding
//    whitespace ignored); missing or empty means 0. It is read again on every upstream read.
//    Invalid content leaves the delay at its last good value and is reported on stderr once per
//    distinct content. Writers should replace the file atomically (write elsewhere, rename):
//    a reader can otherwise see it empty, i.e. 0, between a truncate and a write;
//  - EOF from the upstream is passed on (shutdown of the client's write side) once every held
//    chunk was delivered; EOF from the client is passed on at once after the bytes before it.
//    A pair is closed when both directions are done, or at once, both sides reset, on an error
//    of either side (held bytes are dropped);
//  - a connection whose original destination is the relay's own address is refused (closed),
//    so the relay never connects to itself.
//
// What it changes beyond reply timing: the client's connect completes when the relay accepts,
// before the upstream connect does; an unreachable upstream shows as a connection closed after
// the upstream connect fails, not as a connect timeout.
//
// Limits: at most kRelayMaxPairs connection pairs (fewer when the open-file limit is lower);
// a connection beyond them is accepted and closed at once. At most kRelayMaxHeldBytes of
// replies held per pair and kRelayMaxPendingBytes of requests waiting for the upstream: above
// either, the relay stops reading that side until it drains (back-pressure, not loss).
//
// Thread rules: one thread runs run(); request_stop() may be called from any thread and from a
// signal handler (it only stores an atomic flag and writes to an eventfd).
#pragma once

#include <netinet/in.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "run/unique_fd.h"

namespace locklab {

inline constexpr int kRelayMaxPairs = 1024;
inline constexpr size_t kRelayMaxHeldBytes = size_t{64} << 20;
inline constexpr size_t kRelayMaxPendingBytes = size_t{64} << 20;
inline constexpr int64_t kRelayMaxDelayMs = 600'000;
inline constexpr size_t kRelayReadChunkBytes = size_t{64} << 10;
inline constexpr size_t kRelayMaxDelayFileBytes = 64;

// An IPv4 address and port.
struct Ipv4Endpoint {
  in_addr_t address_be = 0;  // network byte order
  uint16_t port = 0;         // host byte order
  std::string text() const;  // "A.B.C.D:PORT"
  bool operator==(const Ipv4Endpoint&) const = default;
};

// Parses "A.B.C.D:PORT" (a dotted IPv4 address, no host names; PORT 0..65535). On failure
// returns nullopt and says why in `why`.
std::optional<Ipv4Endpoint> parse_ipv4_endpoint(std::string_view text, std::string& why);

// The delay file's content as milliseconds: decimal digits in 0..kRelayMaxDelayMs, surrounding
// whitespace ignored, empty = 0. nullopt when anything else.
std::optional<int64_t> parse_delay_ms(std::string_view content);

struct ReplyRelayOptions {
  Ipv4Endpoint listen;                   // port 0 = any free port (see ReplyRelay::port())
  std::optional<Ipv4Endpoint> upstream;  // unset = each connection's original destination
  std::string delay_file;
  uint32_t mark = 0;  // SO_MARK of the upstream connections; 0 = none
};

// Thrown by the constructor when the listening socket cannot be bound; the text names the
// address and the errno text.
class RelayBindError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ReplyRelay {
 public:
  // Binds and listens (SO_REUSEADDR). Throws RelayBindError when binding fails and
  // std::system_error for other setup failures.
  explicit ReplyRelay(ReplyRelayOptions options);
  ~ReplyRelay();
  ReplyRelay(const ReplyRelay&) = delete;
  ReplyRelay& operator=(const ReplyRelay&) = delete;

  uint16_t port() const;  // the bound port (host byte order)
  // Relays until request_stop(), then closes every connection and returns.
  void run();
  // Async-signal-safe.
  void request_stop() noexcept;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace locklab
