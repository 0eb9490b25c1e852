// The backend choice and the preflight: every fault of a scenario (fixed windows and the random
// mix) is asked of the chosen Db's supports() before anything starts, and the refusal names the
// file, the line and the kind. The Dbs here are only constructed (which starts nothing): the
// model leaves out whether a supported fault then works on that backend (the scenario tests run
// them).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "db/external_db.h"
#include "db/process_db.h"
#include "run/backend.h"

namespace locklab {
namespace {

Scenario scenario_with(const std::string& faults) {
  return parse_scenario(
      "[cluster]\nmembers = 3\n[workload]\nworkers = 2\nduration_ms = 10000\n" + faults, "s.toml");
}

std::string refusal(const Scenario& s, const Db& db) {
  try {
    preflight(s, db);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

DbConfig three_members() {
  DbConfig c;
  c.members = 3;
  return c;
}

TEST(Preflight, LoopbackRefusesPartitionsNamingFileLineAndKind) {
  Supervisor none;
  const MongosimDb db(three_members(), none, "mongosim", Placement::kLoopback);
  const Scenario s = scenario_with(
      "[[nemesis.fault]]\nat_ms = 1\nfault = \"pause-worker\"\nduration_ms = 5\n"
      "[[nemesis.fault]]\nat_ms = 1\nfault = \"partition-halves\"\nduration_ms = 5\n");
  EXPECT_EQ(refusal(s, db),
            "s.toml:10: partition-halves needs the netns backend (--cluster netns; no root "
            "needed)");
  const MongosimDb netns(three_members(), none, "mongosim", Placement::kNetns);
  EXPECT_EQ(refusal(s, netns), "");
}

TEST(Preflight, LoopbackSaysWhyNetnsCannotRunHere) {
  Supervisor none;
  const MongosimDb db(three_members(), none, "mongosim", Placement::kLoopback,
                      "user namespaces are off (sysctl x=0)");
  const Scenario s =
      scenario_with("[[nemesis.fault]]\nat_ms = 1\nfault = \"isolate-worker\"\nduration_ms = 5\n");
  EXPECT_EQ(refusal(s, db),
            "s.toml:6: isolate-worker needs the netns backend, which cannot run here: user "
            "namespaces are off (sysctl x=0)");
}

// The random mix is checked too, kind by kind.
TEST(Preflight, RandomMixKindsAreAskedToo) {
  Supervisor none;
  const MongosimDb db(three_members(), none, "mongosim", Placement::kLoopback);
  const Scenario t = scenario_with(
      "[nemesis.random]\nfaults = { \"pause-worker\" = 1, \"isolate-member\" = 1 }\n");
  EXPECT_EQ(refusal(t, db),
            "s.toml: [nemesis.random] faults.isolate-member needs the netns backend (--cluster "
            "netns; no root needed)");
}

TEST(Preflight, ExternalRefusesWhatNeedsMembersAndAnyRandomMix) {
  const ExternalDb db(three_members(), "mongodb://a:1,b:2,c:3/?replicaSet=rs0");
  for (const FaultKindRow& row : fault_kinds()) {
    const bool expected =
        !row.needs_network && !row.signals_members && row.clock != ClockMoved::kMember;
    EXPECT_EQ(!db.supports(row.kind).has_value(), expected) << row.name;
  }
  const Scenario s =
      scenario_with("[[nemesis.fault]]\nat_ms = 1\nfault = \"kill-member\"\nduration_ms = 5\n");
  EXPECT_EQ(refusal(s, db).rfind("s.toml:6: kill-member is not possible on an external cluster", 0),
            0u)
      << refusal(s, db);
  const Scenario mix = scenario_with("[nemesis.random]\nfaults = { \"pause-worker\" = 1 }\n");
  EXPECT_EQ(refusal(mix, db), "s.toml: [nemesis.random] is not supported with --external-uri");
  EXPECT_THROW(ExternalDb(three_members(), "mongodb://a:1,b:2/"), std::invalid_argument);
  EXPECT_THROW(ExternalDb(three_members(), "http://a:1,b:2,c:3/"), std::invalid_argument);
}

// --external-uri runs the workers beside the harness against someone else's set: a --cluster
// that places members (netns, docker) or an --image for them contradicts it and is refused,
// naming the options, rather than silently running on loopback. The model leaves out the
// scenario's own cluster.backend (only --cluster is checked here).
std::string choice_error(const RunOptions& o) {
  try {
    choose_backend(o, scenario_with(""));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(ChooseBackend, ExternalUriRefusesPlacingClustersAndImages) {
  RunOptions o;
  o.external_uri = "mongodb://a:1,b:2,c:3/?replicaSet=rs0";
  EXPECT_EQ(choice_error(o), "");
  o.backend = "loopback";
  EXPECT_EQ(choice_error(o), "");
  o.backend = "docker";
  EXPECT_EQ(choice_error(o), "--external-uri needs --cluster loopback, not --cluster docker");
  o.backend = "netns";
  EXPECT_EQ(choice_error(o), "--external-uri needs --cluster loopback, not --cluster netns");
  o.backend = "";
  o.image = "mongo:7.0";
  EXPECT_EQ(choice_error(o), "--external-uri and --image exclude each other");
}

// What runs in an --image is said, never guessed from its name: --image without --image-kind,
// an unknown kind, a kind off --cluster docker and a faketime library without a mongod --image are
// refused before anything starts, naming the option. Left out: whether the image really runs
// that program (seen only when it starts).
TEST(ChooseBackend, ImageNeedsAKnownKind) {
  RunOptions o;
  o.backend = "docker";
  o.image = "mongo:7.0";
  EXPECT_EQ(choice_error(o),
            "--image mongo:7.0 needs --image-kind mongosim or mongod (the program its members "
            "run: it decides the command line and which faults are possible)");
  o.image_kind = "mongo";
  EXPECT_EQ(choice_error(o), "--image-kind: unknown image kind 'mongo' (mongosim or mongod)");
  o.image_kind = "mongosim";
  o.image_faketime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";
  const std::string faketime_refused =
      "--image-faketime names libfaketime inside a mongod image: it needs --image and "
      "--image-kind mongod (the image built here gets the host's own)";
  EXPECT_EQ(choice_error(o), faketime_refused);
  o.image.clear();
  o.image_kind = "mongod";
  EXPECT_EQ(choice_error(o), faketime_refused);
  o.image = "mongo-faketime:7.0";
  o.image_faketime = "libfaketimeMT.so.1";
  EXPECT_EQ(choice_error(o),
            "--image-faketime libfaketimeMT.so.1: the library's absolute path inside the image");
  o.image.clear();
  o.image_faketime.clear();
  o.backend = "netns";
  EXPECT_EQ(choice_error(o), "--image-kind needs --cluster docker");
}

// --mongod moves member clocks only through faketime: without it on PATH, clock faults are
// refused; other kinds are not.
TEST(Preflight, MongodClockFaultsNeedFaketime) {
  const char* saved = std::getenv("PATH");
  const std::string path = saved ? saved : "";
  setenv("PATH", "/nonexistent", 1);
  Supervisor none;
  DbConfig c = three_members();
  c.moves_member_clocks = true;
  const MongodDb db(c, none, "mongod", Placement::kNetns);
  setenv("PATH", path.c_str(), 1);
  const Scenario s = scenario_with(
      "[[nemesis.fault]]\nat_ms = 1\nfault = \"clock-skew\"\nduration_ms = 5\noffset_ms = 900\n");
  EXPECT_NE(refusal(s, db).find("s.toml:6: clock-skew moves a member's clock: clock faults on "
                                "--mongod members need the faketime program"),
            std::string::npos)
      << refusal(s, db);
  EXPECT_EQ(db.supports(FaultKind::kKillMember), std::nullopt);
  EXPECT_EQ(db.supports(FaultKind::kPartitionHalves), std::nullopt);
}

}  // namespace
}  // namespace locklab
