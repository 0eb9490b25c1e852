#include "db/port_reservation.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace locklab {
namespace {

[[noreturn]] void fail(int fd, const char* call) {
  const int saved = errno;
  if (fd >= 0) ::close(fd);
  throw std::runtime_error(std::string("cannot reserve a loopback port: ") + call + ": " +
                           std::strerror(saved));
}

}  // namespace

PortReservation::PortReservation() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail(fd, "socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  // Bound before SO_REUSEADDR is set: the kernel then picks a port no socket holds at all and
  // marks it not shareable. (Kernel 6.18 keeps other bind(0)s off a port bound the other way
  // round too; this order does not lean on that.)
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) fail(fd, "bind");
  const int on = 1;
  // With it set now, a server's own SO_REUSEADDR bind and listen on the port succeed.
  if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0) fail(fd, "setsockopt");
  socklen_t length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    fail(fd, "getsockname");
  }
  fd_ = fd;
  port_ = ntohs(address.sin_port);
  if (port_ <= 0) fail(-1, "getsockname gave port 0");
}

PortReservation::~PortReservation() {
  if (fd_ >= 0) ::close(fd_);
}

PortReservation::PortReservation(PortReservation&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), port_(std::exchange(other.port_, 0)) {}

PortReservation& PortReservation::operator=(PortReservation&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    port_ = std::exchange(other.port_, 0);
  }
  return *this;
}

}  // namespace locklab
