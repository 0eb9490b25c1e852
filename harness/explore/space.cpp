#include "explore/space.h"

#include <algorithm>
#include <cassert>
#include <memory>
#include <stdexcept>

#include "checker/checker.h"
#include "client/clients.h"
#include "run/backend.h"

namespace locklab {
namespace {

const WorkloadKind kWorkloadKinds[] = {WorkloadKind::kMutex, WorkloadKind::kFenced,
                                       WorkloadKind::kCounter, WorkloadKind::kRw};

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// The pinned properties in report order, each known and applying to some workload of some
// client of the space; throws std::invalid_argument naming the one that is not.
std::vector<std::string> pinned_properties(const std::vector<std::string>& names,
                                           const std::vector<std::string>& clients) {
  for (const std::string& name : names) {
    if (!is_known_property(name)) {
      throw std::invalid_argument("--properties: unknown property \"" + name +
                                  "\" (known: " + joined(all_properties()) + ")");
    }
    bool applies = false;
    for (const std::string& client : clients) {
      const ClientSpec* spec = find_client(client);
      for (WorkloadKind kind : kWorkloadKinds) {
        if (!client_choice_error(client, to_string(kind)).empty()) continue;
        const auto judged = properties_applying_to(to_string(kind), spec->fencing_tokens);
        applies = applies || std::count(judged.begin(), judged.end(), name) > 0;
      }
    }
    if (!applies) {
      throw std::invalid_argument("--properties: " + name +
                                  " applies to no workload of the client(s) " + joined(clients));
    }
  }
  std::vector<std::string> out;
  for (const std::string& name : all_properties()) {
    if (std::count(names.begin(), names.end(), name) > 0) out.push_back(name);
  }
  return out;
}

std::vector<FaultKind> pinned_faults(const std::vector<std::string>& names,
                                     const FaultSupport& support) {
  std::vector<FaultKind> out;
  for (const std::string& name : names) {
    const std::optional<FaultKind> kind = fault_kind_named(name);
    if (!kind) {
      throw std::invalid_argument("--faults: unknown fault \"" + name +
                                  "\" (known: " + fault_kind_names() + ")");
    }
    if (const std::string why = support(*kind); !why.empty()) {
      throw std::invalid_argument("--faults: " + name + " cannot run here: " + why);
    }
    out.push_back(*kind);
  }
  return out;
}

}  // namespace

ExploreSpace make_space(const ExplorePins& pins, const FaultSupport& fault_support,
                        const ClientSupport& client_support) {
  ExploreSpace space;
  if (pins.clients.empty()) {
    for (const ClientSpec& c : all_clients()) {
      if (!c.self_test && client_support(std::string(c.name)).empty()) {
        space.clients.emplace_back(c.name);
      }
    }
  }
  for (const std::string& name : pins.clients) {
    if (find_client(name) == nullptr) {
      throw std::invalid_argument("--client: unknown client \"" + name +
                                  "\" (known: " + client_names() + ")");
    }
    if (const std::string why = client_support(name); !why.empty()) {
      throw std::invalid_argument("--client: " + name + " cannot run here: " + why);
    }
    space.clients.push_back(name);
  }
  if (space.clients.empty()) throw std::invalid_argument("no lock client can run here");
  if (pins.faults.empty()) {
    for (const FaultKindRow& row : fault_kinds()) {
      if (fault_support(row.kind).empty()) space.faults.push_back(row.kind);
    }
  } else {
    space.faults = pinned_faults(pins.faults, fault_support);
  }
  if (pins.members) {
    if (*pins.members < 1 || *pins.members > 7) {
      throw std::invalid_argument("--members: must be in [1, 7], got " +
                                  std::to_string(*pins.members));
    }
    space.members = {*pins.members};
  } else if (pins.write_concern_w && *pins.write_concern_w > 0) {
    // A numbered w needs that many members: only the clusters that have them are drawn.
    for (int m : kExploreMemberChoices) {
      if (m >= *pins.write_concern_w) space.members.push_back(m);
    }
    if (space.members.empty()) {
      throw std::invalid_argument("--write-concern " + std::to_string(*pins.write_concern_w) +
                                  ": explore draws clusters of " +
                                  std::to_string(kExploreMemberChoices.back()) +
                                  " members at most");
    }
  } else {
    space.members = kExploreMemberChoices;
  }
  // A pinned kind no drawable cluster can take would never be drawn: its cases would all run
  // without it and "found nothing" would have tested nothing.
  for (FaultKind kind : space.faults) {
    if (!pins.faults.empty() && fault_row(kind).members_min > space.members.back()) {
      throw std::invalid_argument(
          "--faults: " + std::string(to_string(kind)) + " needs at least " +
          std::to_string(fault_row(kind).members_min) + " members, and the clusters drawn have " +
          std::to_string(space.members.back()) + " at most" +
          (pins.members ? " (--members " + std::to_string(*pins.members) + ")" : ""));
    }
  }
  if (pins.write_concern_w) {
    if (*pins.write_concern_w < 0 || *pins.write_concern_w > space.members.front()) {
      throw std::invalid_argument("--write-concern: w must be \"majority\" or 1.." +
                                  std::to_string(space.members.front()));
    }
    space.write_concern_w = {*pins.write_concern_w};
  } else {
    space.write_concern_w = {0, 1};
  }
  space.honour_lost = pins.honour_lost;
  if (pins.backoff && *pins.backoff != Backoff::kRandom) {
    for (const std::string& client : space.clients) {
      if (client != "mongolock") {
        throw std::invalid_argument("--backoff " + std::string(to_string(*pins.backoff)) +
                                    " is mongolock's: pin --client mongolock (\"" + client +
                                    "\" waits its own way)");
      }
    }
  }
  space.backoff = pins.backoff;
  space.properties = pinned_properties(pins.properties, space.clients);
  return space;
}

std::vector<std::string> judged_properties(const ExploreSpace& space, const std::string& client,
                                           WorkloadKind kind) {
  if (space.properties.empty()) return {};
  const ClientSpec* spec = find_client(client);
  assert(spec != nullptr && "the space's clients are known");
  std::vector<std::string> out;
  for (const std::string& name : properties_applying_to(to_string(kind), spec->fencing_tokens)) {
    if (std::count(space.properties.begin(), space.properties.end(), name) > 0) {
      out.push_back(name);
    }
  }
  return out;
}

bool judges_something(const ExploreSpace& space, const std::string& client, WorkloadKind kind) {
  return space.properties.empty() || !judged_properties(space, client, kind).empty();
}

FaultSupport machine_fault_support() {
  RunOptions options;
  Scenario probe;
  probe.path = "<explore>";
  const BackendChoice backend = choose_backend(options, probe);
  // A 5-member probe: supports() answers by kind, not by size (sizes are the generator's rule).
  probe.cluster.members = 5;
  auto supervisor = std::make_shared<Supervisor>();
  std::shared_ptr<Db> db = make_db(options, probe, backend, scenario_db_config(probe), *supervisor);
  const bool faketime = !find_libfaketime().empty();
  return [db, supervisor, faketime](FaultKind kind) -> std::string {
    if (auto why = db->supports(kind)) return *why;
    if (fault_row(kind).clock == ClockMoved::kWorker && !faketime) {
      return "worker clock faults need libfaketime, which is not installed";
    }
    return "";
  };
}

ClientSupport machine_client_support() {
  return [](const std::string& name) -> std::string {
    const ClientSpec* client = find_client(name);
    if (client == nullptr) return "unknown client";
    return client_unavailable(*client, ClientEnvironment::current());
  };
}

}  // namespace locklab
