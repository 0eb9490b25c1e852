// Clients declared by a client.toml manifest: a bad manifest is refused naming its file, line
// and key; a scenario names a manifest by a path relative to itself; the source tree's
// manifests load and are listed; availability runs `requires` and `available_if` for real; the
// explorer writes a manifest client back as its path. A real run of a manifest client is
// scenarios/must-fail/lorehov-wait-shortens-lease.toml (a ctest of its own).
// Left out: a manifest edited or deleted while a run uses it (it is read once, at load).
#include "client/client_manifest.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "explore/scenario_writer.h"
#include "run/scenario.h"
#include "temp_dir.h"

namespace locklab {
namespace {

using testkit::TempDir;

// A manifest file in `dir` (with an executable program beside it), whose text is `body`.
std::string write_manifest(const TempDir& dir, const std::string& file, const std::string& body) {
  const std::string program = dir.file("worker.sh");
  std::ofstream(program) << "#!/bin/sh\nexit 0\n";
  ::chmod(program.c_str(), 0755);
  std::ofstream(dir.file(file)) << body;
  return dir.file(file);
}

std::string load_error(const std::string& path) {
  try {
    load_client_manifest(path);
  } catch (const ManifestError& e) {
    return e.what();
  }
  return "";
}

constexpr const char* kGood =
    "name = \"%s\"\nprogram = \"worker.sh\"\nworkloads = [\"mutex\"]\nfencing_tokens = false\n";

std::string good(const std::string& name) {
  std::string text = kGood;
  return text.replace(text.find("%s"), 2, name);
}

TEST(ClientManifest, BadManifestsAreRefusedNamingFileLineAndKey) {
  TempDir dir;
  struct Case {
    std::string body, expected;
  };
  const std::vector<Case> cases = {
      {"program = \"worker.sh\"\nworkloads = [\"mutex\"]\nfencing_tokens = false\n",
       ":0: name: missing"},
      {"name = \"Bad Name\"\nprogram = \"w\"\nworkloads = [\"mutex\"]\nfencing_tokens = false\n",
       ":1: name: \"Bad Name\": 1 to 64 characters"},
      {"name = \"m1\"\nprogram = \"worker.sh\"\nworkloads = [\"mutex\", \"frob\"]\n"
       "fencing_tokens = false\n",
       ":3: workloads: unknown workload \"frob\""},
      {"name = \"m2\"\nprogram = \"worker.sh\"\nworkloads = [\"fenced\"]\nfencing_tokens = false\n",
       ":3: workloads: the fenced workload needs fencing_tokens = true"},
      {"name = \"m3\"\nprogram = \"worker.sh\"\nworkloads = \"mutex\"\nfencing_tokens = false\n",
       ":3: workloads: expected an array of strings"},
      {good("m4") + "colour = \"red\"\n", ":5: colour: unknown key"},
      {good("m5") + "args = [1]\n", ":5: args: expected an array of strings"},
      {"name = \"m6\"\nprogram = \"worker.sh\"\nworkloads = [\"mutex\"]\nfencing_tokens = \"no\"\n",
       ":4: fencing_tokens: expected true or false"},
      {good("m8") + "lease_granularity_ms = -1\n",
       ":5: lease_granularity_ms: must be in [0, 3600000], got -1"},
      {good("m9") + "lease_granularity_ms = \"1s\"\n",
       ":5: lease_granularity_ms: expected a whole number"},
      {good("mongolock"), "name: \"mongolock\" is already a client of the table"},
      {"name = \"m7\"\nprogram = [\n", ": syntax: "},
      {std::string(kManifestBytesMax + 1, '#'), ":0: a client manifest is at most 65536 bytes"},
      // A misspelled required key: the missing one is named, and so is what stands in its place.
      {"name = \"m10\"\nprogram = \"worker.sh\"\nworkload = [\"mutex\"]\nfencing_tokens = false\n",
       ":0: workloads: missing (a client manifest must set it; unknown key on line 3: workload)"},
      // Claims: both lists or neither, known names, judged on the client's workloads.
      {good("c1") + "claims_faults = [\"pause-worker\"]\n",
       ":0: claims_properties: missing: claims_faults needs it"},
      {good("c2") + "claims_properties = [\"tokens.unique\"]\n",
       ":0: claims_faults: missing: claims_properties needs it"},
      {good("c3") +
           "claims_faults = [\"pause-wroker\"]\nclaims_properties = [\"exclusion.strict\"]\n",
       ":5: claims_faults: unknown fault kind \"pause-wroker\""},
      {good("c4") + "claims_faults = []\nclaims_properties = [\"exclusion.strict\"]\n",
       ":5: claims_faults: claims no fault kind"},
      {good("c5") + "claims_faults = [\"pause-worker\", \"pause-worker\"]\n"
                    "claims_properties = [\"exclusion.strict\"]\n",
       ":5: claims_faults: fault kind \"pause-worker\" listed twice"},
      {good("c6") + "claims_faults = [\"pause-worker\"]\nclaims_properties = [\"tokens.unique\"]\n",
       ":6: claims_properties: property \"tokens.unique\" is judged on none of its workloads "
       "(mutex, without fencing tokens)"},
      {good("c7") +
           "claims_faults = [\"pause-worker\"]\nclaims_properties = [\"exclusion.strikt\"]\n",
       ":6: claims_properties: unknown property \"exclusion.strikt\""},
      {good("c8") +
           "claims_faults = [\"pause-worker\"]\nclaims_properties = [\"exclusion.strict\"]\n"
           "claims_write_concern = \"all\"\n",
       ":7: claims_write_concern: expected \"majority\" or \"1\"..\"7\", got \"all\""},
      {good("c10") +
           "claims_faults = [\"pause-worker\"]\nclaims_properties = [\"exclusion.strict\"]\n"
           "claims_write_concern = \"\"\n",
       ":7: claims_write_concern: expected \"majority\" or \"1\"..\"7\", got \"\""},
      {good("c9") + "claims_honour_lost = true\n",
       ":5: claims_honour_lost: claims_faults and claims_properties missing"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path =
        write_manifest(dir, "bad" + std::to_string(i) + ".toml", cases[i].body);
    const std::string error = load_error(path);
    EXPECT_NE(error.find(path), std::string::npos) << "case " << i << ": " << error;
    EXPECT_NE(error.find(cases[i].expected), std::string::npos) << "case " << i << ": " << error;
  }
  EXPECT_NE(load_error(dir.file("absent.toml")).find(":0: cannot open the client manifest"),
            std::string::npos);
}

TEST(ClientManifest, LeaseGranularityIsReadIntoTheRow) {
  TempDir dir;
  EXPECT_EQ(load_client_manifest(
                write_manifest(dir, "g.toml", good("granular") + "lease_granularity_ms = 1000\n"))
                .lease_granularity_ms,
            1000);
}

TEST(ClientManifest, ClaimsAreReadIntoTheRowAndListed) {
  TempDir dir;
  const ClientSpec& none = load_client_manifest(write_manifest(dir, "n.toml", good("claims-none")));
  EXPECT_FALSE(none.claims.has_value());
  const ClientSpec& row = load_client_manifest(write_manifest(
      dir, "c.toml",
      good("claims-some") +
          "claims_faults = [\"kill-worker\", \"step-down\"]\n"
          "claims_properties = [\"exclusion.strict\"]\nclaims_write_concern = \"majority\"\n"
          "claims_honour_lost = true\n"));
  ASSERT_TRUE(row.claims.has_value());
  EXPECT_EQ(row.claims->faults, (std::vector<std::string_view>{"kill-worker", "step-down"}));
  EXPECT_EQ(row.claims->properties, (std::vector<std::string_view>{"exclusion.strict"}));
  EXPECT_EQ(row.claims->write_concern_w, 0);
  EXPECT_EQ(row.claims->honour_lost, true);
  const std::string listing = render_clients(ClientEnvironment::current());
  EXPECT_NE(listing.find("claims (explore --within-claims): exclusion.strict under kill-worker, "
                         "step-down; write concern majority; honour_lost true"),
            std::string::npos)
      << listing;
}

TEST(ClientManifest, OnlyAManifestOutsideTheSourceTreeIsNamedByItsPathInScenarios) {
  TempDir dir;
  const ClientSpec& outside = load_client_manifest(write_manifest(dir, "o.toml", good("outside")));
  EXPECT_EQ(manifest_path_for_scenarios(outside), manifest_path_of(outside));
  const ClientSpec* lorehov = find_client("python-lorehov");
  ASSERT_NE(lorehov, nullptr);
  EXPECT_EQ(manifest_path_for_scenarios(*lorehov), "");
  EXPECT_EQ(manifest_path_for_scenarios(*find_client("mongolock")), "");
  EXPECT_TRUE(names_a_manifest("a/client.toml"));
  EXPECT_TRUE(names_a_manifest("client.toml"));
  EXPECT_FALSE(names_a_manifest("python-lorehov"));
}

TEST(ClientManifest, SameFileTwiceIsOneRowAndAnotherFileCannotTakeTheName) {
  TempDir dir;
  const std::string first = write_manifest(dir, "a.toml", good("twin-name"));
  const ClientSpec& row = load_client_manifest(first);
  EXPECT_EQ(&load_client_manifest(dir.path() + "/./a.toml"), &row);
  EXPECT_EQ(find_client("twin-name"), &row);
  EXPECT_EQ(manifest_path_of(row), first);
  const std::string second = write_manifest(dir, "b.toml", good("twin-name"));
  EXPECT_NE(load_error(second).find("is already the client of " + first), std::string::npos)
      << load_error(second);
}

TEST(ClientManifest, ScenarioNamesAManifestRelativeToItself) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("clients/mine"));
  std::filesystem::create_directories(dir.file("scenarios"));
  const std::string manifest = dir.file("clients/mine/client.toml");
  std::ofstream(manifest) << good("relative-one") << "args = [\"--mode\", \"x\"]\n";
  std::ofstream(dir.file("clients/mine/worker.sh")) << "#!/bin/sh\n";
  const Scenario s =
      parse_scenario("[workload]\nclient = \"../clients/mine/client.toml\"\nduration_ms = 1000\n",
                     dir.file("scenarios/s.toml"));
  EXPECT_EQ(s.workload.client, "relative-one");
  EXPECT_EQ(s.workload.client_manifest, manifest);
  EXPECT_EQ(s.workload.client_line, 2);
  const ClientSpec* row = find_client("relative-one");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(client_program(*row, ClientEnvironment::current()), dir.file("clients/mine/worker.sh"));
  ASSERT_EQ(row->args.size(), 2u);
  EXPECT_EQ(row->args[1], "x");
  // The explorer writes the manifest's path back, so its repro loads the same client.
  const Scenario again = parse_scenario(scenario_to_toml(s), dir.file("elsewhere/r.toml"));
  EXPECT_EQ(again.workload.client, "relative-one");
}

TEST(ClientManifest, ScenarioWithABadManifestOrAWorkloadItCannotRunIsRefused) {
  TempDir dir;
  write_manifest(dir, "broken.toml", "name = \"x y\"\n");
  write_manifest(dir, "mutex-only.toml", good("mutex-only"));
  auto error_of = [&](const std::string& text) -> std::string {
    try {
      parse_scenario(text, dir.file("s.toml"));
    } catch (const ScenarioError& e) {
      return e.what();
    }
    return "";
  };
  const std::string broken = error_of("[workload]\nclient = \"broken.toml\"\nduration_ms = 1000\n");
  EXPECT_NE(broken.find(dir.file("s.toml") + ":2: workload.client: client manifest: " +
                        dir.file("broken.toml") + ":1: name"),
            std::string::npos)
      << broken;
  const std::string counter =
      error_of("[workload]\nclient = \"mutex-only.toml\"\nkind = \"counter\"\nduration_ms = 1\n");
  EXPECT_NE(counter.find("cannot run the counter workload (it runs: mutex)"), std::string::npos)
      << counter;
}

TEST(ClientManifest, AvailabilityRunsRequiresAndAvailableIf) {
  TempDir dir;
  ClientEnvironment env = ClientEnvironment::current();
  const ClientSpec& ok = load_client_manifest(write_manifest(
      dir, "ok.toml", good("avail-ok") + "available_if = [\"/bin/sh\", \"-c\", \"exit 0\"]\n"));
  EXPECT_EQ(client_unavailable(ok, env), "");
  const ClientSpec& refused = load_client_manifest(write_manifest(
      dir, "no.toml",
      good("avail-no") +
          "available_if = [\"/bin/sh\", \"-c\", \"echo noise; echo no module named x >&2; exit "
          "3\"]\n"));
  EXPECT_EQ(client_unavailable(refused, env),
            "available_if `/bin/sh -c echo noise; echo no module named x >&2; exit 3` exited 3: "
            "no module named x");
  const ClientSpec& tool = load_client_manifest(write_manifest(
      dir, "tool.toml", good("avail-tool") + "requires = [\"no-such-tool-anywhere\"]\n"));
  EXPECT_EQ(client_unavailable(tool, env), "no-such-tool-anywhere not found on PATH");
  std::ofstream(dir.file("plain.sh")) << "#!/bin/sh\n";
  std::ofstream(dir.file("plain.toml"))
      << "name = \"avail-plain\"\nprogram = \"plain.sh\"\nworkloads = [\"mutex\"]\n"
         "fencing_tokens = false\n";
  const ClientSpec& plain = load_client_manifest(dir.file("plain.toml"));
  EXPECT_EQ(client_unavailable(plain, env), dir.file("plain.sh") + " is not executable");
}

TEST(ClientManifest, SourceTreeManifestsLoadAndAreListed) {
  EXPECT_TRUE(source_manifest_errors().empty())
      << "a client.toml in the source tree cannot be loaded: " << source_manifest_errors().front();
  const ClientSpec* lorehov = find_client("python-lorehov");
  ASSERT_NE(lorehov, nullptr);
  EXPECT_FALSE(lorehov->fencing_tokens);
  EXPECT_NE(client_choice_error("python-lorehov", "fenced").find("its lock issues no tokens"),
            std::string::npos);
  const std::string listing = render_clients(ClientEnvironment::current());
  EXPECT_NE(listing.find("python-lorehov\n"), std::string::npos) << listing;
  EXPECT_NE(listing.find("manifest: " + manifest_path_of(*lorehov)), std::string::npos);
  EXPECT_NE(client_names().find("python-lorehov"), std::string::npos);
}

}  // namespace
}  // namespace locklab
