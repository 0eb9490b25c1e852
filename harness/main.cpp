// locklab: run a scenario against a cluster and check its history, or re-check a stored run.
//   locklab run SCENARIO.toml [--cluster netns|loopback] [--mongod PATH | --external-uri URI]
//                             [--seed N] [--out DIR]
//                             [--junit FILE] [--expectation-gate]
//   locklab check RUN_DIR [--junit FILE]
//   locklab clients          the lock clients a scenario can choose, and whether each can run here
//   locklab explore [--client C] [--faults a,b] [--members N] [--write-concern majority|W]
//                   [--properties p,q]
//                   [--cases N] [--seed S] [--time-budget 5m] [--shard I/N] [--shrink-reruns K]
//                   [--out DIR] ...        search for failing experiments (explore/explore.h)
//   locklab explore --merge DIR... [--out DIR]   one summary of several shards
// Exit codes (docs/properties.md "Outcomes"): 0 valid, 1 a property violated, 3 unknown,
// 2 harness error or bad input (including bad command-line arguments), 77 (run only) not run:
// the scenario's client is unavailable here.
#include <CLI/CLI.hpp>
#include <iostream>

#include "client/client_manifest.h"
#include "client/clients.h"
#include "db/admin.h"
#include "explore/explore.h"
#include "run/check_command.h"
#include "run/run.h"
#include "run/seed_flag.h"

namespace {

// `locklab explore`'s arguments as typed; run_explore turns them into ExploreOptions.
struct ExploreArgs {
  locklab::ExploreOptions options;
  std::string clients, faults, properties, write_concern, honour_lost, backoff, time_budget,
      shrink_budget, shard;
  int members = 0;
  uint64_t seed = 0;
  int only_case = -1;
  std::vector<std::string> merge;
  CLI::Option* seed_opt = nullptr;
};

CLI::App* add_explore_command(CLI::App& app, ExploreArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "explore", "search for fault schedules that break a property, shrunk to a repro");
  cmd->add_option("--client", a.clients,
                  "pin the client(s), comma-separated: names or paths of client.toml files");
  cmd->add_flag("--within-claims", a.options.within_claims,
                "search only what the one --client claims (its faults, properties, write concern "
                "and honour_lost; `locklab clients` lists them); other pins may narrow it");
  cmd->add_option("--faults", a.faults, "pin the fault kinds, comma-separated");
  cmd->add_option("--members", a.members, "pin the cluster size")->check(CLI::Range(1, 7));
  cmd->add_option("--write-concern", a.write_concern, "pin the write concern: majority or 1..7");
  cmd->add_option("--backoff", a.backoff, "pin mongolock's wait: random, adaptive or notify")
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(locklab::kBackoffNames),
                                                     std::end(locklab::kBackoffNames))));
  cmd->add_option("--honour-lost", a.honour_lost, "pin workload.honour_lost: true or false")
      ->check(CLI::IsMember({"true", "false"}));
  cmd->add_option(
      "--properties", a.properties,
      "judge cases on these properties only, comma-separated (default: all that apply)");
  cmd->add_option("--cases", a.options.cases, "cases in the sequence (all shards)")
      ->check(CLI::Range(1, 1'000'000));
  a.seed_opt = cmd->add_option("--seed", a.seed, "the exploration's seed (default: drawn, printed)")
                   ->check(locklab::seed_validator());
  cmd->add_option("--time-budget", a.time_budget, "start no case after this (e.g. 5m)");
  cmd->add_option("--shard", a.shard, "I/N: run cases i = I mod N of the sequence");
  cmd->add_option("--case", a.only_case, "run this case of the sequence only (reproduce)")
      ->check(CLI::Range(0, 1'000'000));
  cmd->add_option("--max-size", a.options.max_size, "largest generator size (0..100)")
      ->check(CLI::Range(0, 100));
  cmd->add_option("--shrink-reruns", a.options.shrink_reruns,
                  "K: a shrink candidate fails when one of K runs fails")
      ->check(CLI::Range(1, 20));
  cmd->add_option("--confirm-runs", a.options.confirm_runs, "runs confirming a shrunk repro")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--shrink-budget", a.shrink_budget, "time bound of one shrink (default 10m)");
  cmd->add_flag("--keep-runs", a.options.keep_runs, "keep the run directories of passing cases");
  cmd->add_flag("--first-finding", a.options.first_finding,
                "stop after the first case that finds something (once it is shrunk)");
  cmd->add_option("--out", a.options.out_dir, "output directory");
  cmd->add_option("--merge", a.merge, "merge these explorations' summaries (into --out)");
  return cmd;
}

// A comma-separated list; an empty item ("a,,b", a trailing comma) is refused naming the option.
std::vector<std::string> split_commas(const std::string& text, const std::string& option) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  std::string item;
  for (char c : text + ",") {
    if (c != ',') {
      item += c;
      continue;
    }
    if (item.empty()) {
      throw std::invalid_argument(option + ": an empty item in \"" + text + "\"");
    }
    out.push_back(item);
    item.clear();
  }
  return out;
}

int run_explore(ExploreArgs& a, int argc, char** argv) {
  locklab::ExploreOptions& o = a.options;
  for (int i = 0; i < argc; ++i)
    o.command_line += (i == 0 ? "locklab" : std::string(" ") + argv[i]);
  if (!a.merge.empty()) {
    return locklab::merge_command(a.merge, o.out_dir.empty() ? "." : o.out_dir);
  }
  try {
    o.pins.clients = split_commas(a.clients, "--client");
    for (std::string& client : o.pins.clients) {
      if (!locklab::names_a_manifest(client)) continue;
      try {
        client = std::string(locklab::load_client_manifest(client).name);
      } catch (const locklab::ManifestError& e) {
        throw std::invalid_argument(std::string("--client: client manifest: ") + e.what());
      }
    }
    o.pins.faults = split_commas(a.faults, "--faults");
    o.pins.properties = split_commas(a.properties, "--properties");
    if (a.members > 0) o.pins.members = a.members;
    if (a.write_concern == "majority") {
      o.pins.write_concern_w = 0;
    } else if (!a.write_concern.empty()) {
      const std::string w_text = a.write_concern;
      if (w_text.size() != 1 || w_text[0] < '1' || w_text[0] > '7') {
        throw std::invalid_argument("--write-concern: expected majority or 1..7, got \"" + w_text +
                                    "\"");
      }
      o.pins.write_concern_w = w_text[0] - '0';
    }
    if (!a.honour_lost.empty()) o.pins.honour_lost = a.honour_lost == "true";
    if (!a.backoff.empty()) o.pins.backoff = locklab::backoff_named(a.backoff);
    if (!a.time_budget.empty())
      o.time_budget_ms = locklab::parse_duration_ms(a.time_budget, "--time-budget");
    if (!a.shrink_budget.empty()) {
      o.shrink_budget_ms = locklab::parse_duration_ms(a.shrink_budget, "--shrink-budget");
    }
    if (!a.shard.empty()) std::tie(o.shard_index, o.shard_count) = locklab::parse_shard(a.shard);
  } catch (const std::invalid_argument& e) {
    std::cerr << "locklab explore: " << e.what() << "\n";
    return locklab::kExitError;
  }
  if (a.seed_opt->count() > 0) o.seed = a.seed;
  if (o.shard_index >= o.cases) {
    std::cerr << "locklab explore: --shard " << a.shard << " has no case: --cases " << o.cases
              << " gives cases 0.." << o.cases - 1 << " to shards 0.." << o.cases - 1 << "\n";
    return locklab::kExitError;
  }
  if (a.only_case >= 0) {
    if (!a.shard.empty() && a.only_case % o.shard_count != o.shard_index) {
      std::cerr << "locklab explore: --case " << a.only_case << " belongs to shard "
                << a.only_case % o.shard_count << "/" << o.shard_count << ", not --shard "
                << a.shard << "\n";
      return locklab::kExitError;
    }
    if (a.only_case >= o.cases) {
      std::cerr << "locklab explore: --case " << a.only_case << " is past --cases " << o.cases
                << "\n";
      return locklab::kExitError;
    }
    o.only_case = a.only_case;
  }
  return locklab::explore_command(o);
}

}  // namespace

int main(int argc, char** argv) {
  locklab::keep_driver_out_of_shm(argv);  // for this process and every member, worker and client
  CLI::App app{"locklab: a Jepsen-style harness for MongoDB distributed locks"};
  app.require_subcommand(1);

  locklab::RunOptions run;
  uint64_t seed = 0;
  CLI::App* run_cmd = app.add_subcommand("run", "run a scenario and check its history");
  run_cmd->add_option("scenario", run.scenario_path, "scenario TOML file")->required();
  run_cmd
      ->add_option("--cluster", run.backend,
                   "netns (default where its namespaces can be made), loopback, or docker "
                   "(members and workers in containers: docker/README.md)")
      ->check(CLI::IsMember({"netns", "loopback", "docker"}));
  run_cmd->add_option("--image", run.image,
                      "--cluster docker: the members' image (default: locklab/mongosim built "
                      "from the local programs; e.g. mongo:7.0)");
  run_cmd
      ->add_option("--image-kind", run.image_kind,
                   "--cluster docker: the program the members run, mongosim or mongod (required "
                   "with --image; mongod without --image runs the image built here as mongod, "
                   "clocks through libfaketime: the test of the mongod image path)")
      ->check(CLI::IsMember({"mongosim", "mongod"}));
  run_cmd->add_option("--image-faketime", run.image_faketime,
                      "with --image and --image-kind mongod: libfaketime's library inside the "
                      "image (e.g. /usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1), "
                      "which makes member clock faults possible");
  run_cmd->add_option("--set", run.overrides,
                      "TABLE.KEY=VALUE over the scenario file, e.g. lock.backoff=notify "
                      "(repeatable; the run's scenario.toml shows the result)");
  run_cmd->add_option("--mongod", run.member_program, "member program (default: mongosim)");
  run_cmd->add_option("--external-uri", run.external_uri,
                      "an already-initiated replica set to run against (e.g. docker/)");
  CLI::Option* seed_opt = run_cmd->add_option("--seed", seed, "seed for every random choice")
                              ->check(locklab::seed_validator());
  run_cmd->add_option("--out", run.out_dir, "output directory");
  run_cmd->add_option("--junit", run.junit_path, "also write a JUnit XML report here");
  run_cmd->add_flag("--expectation-gate", run.expectation_gate,
                    "exit 0 iff the outcome matches the scenario's expect");

  std::string run_dir;
  locklab::CheckCommandOptions check;
  CLI::App* check_cmd = app.add_subcommand("check", "re-check a stored run directory");
  check_cmd->add_option("run_dir", run_dir, "a run's output directory")->required();
  check_cmd->add_option("--junit", check.junit_path, "also write a JUnit XML report here");

  CLI::App* clients_cmd =
      app.add_subcommand("clients", "list the lock clients and whether each can run here");

  ExploreArgs explore;
  CLI::App* explore_cmd = add_explore_command(app, explore);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : locklab::kExitError;
  }
  if (run_cmd->parsed()) {
    if (seed_opt->count() > 0) run.seed = seed;
    return locklab::run_scenario(run);
  }
  if (explore_cmd->parsed()) return run_explore(explore, argc, argv);
  if (clients_cmd->parsed()) {
    std::cout << locklab::render_clients(locklab::ClientEnvironment::current());
    return 0;
  }
  return locklab::check_run_directory(run_dir, check);
}
