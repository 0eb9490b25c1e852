// `locklab explore --within-claims`: the pins that confine an exploration to what its one client
// claims (client/clients.h ClientClaims): the fault kinds it claims to survive, the properties it
// promises under them, the write concern and honour_lost it needs. A finding there is a broken
// promise; one outside (a member's clock moved under mongolock, say) is a limit the client
// states. The user's own pins may narrow the claims, never widen them.
//
// Invariants: the result's faults, properties, write concern and honour_lost are each within the
// client's claims; a claimed fault kind this machine cannot run, or no drawable cluster can take,
// is left out and named in `left_out`, never silently (and the result keeps at least one kind).
// Pure: the machine enters only through `support`. Any thread.
#pragma once

#include <string>
#include <vector>

#include "explore/space.h"

namespace locklab {

struct ClaimedPins {
  ExplorePins pins;                   // the user's pins with the claims filled in
  std::vector<std::string> left_out;  // "partition-ring (needs 5 members; --members 3)", ...
};

// Throws std::invalid_argument naming the option: not exactly one --client, a client that
// claims nothing, a pin outside the claims (--faults, --properties, --write-concern,
// --honour-lost), or no claimed fault kind left that can run here.
ClaimedPins pins_within_claims(const ExplorePins& pins, const FaultSupport& support);

}  // namespace locklab
