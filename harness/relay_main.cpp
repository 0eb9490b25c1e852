// locklab-relay: the reply relay (nemesis/reply_relay.h) as a program. The reply-delay fault
// starts one in each worker's network namespace, waits for its one stdout line `ready <port>`,
// and stops it with SIGTERM (exit 0). Exit 2: bad arguments (one line naming the flag and the
// value); exit 1: the address cannot be bound, or the relay failed.
//
// SIGTERM and SIGINT are caught by a handler that only calls ReplyRelay::request_stop (an atomic
// flag and an eventfd write, async-signal-safe); it is installed before `ready` is printed.
#include <signal.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>
#include <optional>
#include <string>

#include "nemesis/reply_relay.h"

namespace {

// Set before the handlers are installed, cleared before the relay is destroyed.
std::atomic<locklab::ReplyRelay*> g_relay{nullptr};

extern "C" void on_stop_signal(int) {
  if (locklab::ReplyRelay* relay = g_relay.load()) relay->request_stop();
}

int bad_argument(const std::string& flag, const std::string& value, const std::string& why) {
  std::cerr << "locklab-relay: " << flag << " \"" << value << "\": " << why << std::endl;
  return 2;
}

// Room for every connection pair: two sockets each, up to the hard limit.
void raise_open_file_limit() {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0) return;
  rlim_t wanted = 2 * locklab::kRelayMaxPairs + 64;
  if (files.rlim_cur != RLIM_INFINITY && files.rlim_cur < wanted) {
    files.rlim_cur = files.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, files.rlim_max);
    setrlimit(RLIMIT_NOFILE, &files);
  }
}

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

// The options as given, before validation.
struct Arguments {
  std::string listen;
  std::string delay_file;
  std::string mark;
  std::string upstream;
};

// Validates the arguments into relay options; on failure prints one line and returns nullopt.
std::optional<locklab::ReplyRelayOptions> to_options(const Arguments& arguments) {
  locklab::ReplyRelayOptions options;
  std::string why;
  std::optional<locklab::Ipv4Endpoint> listen = locklab::parse_ipv4_endpoint(arguments.listen, why);
  if (!listen) return bad_argument("--listen", arguments.listen, why), std::nullopt;
  options.listen = *listen;
  if (arguments.delay_file.empty())
    return bad_argument("--delay-file", arguments.delay_file, "an empty path"), std::nullopt;
  options.delay_file = arguments.delay_file;
  if (!arguments.mark.empty()) {
    const std::string& text = arguments.mark;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), options.mark);
    if (error != std::errc() || end != text.data() + text.size())
      return bad_argument("--mark", text, "not a number in 0..4294967295"), std::nullopt;
  }
  if (!arguments.upstream.empty()) {
    options.upstream = locklab::parse_ipv4_endpoint(arguments.upstream, why);
    if (!options.upstream) return bad_argument("--upstream", arguments.upstream, why), std::nullopt;
    if (options.upstream->port == 0)
      return bad_argument("--upstream", arguments.upstream, "port 0"), std::nullopt;
    if (*options.upstream == options.listen)
      return bad_argument("--upstream", arguments.upstream, "the relay's own --listen address"),
             std::nullopt;
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  Arguments arguments;
  CLI::App app{"locklab-relay: forwards requests at once, holds replies for the delay file's ms"};
  app.add_option("--listen", arguments.listen, "A.B.C.D:PORT to listen on (PORT 0 = any)")
      ->required();
  app.add_option("--delay-file", arguments.delay_file,
                 "file holding the reply delay in ms (0..600000; missing or empty = 0)")
      ->required();
  app.add_option("--mark", arguments.mark, "SO_MARK of the upstream connections (0 = none)");
  app.add_option("--upstream", arguments.upstream,
                 "A.B.C.D:PORT to connect to (default: each connection's original destination)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << "locklab-relay: " << e.what() << std::endl;
    return 2;
  }
  std::optional<locklab::ReplyRelayOptions> options = to_options(arguments);
  if (!options) return 2;
  raise_open_file_limit();
  int code = 0;
  try {
    locklab::ReplyRelay relay(*options);
    g_relay.store(&relay);
    install_stop_handlers();
    std::printf("ready %u\n", static_cast<unsigned>(relay.port()));
    std::fflush(stdout);
    try {
      relay.run();
    } catch (const std::exception& e) {
      std::cerr << "locklab-relay: " << e.what() << std::endl;
      code = 1;
    }
    g_relay.store(nullptr);
  } catch (const std::exception& e) {  // setup: the bind, or the epoll and eventfd
    std::cerr << "locklab-relay: " << e.what() << std::endl;
    return 1;
  }
  return code;
}
