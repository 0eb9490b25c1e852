#include "db/docker_db.h"

#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>

#include "checker/clock.h"
#include "db/docker_image.h"
#include "db/docker_subnet.h"
#include "db/faketime_clock.h"

namespace locklab {
namespace {

constexpr int kMemberPort = 27017;
constexpr int kSubnetTries = 40;
constexpr int kMemberOctet = 11;
constexpr int kWorkerOctet = 101;
constexpr int64_t kGoneWaitMs = 10'000;
constexpr int64_t kPollMs = 50;
constexpr size_t kLogTailBytes = 2000;
// The placeholder a worker host runs: sleep, in busybox (our image) and coreutils (mongo:7.0).
constexpr const char* kSleepSeconds = "2000000000";

std::string member_role(int member) {
  return "m" + std::to_string(member);
}

std::string next_run_id() {
  static int count = 0;
  return own_identity() + "-" + std::to_string(count++);
}

bool image_is_mongosim(const DockerDbOptions& o) {
  return !o.kind || *o.kind == ImageKind::kMongosim;
}

// Where a member run as mongod under libfaketime finds its timestamp file.
constexpr const char* kClockMount = "/locklab-clock";

}  // namespace

ImageKind parse_image_kind(const std::string& text) {
  if (text == "mongosim") return ImageKind::kMongosim;
  if (text == "mongod") return ImageKind::kMongod;
  throw std::invalid_argument("unknown image kind '" + text + "' (mongosim or mongod)");
}

DockerDb::DockerDb(DbConfig config, DockerDbOptions options)
    : Db(std::move(config)),
      options_(std::move(options)),
      mongosim_(image_is_mongosim(options_)),
      run_id_(next_run_id()),
      network_("locklab-" + run_id_),
      image_(options_.image) {
  if (size() < 1 || size() > kMembersMax) {
    throw std::invalid_argument("--cluster docker runs 1.." + std::to_string(kMembersMax) +
                                " members, not " + std::to_string(size()));
  }
  if (static_cast<int>(this->config().workers.size()) > kWorkersMax) {
    throw std::invalid_argument("--cluster docker runs at most " + std::to_string(kWorkersMax) +
                                " workers");
  }
  if (image_.empty() && (options_.programs.empty() || options_.dockerfile.empty())) {
    throw std::invalid_argument("--cluster docker needs an image or the programs to build one");
  }
  if (!image_.empty() && !options_.kind) {
    throw std::invalid_argument("--cluster docker: image " + image_ +
                                " needs its kind (mongosim or mongod)");
  }
  if (mongosim_ && !options_.faketime_library.empty()) {
    throw std::invalid_argument(
        "--cluster docker: a faketime library is for mongod images only "
        "(mongosim members move their clocks by command)");
  }
  paused_.assign(size(), false);
  killed_.assign(size(), false);
  clock_offsets_ms_.assign(size(), 0);
  own_ends_.assign(size(), 0);
  ended_.assign(size(), std::nullopt);
}

DockerDb::~DockerDb() {
  teardown();
}

std::string DockerDb::member_program() const {
  return "docker image " + (image_.empty() ? "locklab/mongosim (built here)" : image_) + " (" +
         (mongosim_ ? "mongosim" : "mongod") + ")";
}

std::optional<std::string> DockerDb::supports(FaultKind kind) const {
  if (kind == FaultKind::kReplyDelay && options_.supervisor == nullptr) {
    return "is not available here: this docker backend has no supervisor to run the reply "
           "relays";
  }
  if (fault_row(kind).clock == ClockMoved::kMember && !mongosim_ &&
      options_.faketime_library.empty()) {
    return "moves a member's clock: image " + image_ +
           " has no clock lever (mongosim images have mongosimSetClockOffset; a mongod image "
           "needs libfaketime inside it, named with --image-faketime); use a mongosim image, "
           "name the image's libfaketime or remove those faults";
  }
  return std::nullopt;
}

std::vector<std::string> DockerDb::labels() const {
  return {"--label", "locklab.run=" + run_id_, "--label", "locklab.owner=" + own_identity()};
}

std::string DockerDb::container(const std::string& role) const {
  return "locklab-" + run_id_ + "-" + role;
}

std::string DockerDb::address(const std::string& role) const {
  if (subnet_prefix_.empty()) throw std::logic_error("DockerDb: addresses exist after start()");
  if (role.size() > 1 && role[0] == 'm') {
    return subnet_prefix_ + "." + std::to_string(kMemberOctet + std::stoi(role.substr(1)));
  }
  const auto& workers = config().workers;
  for (size_t k = 0; k < workers.size(); ++k) {
    if (workers[k] == role) return subnet_prefix_ + "." + std::to_string(kWorkerOctet + k);
  }
  throw std::out_of_range("no container with role '" + role + "'");
}

std::string DockerDb::host(int member) const {
  (void)paused_.at(member);  // std::out_of_range for a bad index
  return address(member_role(member)) + ":" + std::to_string(kMemberPort);
}

std::string DockerDb::uri(const std::string& app_name) const {
  std::string hosts;
  for (int i = 0; i < size(); ++i) hosts += (i ? "," : "") + host(i);
  return "mongodb://" + hosts + "/?replicaSet=" + config().set_name + "&appname=" + app_name;
}

pid_t DockerDb::container_pid(const std::string& role) const {
  const ToolResult r = engine_->run({"inspect", "-f", "{{.State.Pid}}", container(role)});
  if (r.code != 0) return 0;
  try {
    return static_cast<pid_t>(std::stol(r.output));
  } catch (const std::exception&) {
    return 0;
  }
}

std::string DockerDb::netns_of(const std::string& role) const {
  const pid_t pid = container_pid(role);
  if (pid <= 0) throw std::runtime_error(container(role) + " is not running");
  return "/proc/" + std::to_string(pid) + "/ns/net";
}

std::string DockerDb::worker_netns(const std::string& worker) const {
  return netns_of(worker);
}

void DockerDb::create_network() {
  // A subnet neither the host (other runs' bridges, whatever daemon made them) nor this daemon
  // uses: the first free one from the pid on; stepping on the daemon's overlap error, and when
  // another bridge took the same subnet at the same moment (two gateways on the host).
  std::set<int> tried;
  const int start = kSubnetFirst + static_cast<int>(getpid() % kSubnetCount);
  std::string last_error = "every subnet 10.89.100-249.0/24 is in use on this host";
  for (int attempt = 0; attempt < kSubnetTries; ++attempt) {
    std::set<int> used = host_subnets_in_use();
    used.insert(tried.begin(), tried.end());
    const int n = choose_subnet(used, start);
    if (n < 0) break;
    tried.insert(n);
    const std::string prefix = "10.89." + std::to_string(n);
    std::vector<std::string> args = {"network", "create", "--internal", "--subnet",
                                     prefix + ".0/24"};
    for (const std::string& l : labels()) args.push_back(l);
    args.push_back(network_);
    const ToolResult created = engine_->run(args);
    if (created.code != 0) {
      last_error = created.output;
      if (last_error.find("overlap") == std::string::npos) break;
      continue;
    }
    if (host_gateways_on(n) <= 1) {
      subnet_prefix_ = prefix;
      record_network();
      return;
    }
    last_error = "subnet " + prefix + ".0/24 was taken by another bridge at the same time";
    engine_->run({"network", "rm", network_});
  }
  throw std::runtime_error("docker network create " + network_ + " failed: " + last_error);
}

void DockerDb::record_network() const {
  if (config().log_dir.empty()) return;
  const ToolResult id = engine_->run({"network", "inspect", "-f", "{{.Id}}", network_});
  if (id.code != 0 || id.output.size() < 12) return;  // best effort: for reading, not deciding
  std::filesystem::create_directories(config().log_dir);
  std::ofstream out(config().log_dir + "/docker-network.txt");
  out << "network " << network_ << "\nid " << id.output.substr(0, id.output.find('\n'))
      << "\nbridge br-" << id.output.substr(0, 12) << "\nsubnet " << subnet_prefix_ << ".0/24\n";
}

void DockerDb::start_member(int member) {
  const std::string role = member_role(member);
  const std::string dbpath = config().data_dir + "/" + role;
  std::filesystem::create_directories(dbpath);
  std::vector<std::string> args = {"run", "-d",        "--name", container(role), "--hostname",
                                   role,  "--network", network_, "--ip",          address(role)};
  for (const std::string& l : labels()) args.push_back(l);
  args.insert(args.end(),
              {"-v", dbpath + ":/data/db", image_, mongosim_ ? "mongosim" : "mongod", "--replSet",
               config().set_name, "--bind_ip", address(role), "--port", std::to_string(kMemberPort),
               "--dbpath", "/data/db", "--setParameter", "ttlMonitorSleepSecs=1"});
  // mongod accepts failCommand only with test commands on; mongosim always does.
  if (!mongosim_) args.insert(args.end(), {"--setParameter", "enableTestCommands=1"});
  if (faketime()) {
    // Options go before the image name: the clock file's directory and libfaketime's settings.
    const std::string dir = clock_dir(member);
    std::filesystem::create_directories(dir);
    write_clock_file(dir + "/faketime", clock_offsets_ms_.at(member));
    std::vector<std::string> options = {"-v", dir + ":" + kClockMount};
    for (const std::string& entry :
         faketime_environment(options_.faketime_library, std::string(kClockMount) + "/faketime")) {
      options.insert(options.end(), {"-e", entry});
    }
    const auto image_at = std::find(args.begin(), args.end(), image_);
    assert(image_at != args.end());
    args.insert(image_at, options.begin(), options.end());
  }
  engine_->checked(args, 120'000);
}

void DockerDb::check_faketime_loaded() const {
  // The loader says so on the member's stderr and runs it anyway: a clock fault would then be
  // recorded as applied while the clock never moved. A member that answers has printed it.
  for (int m = 0; m < size(); ++m) {
    const std::string role = member_role(m);
    const ToolResult logs = engine_->run({"logs", container(role)});
    const size_t at = logs.output.find("cannot be preloaded");
    if (at == std::string::npos) continue;
    const size_t newline = logs.output.rfind('\n', at);
    const size_t start = newline == std::string::npos ? 0 : newline + 1;
    const size_t end = logs.output.find('\n', at);
    const std::string line =
        logs.output.substr(start, end == std::string::npos ? std::string::npos : end - start);
    throw std::runtime_error(role +
                             " runs without libfaketime, so its clock cannot be moved: the "
                             "loader says \"" +
                             line + "\" (--image-faketime " + options_.faketime_library +
                             ": name the library's path inside the image)");
  }
}

bool DockerDb::faketime() const {
  return !mongosim_ && !options_.faketime_library.empty();
}

std::string DockerDb::clock_dir(int member) const {
  return config().data_dir + "/" + member_role(member) + "-clock";
}

void DockerDb::start_worker_host(const std::string& worker, int index) {
  assert(index >= 0 && index < kWorkersMax);
  std::vector<std::string> args = {"run",        "-d",           "--name",    container(worker),
                                   "--hostname", worker,         "--network", network_,
                                   "--ip",       address(worker)};
  for (const std::string& l : labels()) args.push_back(l);
  args.insert(args.end(), {"--entrypoint", "sleep", image_, kSleepSeconds});
  engine_->checked(args, 120'000);
}

void DockerDb::create_containers(std::string& step) {
  const auto stop_if_interrupted = [&] {
    if (config().interrupted && config().interrupted()) {
      throw Interrupted("interrupted while " + step);
    }
  };
  if (image_.empty()) {
    step = "building the image";
    ImageBuild build{
        options_.programs, options_.dockerfile, config().data_dir + "/image", run_id_, {}, {}};
    if (!mongosim_) {
      // Kind mongod built here: mongosim answers to mongod, libfaketime at the host's path.
      build.aliases = {"mongod"};
      if (!options_.faketime_library.empty()) build.extra_files = {options_.faketime_library};
    }
    const BuiltImage built = build_image(*engine_, build);
    image_ = built.image;
    image_built_here_ = true;
    stop_if_interrupted();
  }
  step = "creating the containers";
  create_network();
  // Watching before the first member exists: a member that dies while the set comes up is
  // reported too.
  if (options_.supervisor == nullptr && !own_supervisor_) {
    own_supervisor_ = std::make_unique<Supervisor>();
  }
  Supervisor& supervisor = options_.supervisor ? *options_.supervisor : *own_supervisor_;
  events_ = std::make_unique<DockerEvents>(engine_->client(), engine_->host(), run_id_, supervisor);
  for (int m = 0; m < size(); ++m) {
    start_member(m);
    stop_if_interrupted();
  }
  for (size_t k = 0; k < config().workers.size(); ++k) {
    start_worker_host(config().workers[k], static_cast<int>(k));
    stop_if_interrupted();
  }
}

void DockerDb::start() {
  if (!engine_) engine_.emplace(DockerEngine::acquire());
  // Every docker command is interruptible while the containers are made: a Ctrl-C does not
  // wait for the image build or for every container (tens of seconds on a loaded machine).
  // Not afterwards: the levers and the teardown's commands run to their end.
  std::string step = "starting";
  engine_->set_interrupted(config().interrupted);
  try {
    create_containers(step);
  } catch (const ToolInterrupted&) {
    engine_->set_interrupted(nullptr);
    throw Interrupted("interrupted while " + step);
  } catch (...) {
    engine_->set_interrupted(nullptr);
    throw;
  }
  engine_->set_interrupted(nullptr);
  // The ready timeout counts once the containers run, as it does once processes are spawned:
  // starting a daemon, building the image and each docker command have bounds of their own
  // (on a loaded machine, creating 3 + N containers takes tens of seconds).
  const int64_t deadline = steady_now_ms() + config().ready_timeout_ms;
  nft_ = std::make_unique<NftPartitions>(config().run_prefix, subnet_prefix_ + ".0/24");
  for (int m = 0; m < size(); ++m) {
    nft_->register_host({member_role(m), netns_of(member_role(m)), address(member_role(m))});
  }
  for (const std::string& w : config().workers) nft_->register_host({w, netns_of(w), address(w)});
  if (config().delays_replies) start_relays();
  wait_all_answering(deadline);
  if (faketime()) check_faketime_loaded();
  initiate();
  prompt_first_election(deadline, nullptr);
  wait_ready(deadline);
  // The workload's database starts empty (a set restarted on old dbpaths is not).
  try_command(primary(), config().database, {{"dropDatabase", 1}});
}

bool DockerDb::running(int member) const {
  // As far as this backend knows: what it did itself, and the die events read so far (asking
  // docker on every primary() poll would cost a client round trip per member).
  read_events();
  return engine_.has_value() && !torn_down_ && !killed_.at(member) && !ended_.at(member);
}

void DockerDb::read_events() const {
  if (!events_ || stopping_ || torn_down_) return;
  for (const ContainerEnd& end : events_->poll()) {
    for (int m = 0; m < size(); ++m) {
      if (end.name != container(member_role(m))) continue;
      if (own_ends_[m] > 0) {
        --own_ends_[m];  // the end of a kill_member: expected
        break;
      }
      const std::string how = describe_container_exit(end.exit_code);
      ended_[m] = how;
      unreported_.push_back({m, how});
    }
    for (const std::string& worker : config().workers) {
      if (end.name != container(worker)) continue;
      unreported_hosts_.push_back("the host container of worker " + worker + " ended (" +
                                  describe_container_exit(end.exit_code) +
                                  "): the worker lost its network");
    }
  }
}

std::vector<std::string> DockerDb::poll_ended_worker_hosts() {
  read_events();
  return std::exchange(unreported_hosts_, {});
}

std::vector<MemberEnd> DockerDb::poll_ended_members() {
  read_events();
  return std::exchange(unreported_, {});
}

void DockerDb::kill_member(int member) {
  const std::string role = member_role(member);
  if (!running(member)) throw std::runtime_error(role + " is not running");
  ++own_ends_.at(member);  // counted before the signal: its die event may be read at once
  try {
    engine_->checked({"kill", container(role)});
  } catch (const std::exception&) {
    --own_ends_.at(member);
    throw;
  }
  // docker kill returns once the signal is sent; the member is gone when its container stops.
  const int64_t deadline = steady_now_ms() + kGoneWaitMs;
  while (container_pid(role) > 0 && steady_now_ms() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
  }
  killed_.at(member) = true;
  paused_.at(member) = false;
  // Its namespace died with it: faults on it are recorded and written when it starts again.
  nft_->mark_down(role);
}

void DockerDb::restart_member(int member) {
  const std::string role = member_role(member);
  if (running(member)) return;
  engine_->checked({"start", container(role)});
  killed_.at(member) = false;
  ended_.at(member).reset();
  // A started container has a new network namespace: its cuts are written there again.
  nft_->rehome(role, netns_of(role));
}

void DockerDb::pause_member(int member) {
  const std::string role = member_role(member);
  if (!running(member)) throw std::runtime_error(role + " is not running");
  engine_->checked({"pause", container(role)});
  paused_.at(member) = true;
}

void DockerDb::resume_member(int member) {
  const std::string role = member_role(member);
  const bool frozen = paused_.at(member);
  paused_.at(member) = false;
  if (!running(member)) throw std::runtime_error(role + " is not running: nothing to resume");
  // Killed and started again since the pause: the new container was never frozen and docker
  // refuses to unpause it; there is nothing to thaw (as SIGCONT to a restarted process).
  if (!frozen) return;
  engine_->checked({"unpause", container(role)});
}

int64_t DockerDb::set_clock_offset(int member, int64_t offset_ms) {
  if (faketime()) {
    // Read on the member's next clock call (FAKETIME_NO_CACHE); a killed member's file waits
    // for its start, which reads it.
    const int64_t previous = clock_offsets_ms_.at(member);
    write_clock_file(clock_dir(member) + "/faketime", offset_ms);
    clock_offsets_ms_.at(member) = offset_ms;
    return previous;
  }
  if (!mongosim_) {
    throw std::runtime_error("m" + std::to_string(member) + ": " +
                             *supports(FaultKind::kClockSkew));
  }
  const nlohmann::json reply = command(member, "admin", {{"mongosimSetClockOffset", offset_ms}});
  clock_offsets_ms_.at(member) = offset_ms;
  return reply.value("previousOffsetMillis", int64_t{0});
}

void DockerDb::start_relays() {
  if (options_.supervisor == nullptr) {
    throw std::logic_error("DockerDb: reply-delay without a supervisor (supports() refuses it)");
  }
  relays_ = std::make_unique<ReplyRelays>(*options_.supervisor, config().relay_program,
                                          config().run_prefix, config().data_dir, config().log_dir,
                                          subnet_prefix_ + ".0/24");
  // Before any worker starts (a connection opened earlier would bypass its relay).
  for (const std::string& w : config().workers) relays_->start({w, netns_of(w), address(w)});
}

std::optional<std::string> DockerDb::helper_of(pid_t pid) const {
  return relays_ ? relays_->owner_of(pid) : std::nullopt;
}

void DockerDb::stop(int64_t grace_ms) {
  if (relays_) relays_->stop(grace_ms);
  if (!engine_) return;
  stopping_ = true;
  for (int m = 0; m < size(); ++m) {
    if (paused_[m]) engine_->run({"unpause", container(member_role(m))});
    paused_[m] = false;
  }
  std::vector<std::string> args = {"stop", "-t",
                                   std::to_string(std::max<int64_t>(1, grace_ms / 1000))};
  for (int m = 0; m < size(); ++m) args.push_back(container(member_role(m)));
  engine_->run(args, grace_ms + 30'000);
}

void DockerDb::teardown() {
  if (torn_down_ || !engine_) return;
  torn_down_ = true;
  if (relays_) relays_->stop(0);
  if (!config().log_dir.empty()) save_logs(config().log_dir);
  nft_.reset();
  events_.reset();
  remove_run_objects(*engine_, run_id_, image_built_here_);
  engine_->stop();
}

std::string DockerDb::log_tail(int member) const {
  if (!engine_) return "";
  const ToolResult logs = engine_->run({"logs", "--tail", "40", container(member_role(member))});
  std::string text = logs.output;
  if (text.size() > kLogTailBytes) text = "..." + text.substr(text.size() - kLogTailBytes);
  return text;
}

void DockerDb::save_logs(const std::string& dir) const {
  if (!engine_) return;
  try {
    std::filesystem::create_directories(dir);
    for (int m = 0; m < size(); ++m) {
      engine_->run_to_file({"logs", container(member_role(m))},
                           dir + "/" + member_role(m) + ".log");
    }
  } catch (const std::exception&) {
    // Best effort: logs are for reading, not for the verdict.
  }
}

}  // namespace locklab
