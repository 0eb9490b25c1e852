// explore/claims.h: --within-claims, as pins.
#include "explore/claims.h"

#include <algorithm>
#include <stdexcept>

#include "client/clients.h"
#include "nemesis/fault_kind.h"

namespace locklab {
namespace {

std::string joined(const std::vector<std::string_view>& items) {
  std::string out;
  for (std::string_view item : items) out += (out.empty() ? "" : ", ") + std::string(item);
  return out;
}

std::string w_text(int w) {
  return w == 0 ? std::string("majority") : std::to_string(w);
}

// Each of `pinned` must be one of `claimed`; an empty pin takes every claimed name.
std::vector<std::string> within(const std::vector<std::string>& pinned,
                                const std::vector<std::string_view>& claimed,
                                const std::string& option, const std::string& claim_name,
                                const std::string& client) {
  if (pinned.empty()) return {claimed.begin(), claimed.end()};
  for (const std::string& name : pinned) {
    if (std::find(claimed.begin(), claimed.end(), name) == claimed.end()) {
      throw std::invalid_argument(option + ": " + name + " is outside " + client + "'s claims (" +
                                  claim_name + ": " + joined(claimed) + ")");
    }
  }
  return pinned;
}

// The claimed kinds this machine can run on a cluster explore can draw; the others, with why,
// into left_out. Kinds the user pinned are left to make_space, which refuses them by name.
std::vector<std::string> runnable(const std::vector<std::string>& kinds, const ExplorePins& pins,
                                  const FaultSupport& support, std::vector<std::string>& left_out) {
  const int members_max = pins.members.value_or(kExploreMemberChoices.back());
  std::vector<std::string> out;
  for (const std::string& name : kinds) {
    const std::optional<FaultKind> kind = fault_kind_named(name);
    if (!kind) throw std::logic_error("claims name unknown fault kind " + name);
    std::string why = support(*kind);
    if (why.empty() && fault_row(*kind).members_min > members_max) {
      why = "needs " + std::to_string(fault_row(*kind).members_min) + " members; " +
            (pins.members ? "--members " + std::to_string(*pins.members)
                          : "explore draws " + std::to_string(members_max) + " at most");
    }
    if (why.empty()) {
      out.push_back(name);
    } else {
      left_out.push_back(name + " (" + why + ")");
    }
  }
  return out;
}

}  // namespace

ClaimedPins pins_within_claims(const ExplorePins& pins, const FaultSupport& support) {
  if (pins.clients.size() != 1) {
    throw std::invalid_argument(
        "--within-claims: pin exactly one client with --client (claims are a client's)");
  }
  const std::string& name = pins.clients.front();
  const ClientSpec* client = find_client(name);
  if (client == nullptr) {
    throw std::invalid_argument("--client: unknown client \"" + name +
                                "\" (known: " + client_names() + ")");
  }
  if (!client->claims) {
    throw std::invalid_argument("--within-claims: " + name +
                                " claims nothing (a client.toml declares claims with "
                                "claims_faults and claims_properties)");
  }
  const ClientClaims& claims = *client->claims;
  ClaimedPins out{pins, {}};
  out.pins.properties =
      within(pins.properties, claims.properties, "--properties", "claims_properties", name);
  const std::vector<std::string> faults =
      within(pins.faults, claims.faults, "--faults", "claims_faults", name);
  out.pins.faults = pins.faults.empty() ? runnable(faults, pins, support, out.left_out) : faults;
  if (out.pins.faults.empty()) {
    throw std::invalid_argument("--within-claims: none of " + name +
                                "'s claimed fault kinds can run here: " +
                                joined({out.left_out.begin(), out.left_out.end()}));
  }
  if (claims.write_concern_w) {
    if (pins.write_concern_w && *pins.write_concern_w != *claims.write_concern_w) {
      throw std::invalid_argument(
          "--write-concern " + w_text(*pins.write_concern_w) + " is outside " + name +
          "'s claims (claims_write_concern: " + w_text(*claims.write_concern_w) + ")");
    }
    out.pins.write_concern_w = claims.write_concern_w;
  }
  if (claims.honour_lost) {
    if (pins.honour_lost && *pins.honour_lost != *claims.honour_lost) {
      throw std::invalid_argument(
          std::string("--honour-lost ") + (*pins.honour_lost ? "true" : "false") + " is outside " +
          name + "'s claims (claims_honour_lost: " + (*claims.honour_lost ? "true" : "false") +
          ")");
    }
    out.pins.honour_lost = claims.honour_lost;
  }
  return out;
}

}  // namespace locklab
