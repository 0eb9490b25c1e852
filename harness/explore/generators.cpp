#include "explore/generators.h"

#include <algorithm>

#include "client/client_manifest.h"
#include "client/clients.h"
#include "run/run.h"

namespace locklab {
namespace {

// Timings are drawn over their whole range at every size (RapidCheck's inRange narrows towards
// the minimum at small sizes): a small case has few workers and faults, not only short faults.
template <typename T>
rc::Gen<T> uniform(T min, T max_exclusive) {
  return rc::gen::resize(rc::kNominalSize, rc::gen::inRange<T>(min, max_exclusive));
}

// The parameters a fault kind requires, drawn by key: clock moves in either direction, command
// delays past the socket timeout, reply delays from 200 ms to a second past the lease. A kind
// requiring a key not listed here is never drawn.
std::optional<rc::Gen<nlohmann::json>> required_param_gen(FaultKind kind, const std::string& key,
                                                          const Scenario& s) {
  if (kind == FaultKind::kReplyDelay && key == "delay_ms") {
    // A reply late by a fraction of the lease up to past it: the client still hears it (no
    // socket timeout is involved), after the server's lease may have ended.
    return rc::gen::map(uniform<int64_t>(200, s.lock.expiry_ms + 1001),
                        [](int64_t ms) { return nlohmann::json(ms); });
  }
  if (key == "offset_ms" || key == "jump_ms" || key == "clock_ms") {
    return rc::gen::map(rc::gen::pair(uniform<int64_t>(500, 5001), rc::gen::arbitrary<bool>()),
                        [](const std::pair<int64_t, bool>& p) {
                          return nlohmann::json(p.second ? p.first : -p.first);
                        });
  }
  if (key == "delay_ms" && s.lock.socket_timeout_ms > 0) {
    const int64_t over = s.lock.socket_timeout_ms + 100;
    return rc::gen::map(uniform<int64_t>(over, over + 2000),
                        [](int64_t ms) { return nlohmann::json(ms); });
  }
  return std::nullopt;
}

// Draws the required parameters of `kind` one missing key at a time; nullopt when a required key
// has no generator (the kind is then not drawable for this scenario).
std::optional<nlohmann::json> draw_params(FaultKind kind, const Scenario& s) {
  nlohmann::json params = nlohmann::json::object();
  for (int guard = 0; guard < 8; ++guard) {
    const auto error = fault_param_error(kind, params, s.cluster.members);
    if (!error) return params;
    if (params.contains(error->key)) return std::nullopt;
    auto gen = required_param_gen(kind, error->key, s);
    if (!gen) return std::nullopt;
    // By value: RapidCheck runs this lambda again while shrinking, after draw_params returned.
    params[error->key] = *rc::gen::exec([g = *gen] { return *g; }).as("param");
  }
  return std::nullopt;
}

// Whether the parameter `kind` requires has a generator for this scenario (draw_params would
// otherwise drop the fault). Every kind requires at most one key (nemesis/fault_kind.cpp).
bool drawable(FaultKind kind, const Scenario& s) {
  if (fault_row(kind).members_min > s.cluster.members) return false;
  const auto missing = fault_param_error(kind, nlohmann::json::object(), s.cluster.members);
  return !missing || required_param_gen(kind, missing->key, s).has_value();
}

std::vector<std::string> targets_for(FaultKind kind, const Scenario& s) {
  switch (fault_row(kind).target) {
    case FaultTarget::kCluster:
      return {"primary"};
    case FaultTarget::kWorker: {
      std::vector<std::string> out = {"random", "holder"};
      for (int w = 1; w <= s.workload.workers; ++w) out.push_back("w" + std::to_string(w));
      return out;
    }
    case FaultTarget::kMember: {
      std::vector<std::string> out = {"random", "primary"};
      if (s.cluster.members > 1) out.push_back("secondaries");
      for (int m = 0; m < s.cluster.members; ++m) out.push_back("m" + std::to_string(m));
      return out;
    }
  }
  return {"random"};
}

// "holder" three times as likely as any other target: a fault on the worker holding the lock is
// where a lock's guarantees are tested; the others mostly test the waiting.
rc::Gen<std::string> target_gen(const std::vector<std::string>& targets) {
  std::vector<std::string> weighted;
  for (const std::string& t : targets) weighted.insert(weighted.end(), t == "holder" ? 3 : 1, t);
  return rc::gen::elementOf(weighted);
}

void draw_schedule(Scenario& s, const ExploreSpace& space, int size) {
  std::vector<FaultKind> kinds;
  for (FaultKind k : space.faults) {
    if (drawable(k, s)) kinds.push_back(k);
  }
  if (kinds.empty()) return;
  const int most = std::min(kExploreMaxFaults, 1 + size / 25);
  // Faultless cases only at the smallest sizes: a search finds little without faults.
  const int count = *rc::gen::inRange(size < 10 ? 0 : 1, most + 1).as("faults");
  const int64_t run_ms = s.workload.duration_ms;
  for (int i = 0; i < count; ++i) {
    FaultSpec f;
    f.fault = *rc::gen::elementOf(kinds).as("fault kind");
    auto params = draw_params(f.fault, s);
    if (!params) continue;
    f.params = *params;
    f.target = *target_gen(targets_for(f.fault, s)).as("target");
    f.duration_ms = *uniform<int64_t>(kExploreMinFaultMs, std::min<int64_t>(2500, run_ms) + 1)
                         .as("fault duration_ms");
    f.at_ms = *uniform<int64_t>(0, run_ms - f.duration_ms + 1).as("fault at_ms");
    f.line = 0;
    s.nemesis.schedule.push_back(std::move(f));
  }
  std::stable_sort(s.nemesis.schedule.begin(), s.nemesis.schedule.end(),
                   [](const FaultSpec& a, const FaultSpec& b) { return a.at_ms < b.at_ms; });
}

void draw_workload(Scenario& s, const ExploreSpace& space, int size) {
  WorkloadSpec& w = s.workload;
  // Only clients and workloads on which some pinned property can be judged (make_space
  // checked that one exists).
  auto kinds_of = [&space](const std::string& client) {
    std::vector<WorkloadKind> kinds;
    for (WorkloadKind k :
         {WorkloadKind::kMutex, WorkloadKind::kFenced, WorkloadKind::kCounter, WorkloadKind::kRw}) {
      if (client_choice_error(client, to_string(k)).empty() && judges_something(space, client, k))
        kinds.push_back(k);
    }
    return kinds;
  };
  std::vector<std::string> clients;
  for (const std::string& c : space.clients) {
    if (!kinds_of(c).empty()) clients.push_back(c);
  }
  RC_ASSERT(!clients.empty());
  w.client = *rc::gen::elementOf(clients).as("client");
  // A client.toml outside the source tree is named by its path, so the case's scenario (and a
  // repro made from it) runs in any process, not only in this exploration's.
  if (const ClientSpec* spec = find_client(w.client); spec != nullptr) {
    w.client_manifest = manifest_path_for_scenarios(*spec);
  }
  const std::vector<WorkloadKind> kinds = kinds_of(w.client);
  w.kind = *rc::gen::elementOf(kinds).as("workload kind");
  s.check.properties = judged_properties(space, w.client, w.kind);
  // One worker only at the smallest sizes: exclusion needs two to be broken.
  w.workers = *rc::gen::inRange(size < 10 ? 1 : 2, std::min(kExploreMaxWorkers, 2 + size / 30) + 1)
                   .as("workers");
  w.locks = *rc::gen::inRange(1, size > 50 ? 3 : 2).as("locks");
  w.critical_section_ms = *uniform<int64_t>(0, 151).as("critical_section_ms");
  w.honour_lost = space.honour_lost
                      ? *space.honour_lost
                      : *rc::gen::weightedElement<bool>({{9, true}, {1, false}}).as("honour_lost");
  w.read_percent = *uniform(0, 101).as("read_percent");
  w.duration_ms =
      kExploreMinRunMs + *rc::gen::inRange<int64_t>(0, 30 * size + 1).as("extra run ms");
  w.operations = 0;
}

void draw_lock(Scenario& s, const ExploreSpace& space) {
  LockSpec& l = s.lock;
  l.expiry_ms = *uniform<int64_t>(500, 1501).as("expiry_ms");
  l.extension_cadence_ms =
      *rc::gen::oneOf(rc::gen::just<int64_t>(0), uniform<int64_t>(100, l.expiry_ms / 2))
           .as("extension_cadence_ms");
  l.backoff = *rc::gen::element(Backoff::kRandom, Backoff::kAdaptive).as("backoff");
  // Only mongolock has a choice of wait: a seed client waits as its library does (and
  // distributedlock refuses adaptive). Drawn anyway, so the draws after it stay where they were.
  if (s.workload.client != "mongolock") l.backoff = Backoff::kRandom;
  if (space.backoff) l.backoff = *space.backoff;  // pinned (space.cpp checks the clients)
  l.busy_wait_min_ms = *uniform<int64_t>(5, 51).as("busy_wait_min_ms");
  l.busy_wait_max_ms = *uniform<int64_t>(l.busy_wait_min_ms, 201).as("busy_wait_max_ms");
  std::vector<int> concerns;
  for (int w : space.write_concern_w) {
    if (w <= s.cluster.members) concerns.push_back(w);
  }
  RC_ASSERT(!concerns.empty());
  l.write_concern_w = *rc::gen::elementOf(concerns).as("write concern (0 = majority)");
  l.fencing = true;
  l.max_shared =
      s.workload.kind == WorkloadKind::kRw ? *rc::gen::inRange(0, 4).as("max_shared") : 0;
  l.socket_timeout_ms = *rc::gen::oneOf(rc::gen::just<int64_t>(0), uniform<int64_t>(1000, 3001))
                             .as("socket_timeout_ms");
  l.reap_after_s = -1;
}

// The drawn times are compressed (leases of 0.5-1.5 s, holds up to 150 ms) so a case takes
// seconds. A client whose lease comes in coarse units (npm's ttl in whole seconds) grants more
// than the drawn expiry, and no compressed hold comes near its lease: its critical section is
// drawn again over twice the lease it really grants, as a hold in production can outlast its
// lease; and the run is longer by two leases, so such a hold and the next one fit in it. Drawn
// for such clients only, so every other client's cases stay as they were.
void scale_to_lease_granularity(Scenario& s) {
  const ClientSpec* client = find_client(s.workload.client);
  if (client == nullptr || client->lease_granularity_ms <= 0) return;
  const int64_t lease_ms = granted_lease_ms(*client, s.lock.expiry_ms);
  s.workload.critical_section_ms =
      *uniform<int64_t>(0, 2 * lease_ms + 1).as("critical_section_ms over the granted lease");
  s.workload.duration_ms += 2 * lease_ms;
}

Scenario draw_scenario(const ExploreSpace& space) {
  const int size = *rc::gen::withSize([](int n) { return rc::gen::just(std::clamp(n, 0, 100)); });
  Scenario s;
  s.name = "explore";
  s.path = "explore.toml";
  s.description = "generated by locklab explore";
  std::vector<int> members;
  for (int m : space.members) {
    if (m <= 3 || size > 50 || space.members.size() == 1) members.push_back(m);
  }
  s.cluster.members = *rc::gen::elementOf(members).as("members");
  s.cluster.election_timeout_ms = *uniform<int64_t>(500, 1001).as("election_timeout_ms");
  draw_workload(s, space, size);
  draw_lock(s, space);
  scale_to_lease_granularity(s);
  draw_schedule(s, space, size);
  s.nemesis.quiet_ms = quiet_ms_for(s);
  // A case that cuts no link runs on loopback: no namespaces to build, seconds saved per case.
  const bool network =
      std::any_of(s.nemesis.schedule.begin(), s.nemesis.schedule.end(),
                  [](const FaultSpec& f) { return fault_row(f.fault).needs_network; });
  s.cluster.backend = network ? "" : "loopback";
  return s;
}

}  // namespace

int64_t recovery_window_ms(const Scenario& s) {
  // The bound the run will judge its last heal by (every clock fault before it widens it), and
  // a second to see it.
  return widest_liveness_bound_ns(s) / 1'000'000 + 1000;
}

// Only the time after the last heal judges recovery; the run's own tail after it counts, so a
// case whose faults end early (or that has none) needs little or no quiet phase: seconds per
// case that judged nothing.
int64_t quiet_ms_for(const Scenario& s) {
  int64_t last_heal_ms = 0;
  for (const FaultSpec& f : s.nemesis.schedule) {
    last_heal_ms = std::max(last_heal_ms, f.at_ms + f.duration_ms);
  }
  return std::max<int64_t>(0, last_heal_ms + recovery_window_ms(s) - s.workload.duration_ms);
}

rc::Gen<Scenario> scenario_gen(const ExploreSpace& space) {
  return rc::gen::exec([space] { return draw_scenario(space); });
}

}  // namespace locklab
