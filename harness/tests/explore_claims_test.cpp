// `locklab explore --within-claims` as pins (explore/claims.h): a client's claims fill the pins,
// the user's pins may narrow them and are refused naming the option when they would widen them,
// and a claimed kind this machine cannot run (or no drawable cluster can take) is left out by
// name. What the model leaves out: the machine (FaultSupport is a function here; the ctest
// explore.safe_majority runs the real thing) and whether the cases drawn from the pins pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "client/client_manifest.h"
#include "client/clients.h"
#include "explore/claims.h"
#include "temp_dir.h"

namespace locklab {
namespace {

using testkit::TempDir;

const FaultSupport kAll = [](FaultKind) { return std::string(); };

ExplorePins client_pin(const std::string& client) {
  ExplorePins pins;
  pins.clients = {client};
  return pins;
}

std::string error_of(const ExplorePins& pins, const FaultSupport& support = kAll) {
  try {
    pins_within_claims(pins, support);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> claimed_faults(const std::string& client) {
  const ClientClaims& claims = *find_client(client)->claims;
  return {claims.faults.begin(), claims.faults.end()};
}

TEST(ExploreClaims, MongolockClaimsFillEveryPin) {
  const ClaimedPins out = pins_within_claims(client_pin("mongolock"), kAll);
  EXPECT_EQ(out.pins.clients, std::vector<std::string>{"mongolock"});
  EXPECT_EQ(out.pins.faults, claimed_faults("mongolock"));
  EXPECT_EQ(out.pins.properties,
            (std::vector<std::string>{"tokens.unique", "tokens.monotonic", "exclusion.fenced",
                                      "exclusion.rw-fenced"}));
  EXPECT_EQ(out.pins.write_concern_w, 0);
  EXPECT_EQ(out.pins.honour_lost, true);
  EXPECT_TRUE(out.left_out.empty());
  // What the header rules out is not claimed: a member's clock moved.
  for (const char* kind : {"clock-skew", "clock-jump", "primary-divergence"}) {
    EXPECT_EQ(std::count(out.pins.faults.begin(), out.pins.faults.end(), kind), 0) << kind;
  }
}

TEST(ExploreClaims, PinsNarrowTheClaimsAndNeverWidenThem) {
  ExplorePins pins = client_pin("mongolock");
  pins.faults = {"step-down"};
  pins.properties = {"tokens.unique"};
  pins.write_concern_w = 0;
  pins.honour_lost = true;
  pins.members = 3;
  const ClaimedPins out = pins_within_claims(pins, kAll);
  EXPECT_EQ(out.pins.faults, std::vector<std::string>{"step-down"});
  EXPECT_EQ(out.pins.properties, std::vector<std::string>{"tokens.unique"});
  EXPECT_EQ(out.pins.members, 3);

  pins = client_pin("mongolock");
  pins.faults = {"step-down", "clock-skew"};
  EXPECT_EQ(
      error_of(pins).rfind("--faults: clock-skew is outside mongolock's claims (claims_faults: "
                           "isolate-worker, ",
                           0),
      0u)
      << error_of(pins);
  pins = client_pin("mongolock");
  pins.properties = {"exclusion.strict"};
  EXPECT_EQ(error_of(pins).rfind(
                "--properties: exclusion.strict is outside mongolock's claims (claims_properties: "
                "tokens.unique, ",
                0),
            0u);
  pins = client_pin("mongolock");
  pins.write_concern_w = 1;
  EXPECT_EQ(error_of(pins),
            "--write-concern 1 is outside mongolock's claims (claims_write_concern: majority)");
  pins = client_pin("mongolock");
  pins.honour_lost = false;
  EXPECT_EQ(error_of(pins),
            "--honour-lost false is outside mongolock's claims (claims_honour_lost: true)");
}

TEST(ExploreClaims, AClaimedKindThatCannotRunHereIsLeftOutByName) {
  ExplorePins pins = client_pin("mongolock");
  pins.members = 3;
  const FaultSupport no_faketime = [](FaultKind kind) {
    return fault_row(kind).clock == ClockMoved::kWorker ? std::string("no libfaketime")
                                                        : std::string();
  };
  const ClaimedPins out = pins_within_claims(pins, no_faketime);
  EXPECT_EQ(out.left_out,
            (std::vector<std::string>{"clock-skew-worker (no libfaketime)",
                                      "clock-jump-worker (no libfaketime)",
                                      "partition-ring (needs 5 members; --members 3)"}));
  for (const std::string& kind : out.pins.faults) {
    EXPECT_EQ(std::count(out.left_out.begin(), out.left_out.end(), kind), 0) << kind;
  }
  EXPECT_EQ(out.pins.faults.size() + out.left_out.size(), claimed_faults("mongolock").size());
  // Left out of a pin the user wrote is make_space's to refuse, by name: not dropped here.
  pins.faults = {"clock-skew-worker"};
  EXPECT_EQ(pins_within_claims(pins, no_faketime).pins.faults,
            std::vector<std::string>{"clock-skew-worker"});
  const FaultSupport nothing = [](FaultKind) { return std::string("no hooks"); };
  EXPECT_EQ(error_of(client_pin("mongolock"), nothing)
                .rfind("--within-claims: none of mongolock's claimed fault kinds can run here: "
                       "isolate-worker (no hooks), ",
                       0),
            0u);
}

TEST(ExploreClaims, OneClientThatClaimsSomethingIsNeeded) {
  EXPECT_EQ(error_of(ExplorePins{}),
            "--within-claims: pin exactly one client with --client (claims are a client's)");
  ExplorePins two;
  two.clients = {"mongolock", "square"};
  EXPECT_EQ(error_of(two), error_of(ExplorePins{}));
  EXPECT_EQ(error_of(client_pin("square")).rfind("--within-claims: square claims nothing", 0), 0u);
  EXPECT_EQ(error_of(client_pin("nope")).rfind("--client: unknown client \"nope\"", 0), 0u);
}

TEST(ExploreClaims, AManifestsClaimsAreItsOwn) {
  TempDir dir;
  std::ofstream(dir.file("w.sh")) << "#!/bin/sh\nexit 0\n";
  std::ofstream(dir.file("client.toml"))
      << "name = \"claims-explore\"\nprogram = \"w.sh\"\nworkloads = [\"mutex\"]\n"
         "fencing_tokens = false\nclaims_faults = [\"kill-worker\"]\n"
         "claims_properties = [\"exclusion.strict\"]\n";
  load_client_manifest(dir.file("client.toml"));
  const ClaimedPins out = pins_within_claims(client_pin("claims-explore"), kAll);
  EXPECT_EQ(out.pins.faults, std::vector<std::string>{"kill-worker"});
  EXPECT_EQ(out.pins.properties, std::vector<std::string>{"exclusion.strict"});
  EXPECT_FALSE(out.pins.write_concern_w.has_value());  // claimed under any write concern
  EXPECT_FALSE(out.pins.honour_lost.has_value());
}

}  // namespace
}  // namespace locklab
