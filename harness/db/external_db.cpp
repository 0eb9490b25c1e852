#include "db/external_db.h"

#include <stdexcept>

#include "checker/clock.h"

namespace locklab {
namespace {

constexpr size_t kHostsMax = 50;
constexpr int64_t kPrimaryWaitMs = 30'000;

DbConfig checked(DbConfig config, const std::string& uri) {
  const size_t hosts = uri_hosts(uri).size();
  if (static_cast<int>(hosts) != config.members) {
    throw std::invalid_argument("cluster.members is " + std::to_string(config.members) +
                                " but --external-uri names " + std::to_string(hosts) + " hosts");
  }
  return config;
}

}  // namespace

std::vector<std::string> uri_hosts(const std::string& uri) {
  const std::string scheme = "mongodb://";
  if (!uri.starts_with(scheme)) {
    throw std::invalid_argument("--external-uri must start with mongodb:// (got " + uri + ")");
  }
  std::string list = uri.substr(scheme.size());
  list = list.substr(0, list.find_first_of("/?"));
  if (const size_t at = list.rfind('@'); at != std::string::npos) list = list.substr(at + 1);
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size() && out.size() < kHostsMax) {
    const size_t comma = list.find(',', start);
    const std::string host = list.substr(start, comma == std::string::npos ? comma : comma - start);
    const size_t colon = host.rfind(':');
    const std::string address = host.substr(0, colon);
    int port = 27017;
    try {
      if (colon != std::string::npos) port = std::stoi(host.substr(colon + 1));
    } catch (const std::exception&) {
      throw std::invalid_argument("--external-uri: bad port in \"" + host + "\"");
    }
    if (address.empty()) throw std::invalid_argument("--external-uri: empty host in " + uri);
    out.push_back(address + ":" + std::to_string(port));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

ExternalDb::ExternalDb(DbConfig config, std::string uri)
    : Db(checked(std::move(config), uri)), uri_(std::move(uri)), hosts_(uri_hosts(uri_)) {}

std::optional<std::string> ExternalDb::supports(FaultKind kind) const {
  const FaultKindRow& row = fault_row(kind);
  const std::string head =
      "is not possible on an external cluster (only worker faults, "
      "step-down and freeze): ";
  if (row.needs_network) return head + "it cuts the network, and the harness placed no member";
  if (row.signals_members) {
    return head + "it pauses, kills or restarts member processes, which are not the harness's";
  }
  if (row.clock == ClockMoved::kMember) return head + "it moves a member's clock";
  return std::nullopt;
}

std::optional<std::string> ExternalDb::supports_random_mix() const {
  return "is not supported with --external-uri";
}

void ExternalDb::start() {
  // Someone else's set, already initiated: ready is the same test as for ours.
  wait_ready(steady_now_ms() + config().ready_timeout_ms);
  int primary = wait_for_primary(kPrimaryWaitMs);
  if (primary < 0) throw std::runtime_error("no primary to drop the database on");
  command(primary, config().database, {{"dropDatabase", 1}, {"writeConcern", {{"w", "majority"}}}});
}

std::string ExternalDb::uri(const std::string& app_name) const {
  const size_t scheme_end = uri_.find("://");
  const bool has_path =
      uri_.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3) != std::string::npos;
  const std::string sep = uri_.find('?') != std::string::npos ? "&" : has_path ? "?" : "/?";
  return uri_ + sep + "appname=" + app_name;
}

void ExternalDb::refuse(const char* what) const {
  throw std::runtime_error(std::string(what) + " is not possible on an external cluster");
}

void ExternalDb::kill_member(int /*member*/) {
  refuse("kill-member");
}
void ExternalDb::restart_member(int /*member*/) {
  refuse("restarting a member");
}
void ExternalDb::pause_member(int /*member*/) {
  refuse("pause-member");
}
void ExternalDb::resume_member(int /*member*/) {
  refuse("resuming a member");
}
int64_t ExternalDb::set_clock_offset(int /*member*/, int64_t /*offset_ms*/) {
  refuse("moving a member's clock");
}

}  // namespace locklab
