#include "server/options.h"

#include <unistd.h>

#include <charconv>
#include <climits>
#include <string_view>

#include "server/clock_offset.h"

namespace mongosim::server {

namespace {

constexpr size_t kMaxHostNameBytes = 256;

std::vector<std::string> split_commas(std::string_view s) {
  std::vector<std::string> out;
  while (true) {
    size_t comma = s.find(',');
    std::string_view part = s.substr(0, comma);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (!part.empty()) out.emplace_back(part);
    if (comma == std::string_view::npos) return out;
    s.remove_prefix(comma + 1);
  }
}

// Applies one flag that takes a value. Returns an error text or empty.
std::string apply_valued(std::string_view flag, std::string_view value, ServerOptions& o) {
  if (flag == "--port") {
    int32_t port = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), port);
    if (ec != std::errc() || ptr != value.data() + value.size() || port < 1 || port > 65535) {
      return "--port expects a number in [1, 65535], got '" + std::string(value) + "'";
    }
    o.port = port;
  } else if (flag == "--bind_ip") {
    o.bind_ips = split_commas(value);
    if (o.bind_ips.empty()) return "--bind_ip expects at least one address";
  } else if (flag == "--replSet") {
    if (value.empty()) return "--replSet expects a set name";
    o.repl_set = std::string(value);
  } else if (flag == "--dbpath") {
    o.dbpath = std::string(value);
  } else if (flag == "--setParameter") {
    o.set_parameters.emplace_back(value);
  } else if (flag == "--clockOffsetMillis") {
    return parse_clock_offset_flag(value, o.clock_offset_ms);
  } else {
    return "unrecognised option '" + std::string(flag) + "'";
  }
  return {};
}

bool takes_value(std::string_view flag) {
  return flag == "--port" || flag == "--bind_ip" || flag == "--replSet" || flag == "--dbpath" ||
         flag == "--setParameter" || flag == "--clockOffsetMillis";
}

}  // namespace

std::string ServerOptions::self_host() const {
  std::string host = bind_ips.empty() ? "127.0.0.1" : bind_ips.front();
  if (bind_ip_all || host == "0.0.0.0") {
    char name[kMaxHostNameBytes] = {};
    host = gethostname(name, sizeof name - 1) == 0 ? name : "localhost";
  }
  return host + ":" + std::to_string(port);
}

ParsedCommandLine parse_command_line(int argc, const char* const* argv) {
  ParsedCommandLine out;
  ServerOptions o;
  for (int i = 0; i < argc; ++i) o.argv.emplace_back(argv[i]);
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      out.help = true;
      return out;
    }
    if (arg == "--bind_ip_all") {
      o.bind_ip_all = true;
      o.bind_ips = {"0.0.0.0"};
      continue;
    }
    std::string_view flag = arg;
    std::string_view value;
    bool has_value = false;
    if (size_t eq = arg.find('='); eq != std::string_view::npos && arg.starts_with("--")) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    if (!takes_value(flag)) {
      out.error = "unrecognised option '" + std::string(arg) + "' (see --help)";
      return out;
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        out.error = "option '" + std::string(flag) + "' requires a value";
        return out;
      }
      value = argv[++i];
    }
    if (std::string err = apply_valued(flag, value, o); !err.empty()) {
      out.error = err;
      return out;
    }
  }
  out.options = std::move(o);
  return out;
}

std::string usage_text() {
  return "Usage: mongosim [options]\n"
         "A MongoDB-wire-compatible server (MongoDB 7.0 personality).\n\n"
         "Options (mongod's names):\n"
         "  --port ARG                 port to listen on (default 27017)\n"
         "  --bind_ip ARG              comma-separated addresses to bind (default 127.0.0.1)\n"
         "  --bind_ip_all              bind to all IPv4 addresses\n"
         "  --replSet ARG              run as a member of replica set ARG (needs replSetInitiate)\n"
         "  --dbpath ARG               data directory: a journal of every write (fsynced for\n"
         "                             j:true and majority writes, and every 100 ms), the\n"
         "                             term, vote and replica-set config, and rollback files;\n"
         "                             a restart on it recovers them. Without it, data is kept\n"
         "                             in memory only\n"
         "  --setParameter NAME=VALUE  set a server parameter, repeatable\n"
         "                             (ttlMonitorSleepSecs, ttlMonitorEnabled, logLevel,\n"
         "                             enableTestCommands)\n"
         "  --clockOffsetMillis N      test-only: run this member's clock N ms ahead (negative:\n"
         "                             behind), within +-10 years; also settable at run time\n"
         "                             with {mongosimSetClockOffset: N} on admin\n"
         "  --help                     show this text\n";
}

}  // namespace mongosim::server
