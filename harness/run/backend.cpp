#include "run/backend.h"

#include <filesystem>
#include <stdexcept>

#include "db/docker_db.h"
#include "db/docker_engine.h"
#include "db/external_db.h"
#include "db/faketime_clock.h"
#include "db/process_db.h"
#include "run/sandbox.h"

namespace locklab {
namespace {

// The scenario's fault kinds: fixed windows and the random mix.
std::vector<FaultKind> scenario_faults(const Scenario& s) {
  std::vector<FaultKind> out;
  for (const FaultSpec& f : s.nemesis.schedule) out.push_back(f.fault);
  if (s.nemesis.random) {
    for (const auto& [kind, weight] : s.nemesis.random->weights) out.push_back(kind);
  }
  return out;
}

bool has_fault(const Scenario& s, FaultKind kind) {
  for (FaultKind f : scenario_faults(s)) {
    if (f == kind) return true;
  }
  return false;
}

bool moves(const Scenario& s, ClockMoved whose) {
  for (FaultKind f : scenario_faults(s)) {
    if (fault_row(f).clock == whose) return true;
  }
  return false;
}

}  // namespace

BackendChoice choose_backend(const RunOptions& o, const Scenario& s) {
  if (!o.external_uri.empty()) {
    // The harness cannot put someone else's members into its namespaces; workers run beside it.
    if (o.backend == "netns" || o.backend == "docker") {
      throw std::runtime_error("--external-uri needs --cluster loopback, not --cluster " +
                               o.backend);
    }
    if (!o.member_program.empty())
      throw std::runtime_error("--external-uri and --mongod exclude each other");
    if (!o.image.empty()) throw std::runtime_error("--external-uri and --image exclude each other");
    return {"loopback", ""};
  }
  BackendChoice choice{!o.backend.empty() ? o.backend : s.cluster.backend, ""};
  if (!o.image.empty() && choice.name != "docker") {
    throw std::runtime_error("--image needs --cluster docker");
  }
  if (!o.image_faketime.empty() && (o.image.empty() || o.image_kind != "mongod")) {
    throw std::runtime_error(
        "--image-faketime names libfaketime inside a mongod image: it needs --image and "
        "--image-kind mongod (the image built here gets the host's own)");
  }
  if (!o.image_faketime.empty() && o.image_faketime.front() != '/') {
    throw std::runtime_error("--image-faketime " + o.image_faketime +
                             ": the library's absolute path inside the image");
  }
  if (!o.image_kind.empty() && o.image.empty() && choice.name != "docker") {
    throw std::runtime_error("--image-kind needs --cluster docker");
  }
  if (!o.image.empty()) {
    if (o.image_kind.empty()) {
      throw std::runtime_error("--image " + o.image +
                               " needs --image-kind mongosim or mongod (the program its members "
                               "run: it decides the command line and which faults are possible)");
    }
    try {
      (void)parse_image_kind(o.image_kind);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(std::string("--image-kind: ") + e.what());
    }
  }
  if (choice.name == "docker") {
    if (!o.member_program.empty()) {
      throw std::runtime_error(
          "--cluster docker and --mongod exclude each other (--image "
          "names a mongod image)");
    }
    if (const std::string why = docker_unavailable_reason(); !why.empty()) {
      throw std::runtime_error("--cluster docker: Docker cannot run here: " + why);
    }
    return choice;
  }
  if (choice.name.empty() || choice.name == "netns") choice.netns_refusal = netns_backend_refusal();
  if (choice.name.empty()) choice.name = choice.netns_refusal.empty() ? "netns" : "loopback";
  if (choice.name == "netns" && !choice.netns_refusal.empty()) {
    throw std::runtime_error(choice.netns_refusal +
                             " (--cluster loopback runs without namespaces)");
  }
  if (choice.name != "netns" && choice.name != "loopback") {
    throw std::runtime_error("unknown --cluster " + choice.name + " (netns, loopback or docker)");
  }
  return choice;
}

DbConfig scenario_db_config(const Scenario& s) {
  DbConfig c;
  c.members = s.cluster.members;
  for (int w = 1; w <= s.workload.workers; ++w) c.workers.push_back("w" + std::to_string(w));
  c.election_timeout_ms = s.cluster.election_timeout_ms;
  c.moves_member_clocks = moves(s, ClockMoved::kMember);
  c.delays_replies = has_fault(s, FaultKind::kReplyDelay);
  if (c.delays_replies) c.relay_program = binary_dir() + "/locklab-relay";
  return c;
}

std::unique_ptr<Db> make_db(const RunOptions& o, const Scenario& s, const BackendChoice& backend,
                            DbConfig config, Supervisor& supervisor) {
  if (!o.external_uri.empty()) {
    try {
      return std::make_unique<ExternalDb>(std::move(config), o.external_uri);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(s.path + ": " + e.what());
    }
  }
  if (backend.name == "docker") {
    DockerDbOptions options;
    options.image = o.image;
    if (!o.image_kind.empty()) options.kind = parse_image_kind(o.image_kind);
    options.faketime_library = o.image_faketime;
    options.supervisor = &supervisor;
    // The image built here, run as mongod: mongosim under that name, with the host's
    // libfaketime copied in at its own path (none on the host: member clock faults refused).
    if (o.image.empty() && options.kind == ImageKind::kMongod) {
      options.faketime_library = find_libfaketime();
    }
    options.programs = {binary_dir() + "/mongosim", binary_dir() + "/locklab-worker"};
    options.dockerfile = LOCKLAB_DOCKERFILE;
    return std::make_unique<DockerDb>(std::move(config), options);
  }
  const Placement placement = backend.name == "netns" ? Placement::kNetns : Placement::kLoopback;
  if (!o.member_program.empty()) {
    return std::make_unique<MongodDb>(std::move(config), supervisor, o.member_program, placement,
                                      backend.netns_refusal);
  }
  return std::make_unique<MongosimDb>(std::move(config), supervisor, binary_dir() + "/mongosim",
                                      placement, backend.netns_refusal);
}

void preflight(const Scenario& s, const Db& db) {
  for (const FaultSpec& f : s.nemesis.schedule) {
    if (auto why = db.supports(f.fault)) {
      throw std::runtime_error(s.path + ":" + std::to_string(f.line) + ": " +
                               std::string(to_string(f.fault)) + " " + *why);
    }
  }
  if (s.nemesis.random) {
    if (auto why = db.supports_random_mix()) {
      throw std::runtime_error(s.path + ": [nemesis.random] " + *why);
    }
    for (const auto& [kind, weight] : s.nemesis.random->weights) {
      if (auto why = db.supports(kind)) {
        throw std::runtime_error(s.path + ": [nemesis.random] faults." +
                                 std::string(to_string(kind)) + " " + *why);
      }
    }
  }
  if (moves_worker_clocks(s) && find_libfaketime().empty()) {
    throw std::runtime_error(s.path +
                             ": worker clock faults (clock-skew-worker, clock-jump-worker) need "
                             "libfaketime (libfaketimeMT.so.1), which is not installed");
  }
  if (moves_worker_clocks(s)) {
    try {
      worker_faketime_preload();
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(s.path + ": " + e.what());
    }
  }
}

bool moves_worker_clocks(const Scenario& s) {
  return moves(s, ClockMoved::kWorker);
}

std::string worker_faketime_preload() {
  const std::string faketime = find_libfaketime();
  if (faketime.empty()) return "";
  const std::string sleep = binary_dir() + "/liblocklab-faketime-sleep.so";
  if (!std::filesystem::exists(sleep)) {
    throw std::runtime_error(sleep +
                             " is missing (it is built with locklab): a worker under "
                             "libfaketime alone cannot sleep on the monotonic clock");
  }
  return ld_preload_list({sleep, faketime});
}

std::string find_libfaketime() {
  for (const char* path :
       {"/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
        "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1",
        "/usr/lib64/faketime/libfaketimeMT.so.1", "/usr/lib/faketime/libfaketimeMT.so.1",
        "/usr/local/lib/faketime/libfaketimeMT.so.1"}) {
    if (std::filesystem::exists(path)) return path;
  }
  return "";
}

}  // namespace locklab
