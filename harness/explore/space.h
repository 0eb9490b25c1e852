// The space an exploration searches: which clients, fault kinds, cluster sizes and write concerns
// the generators may draw, after the user's pins (--client, --faults, --members,
// --write-concern, --honour-lost) and what this machine's backend can do.
//
// Invariant: every fault kind in `faults` is one the backend supports (Db::supports) with the
// workers' tools present; every client in `clients` is available here. make_space checks the
// pins against both and throws std::invalid_argument naming the pin when one cannot be met.
// Plain data; any thread.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nemesis/fault_kind.h"

namespace locklab {

struct ExplorePins {
  std::vector<std::string> clients;    // --client (comma list); empty: every available lock client
  std::vector<std::string> faults;     // --faults (comma list); empty: every supported kind
  std::optional<int> members;          // --members
  std::optional<int> write_concern_w;  // --write-concern: 0 = majority, else w
  std::optional<bool> honour_lost;     // --honour-lost
};

struct ExploreSpace {
  std::vector<std::string> clients;  // never empty
  std::vector<FaultKind> faults;     // may be empty: cases without faults
  std::vector<int> members;          // cluster sizes to draw from, ascending, never empty
  std::vector<int> write_concern_w;  // 0 = majority
  std::optional<bool> honour_lost;   // unset: the generator draws it (true most of the time)
};

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
