// locklab: run a scenario against a cluster and check its history, or re-check a stored run.
//   locklab run SCENARIO.toml [--cluster netns|loopback] [--mongod PATH | --external-uri URI]
//                             [--seed N] [--out DIR]
//                             [--junit FILE] [--expectation-gate]
//   locklab check RUN_DIR [--junit FILE]
//   locklab clients          the lock clients a scenario can choose, and whether each can run here
// Exit codes (docs/properties.md "Outcomes"): 0 valid, 1 a property violated, 3 unknown,
// 2 harness error or bad input (including bad command-line arguments), 77 (run only) not run:
// the scenario's client is unavailable here.
#include <CLI/CLI.hpp>
#include <iostream>

#include "client/clients.h"
#include "db/admin.h"
#include "run/check_command.h"
#include "run/run.h"

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
  run_cmd->add_option("--mongod", run.member_program, "member program (default: mongosim)");
  run_cmd->add_option("--external-uri", run.external_uri,
                      "an already-initiated replica set to run against (e.g. docker/)");
  CLI::Option* seed_opt = run_cmd->add_option("--seed", seed, "seed for every random choice");
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
  if (clients_cmd->parsed()) {
    std::cout << locklab::render_clients(locklab::ClientEnvironment::current());
    return 0;
  }
  return locklab::check_run_directory(run_dir, check);
}
