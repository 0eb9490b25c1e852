// Command-line options, with mongod's flag names so the harness starts mongosim and mongod
// with one command line: --port, --bind_ip, --bind_ip_all, --replSet, --dbpath,
// --setParameter name=value (repeatable), --help; and mongosim's own test-only
// --clockOffsetMillis N (server/clock_offset.h). Both "--flag value" and "--flag=value" work.
//
// Pure; no global state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mongosim::server {

struct ServerOptions {
  int32_t port = 27017;
  std::vector<std::string> bind_ips = {"127.0.0.1"};
  bool bind_ip_all = false;
  std::string repl_set;                     // empty: standalone
  std::string dbpath;                       // empty: in memory only (server/durability.h)
  std::vector<std::string> set_parameters;  // "name=value", validated by ServerParameters
  int64_t clock_offset_ms = 0;              // --clockOffsetMillis, within ±kMaxClockOffsetMs
  std::vector<std::string> argv;            // as given, for getCmdLineOpts

  // The "host:port" this member answers as in hello's me/hosts: the first --bind_ip address
  // (the machine's hostname with --bind_ip_all) and the port.
  std::string self_host() const;
};

struct ParsedCommandLine {
  std::optional<ServerOptions> options;  // set when the server should start
  bool help = false;                     // --help: print usage_text() and exit 0
  std::string error;                     // otherwise: what was wrong (exit 2)
};

ParsedCommandLine parse_command_line(int argc, const char* const* argv);
std::string usage_text();

}  // namespace mongosim::server
