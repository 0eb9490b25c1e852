// The space an exploration searches: which clients, fault kinds, cluster sizes and write concerns
// the generators may draw, and which properties a case is judged on, after the user's pins
// (--client, --faults, --members, --write-concern, --honour-lost, --properties) and what this
// machine's backend can do.
//
// Invariant: every fault kind in `faults` is one the backend supports (Db::supports) with the
// workers' tools present; every client in `clients` is available here; every pinned property is
// a known one that applies to some workload of some client in `clients`. make_space checks the
// pins against all three and throws std::invalid_argument naming the pin when one cannot be met.
// Plain data; any thread.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nemesis/fault_kind.h"
#include "run/scenario.h"

namespace locklab {

// Cluster sizes an exploration draws when --members is not pinned: one member, a set that can
// lose a majority, the ring's 5. Ascending.
inline const std::vector<int> kExploreMemberChoices = {1, 3, 5};

struct ExplorePins {
  std::vector<std::string> clients;     // --client (comma list); empty: every available lock client
  std::vector<std::string> faults;      // --faults (comma list); empty: every supported kind
  std::optional<int> members;           // --members
  std::optional<int> write_concern_w;   // --write-concern: 0 = majority, else w
  std::optional<bool> honour_lost;      // --honour-lost
  std::vector<std::string> properties;  // --properties (comma list); empty: all that apply
  std::optional<Backoff> backoff;       // --backoff: mongolock's wait (clients: mongolock only)
};

struct ExploreSpace {
  std::vector<std::string> clients;     // never empty
  std::vector<FaultKind> faults;        // may be empty: cases without faults
  std::vector<int> members;             // cluster sizes to draw from, ascending, never empty
  std::vector<int> write_concern_w;     // 0 = majority
  std::optional<bool> honour_lost;      // unset: the generator draws it (true most of the time)
  std::vector<std::string> properties;  // pinned, in report order; empty: every one that applies
  std::optional<Backoff> backoff;       // unset: random or adaptive, drawn
};

// The properties a case of `client` running `kind` is judged on, as its scenario's [check]
// properties: empty when none is pinned (the scenario's "every property that applies");
// otherwise the pinned ones that apply to such a run (properties_applying_to), in report order.
// A pinned property that does not apply is left out rather than listed: listed, it would make
// the verdict unknown.
std::vector<std::string> judged_properties(const ExploreSpace& space, const std::string& client,
                                           WorkloadKind kind);
// Whether such a case judges anything: always without a pin; with one, when some pinned property
// applies. The generators draw only such cases.
bool judges_something(const ExploreSpace& space, const std::string& client, WorkloadKind kind);

// Why a fault kind cannot run here ("" when it can): the backend's supports() and tools.
using FaultSupport = std::function<std::string(FaultKind)>;
// Why a client cannot run here ("" when it can).
using ClientSupport = std::function<std::string(const std::string&)>;

ExploreSpace make_space(const ExplorePins& pins, const FaultSupport& fault_support,
                        const ClientSupport& client_support);

// The support of this machine: the default backend's Db::supports (netns where its namespaces
// can be made, else loopback) and the client table's availability check.
FaultSupport machine_fault_support();
ClientSupport machine_client_support();

}  // namespace locklab
