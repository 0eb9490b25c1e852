#include "db/process_db.h"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "checker/clock.h"
#include "db/admin.h"
#include "db/faketime_clock.h"
#include "run/noted_processes.h"

namespace locklab {
namespace {

namespace fs = std::filesystem;

constexpr int kMemberPort = 27017;
constexpr int64_t kKillWaitMs = 10'000;
constexpr size_t kLogTailBytes = 2000;

std::string member_name(int member) {
  return "m" + std::to_string(member);
}

}  // namespace

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t colon = dirs.find(':', start);
    const std::string dir = dirs.substr(start, colon == std::string::npos ? colon : colon - start);
    if (!dir.empty()) {
      const fs::path candidate = fs::path(dir) / name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return "";
}

namespace {

// Members on the host's loopback share its ports with every other set there (other runs, tests
// in parallel): the set gets a name of its own.
DbConfig placed(DbConfig config, Placement placement) {
  if (placement == Placement::kLoopback) config.set_name = unique_set_name();
  return config;
}

}  // namespace

ProcessDb::ProcessDb(DbConfig config, Supervisor& supervisor, std::string program,
                     Placement placement, std::string netns_refusal)
    : Db(placed(std::move(config), placement)),
      clock_offsets_ms_(static_cast<size_t>(size()), 0),
      supervisor_(supervisor),
      program_(std::move(program)),
      placement_(placement),
      netns_refusal_(std::move(netns_refusal)),
      pids_(static_cast<size_t>(size()), 0),
      paused_(static_cast<size_t>(size()), false),
      wrapped_(static_cast<size_t>(size()), false) {}

// The members themselves are the Supervisor's to kill if stop() was never called.
ProcessDb::~ProcessDb() {
  teardown();
}

std::string ProcessDb::name() const {
  return placement_ == Placement::kNetns ? "netns" : "loopback";
}

std::optional<std::string> ProcessDb::supports(FaultKind kind) const {
  if (placement_ == Placement::kLoopback && fault_row(kind).needs_network) {
    return "needs the netns backend" + (netns_refusal_.empty()
                                            ? std::string(" (--cluster netns; no root needed)")
                                            : ", which cannot run here: " + netns_refusal_);
  }
  return std::nullopt;
}

void ProcessDb::build_network() {
  network_ = std::make_unique<Network>(config().run_prefix);
  std::vector<std::string> roles;
  for (int m = 0; m < size(); ++m) roles.push_back(member_name(m));
  roles.push_back("ctl");
  for (const std::string& w : config().workers) roles.push_back(w);
  network_->add_hosts(roles);
}

void ProcessDb::start_relays() {
  relays_ = std::make_unique<ReplyRelays>(supervisor_, config().relay_program, config().run_prefix,
                                          config().data_dir, config().log_dir,
                                          std::string(Network::kSubnet) + ".0/24");
  for (const std::string& w : config().workers) relays_->start(network_->host(w));
}

std::optional<std::string> ProcessDb::helper_of(pid_t pid) const {
  return relays_ ? relays_->owner_of(pid) : std::nullopt;
}

void ProcessDb::start() {
  const int64_t deadline = steady_now_ms() + config().ready_timeout_ms;
  if (placement_ == Placement::kNetns && !network_) build_network();
  if (network_ && config().delays_replies && !relays_) start_relays();
  placements_.clear();
  if (!network_) reservations_.resize(static_cast<size_t>(size()));
  for (int m = 0; m < size(); ++m) {
    if (network_) {
      const Host& h = network_->host(member_name(m));
      placements_.push_back({h.netns, h.address, kMemberPort});
    } else {
      placements_.push_back({"", "127.0.0.1", reservations_.at(m).port()});
    }
  }
  for (int m = 0; m < size(); ++m) start_member(m);
  // Reap, so a member that exited is seen as gone now rather than at the deadline. Only the
  // start waits do this: no worker exists yet whose exit the run would need to hear about.
  const auto reap = [this] { supervisor_.poll(); };
  wait_all_answering(deadline, reap);
  initiate();
  prompt_first_election(deadline, reap);
  wait_ready(deadline, reap);
  check_interrupted();
  after_start();
}

void ProcessDb::start_member(int member) {
  const MemberPlacement& m = placements_.at(member);
  const std::string dbpath = config().data_dir + "/" + member_name(member);
  fs::create_directories(dbpath);
  SpawnOptions spawn;
  spawn.argv = wrapper(member);
  const bool wrapped = !spawn.argv.empty();  // the faketime program
  spawn.argv.insert(spawn.argv.end(), {program_, "--replSet", config().set_name, "--bind_ip",
                                       m.address, "--port", std::to_string(m.port), "--dbpath",
                                       dbpath, "--setParameter", "ttlMonitorSleepSecs=1"});
  spawn.netns = m.netns;
  spawn.log_path = config().log_dir + "/" + member_name(member) + ".log";
  pids_.at(member) = supervisor_.spawn(spawn);
  wrapped_.at(member) = wrapped;
  note_run_process(config().data_dir, pids_.at(member), wrapped);
}

void ProcessDb::note_member_ended(int member, pid_t pid) {
  if (wrapped_.at(member)) remove_faketime_files(pid);
  note_run_process_ended(config().data_dir, pid);
}

void ProcessDb::stop(int64_t grace_ms) {
  if (relays_) relays_->stop(grace_ms);
  for (int m = 0; m < size(); ++m) {
    signal_member(m, SIGCONT);  // a paused member cannot act on SIGTERM
    signal_member(m, SIGTERM);
  }
  for (int m = 0; m < size(); ++m) {
    const pid_t pid = pids_[m];
    if (pid > 0 && supervisor_.running(pid) && !supervisor_.wait_exit(pid, grace_ms)) {
      signal_member(m, SIGKILL);
      supervisor_.wait_exit(pid, grace_ms);
    }
    signal_member(m, SIGKILL);  // whatever is left of its group (a wrapper's child)
    if (pid > 0 && !supervisor_.running(pid)) note_member_ended(m, pid);
  }
}

void ProcessDb::teardown() {
  if (network_) network_->teardown();
}

std::string ProcessDb::host(int member) const {
  const MemberPlacement& m = placements_.at(member);
  return m.address + ":" + std::to_string(m.port);
}

std::string ProcessDb::uri(const std::string& app_name) const {
  std::string hosts;
  for (int i = 0; i < size(); ++i) hosts += (i ? "," : "") + host(i);
  return "mongodb://" + hosts + "/?replicaSet=" + config().set_name + "&appname=" + app_name;
}

std::string ProcessDb::worker_netns(const std::string& worker) const {
  return network_ ? network_->host(worker).netns : "";
}

std::string ProcessDb::admin_netns() const {
  return network_ ? network_->host("ctl").netns : "";
}

std::string ProcessDb::log_tail(int member) const {
  std::ifstream in(config().log_dir + "/" + member_name(member) + ".log", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > kLogTailBytes) text = "..." + text.substr(text.size() - kLogTailBytes);
  return text;
}

bool ProcessDb::running(int member) const {
  return pids_.at(member) > 0 && supervisor_.running(pids_.at(member));
}

void ProcessDb::kill_member(int member) {
  const pid_t pid = pids_.at(member);
  if (!running(member))
    throw std::runtime_error("member " + member_name(member) + " is not running");
  signal_member(member, SIGKILL);
  supervisor_.wait_exit(pid, kKillWaitMs);
  if (!supervisor_.running(pid)) note_member_ended(member, pid);
  pids_.at(member) = 0;
  paused_.at(member) = false;
}

void ProcessDb::restart_member(int member) {
  if (running(member)) return;
  start_member(member);
}

void ProcessDb::pause_member(int member) {
  if (!running(member) || !signal_member(member, SIGSTOP)) {
    throw std::runtime_error("member " + member_name(member) + " is not running");
  }
  paused_.at(member) = true;
}

void ProcessDb::resume_member(int member) {
  paused_.at(member) = false;
  if (!signal_member(member, SIGCONT)) {
    throw std::runtime_error("member " + member_name(member) +
                             " is not running: SIGCONT not delivered");
  }
}

bool ProcessDb::signal_member(int member, int sig) {
  const pid_t pid = pids_.at(member);
  if (pid <= 0) return false;
  // The member's process group: with faketime the member proper is the wrapper's child, and a
  // signal must reach it too (every spawned child leads its own group, run/process.h).
  const bool group = ::kill(-pid, sig) == 0;
  const bool leader = supervisor_.running(pid) && supervisor_.signal(pid, sig);
  return group || leader;
}

int64_t MongosimDb::set_clock_offset(int member, int64_t offset_ms) {
  const nlohmann::json reply = command(member, "admin", {{"mongosimSetClockOffset", offset_ms}});
  clock_offsets_ms_.at(member) = offset_ms;
  return reply.value("previousOffsetMillis", int64_t{0});
}

// The clock faults need mongosimSetClockOffset; a mongosim without it is refused here, before
// any worker starts, rather than producing a run whose clock faults silently did nothing.
void MongosimDb::after_start() {
  if (!config().moves_member_clocks) return;
  const nlohmann::json reply = try_command(0, "admin", {{"mongosimSetClockOffset", 0}});
  if (!reply_ok(reply)) {
    throw Unsupported(
        "clock faults need mongosim's mongosimSetClockOffset command, which this "
        "member program refuses: " +
        reply.value("errmsg", reply.dump()));
  }
}

MongodDb::MongodDb(DbConfig config, Supervisor& supervisor, std::string program,
                   Placement placement, std::string netns_refusal)
    : ProcessDb(std::move(config), supervisor, std::move(program), placement,
                std::move(netns_refusal)),
      faketime_(this->config().moves_member_clocks ? find_on_path("faketime") : "") {}

std::optional<std::string> MongodDb::supports(FaultKind kind) const {
  if (auto why = ProcessDb::supports(kind)) return why;
  if (fault_row(kind).clock == ClockMoved::kMember && faketime_.empty()) {
    return "moves a member's clock: clock faults on --mongod members need the faketime program "
           "(libfaketime), and none is on PATH; install faketime or remove those faults";
  }
  return std::nullopt;
}

std::vector<std::string> MongodDb::wrapper(int member) {
  if (faketime_.empty()) return {};
  // faketime preloads libfaketime and sets FAKETIME; `env -u FAKETIME` drops that spec so the
  // library reads the member's timestamp file instead, re-read on every call (NO_CACHE), which
  // is what lets set_clock_offset() move a running member's clock. Only the wall clock moves
  // (--exclude-monotonic): a member's timers, like mongod's, run on the monotonic clock.
  write_clock_file(clock_file(member), clock_offsets_ms_.at(member));
  return {faketime_,
          "-m",
          "--exclude-monotonic",
          "-f",
          "+0s",
          "env",
          "-u",
          "FAKETIME",
          "FAKETIME_TIMESTAMP_FILE=" + clock_file(member),
          "FAKETIME_NO_CACHE=1"};
}

int64_t MongodDb::set_clock_offset(int member, int64_t offset_ms) {
  if (faketime_.empty()) {
    throw std::runtime_error("clock faults on real mongod need faketime, which was not found");
  }
  const int64_t previous = clock_offsets_ms_.at(member);
  write_clock_file(clock_file(member), offset_ms);
  clock_offsets_ms_.at(member) = offset_ms;
  return previous;
}

std::string MongodDb::clock_file(int member) const {
  return config().data_dir + "/" + member_name(member) + ".faketime";
}

}  // namespace locklab
