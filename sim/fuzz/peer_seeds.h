// The peer fuzz target's seed scripts (peer_target.h): well-formed replies of a peer that leads
// the member down each of its conversations -- following a primary and applying what it fetches,
// winning an election with the peer's votes, and rolling back a history the peer says diverged --
// so mutation starts from replies the member acts on rather than ones it drops at the first field.
//
// Pure functions. Thread rules: none.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bson/value.h"

namespace mongosim::fuzz {

struct PeerSeed {
  std::string name;
  std::string script;  // peer_reply messages, concatenated
};

std::vector<PeerSeed> peer_seeds();

// The "roll-back" seed with `refetch_reply` as the peer's answer to the member's
// replSetRollbackFetch (a fetch applies entries 1-3, the next says the history diverged, the
// peer's optimes put the common point at entry 2).
// `optimes`: the peer's optimes in its replSetRollbackOptimes reply (none: entries 1 and 2 of
// term 1 and 3 of term 2).
std::string roll_back_script(const bson::Document& refetch_reply,
                             std::optional<bson::Array> optimes = std::nullopt);

}  // namespace mongosim::fuzz
