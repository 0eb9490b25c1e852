// mongosim: a MongoDB-wire-compatible server. Parses mongod-style flags, wires the server core
// to the data layer, serves until SIGTERM/SIGINT, then shuts down cleanly.
#include <signal.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>

#include "base/log.h"
#include "base/repl_state_lock.h"
#include "data/store.h"
#include "server/durability.h"
#include "server/member_store.h"
#include "server/options.h"
#include "server/replication.h"
#include "server/server.h"

namespace {

constexpr int kExitBadOptions = 2;
constexpr int kExitCannotListen = 48;  // mongod's exit code when it cannot bind
constexpr int kExitBadDbPath = 100;    // mongod's exit code for an unusable dbpath

// Startup recovery (--dbpath): lock the directory, replay the journal into the store and read
// the persisted term, vote and config. Returns null without --dbpath; throws on failure.
std::unique_ptr<mongosim::server::DbPath> open_dbpath(const std::string& dir,
                                                      mongosim::data::Store& store) {
  if (dir.empty()) return nullptr;
  auto dbpath = std::make_unique<mongosim::server::DbPath>(dir);
  dbpath->recover(store);
  return dbpath;
}

// Blocks the shutdown signals in every thread (threads inherit the mask), so the main thread
// alone receives them through sigwait.
sigset_t block_shutdown_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return set;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace mongosim;
  server::ParsedCommandLine cli = server::parse_command_line(argc, argv);
  if (cli.help) {
    std::fputs(server::usage_text().c_str(), stdout);
    return 0;
  }
  if (!cli.options) {
    std::fprintf(stderr, "mongosim: %s\n", cli.error.c_str());
    return kExitBadOptions;
  }
  sigset_t signals = block_shutdown_signals();
  std::unique_ptr<server::Server> srv;
  try {
    srv = std::make_unique<server::Server>(std::move(*cli.options));
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "mongosim: %s\n", e.what());
    return kExitBadOptions;
  }
  server::ServerContext& ctx = srv->context();

  // Every write and every fetched batch goes through this lock (repl_state_lock.h).
  ReplStateLock repl_state_lock;
  data::Store store(server::member_store_options(ctx, repl_state_lock));
  store.register_commands(ctx.registry);
  ctx.attach_oplog(store);

  std::unique_ptr<server::DbPath> dbpath;
  std::optional<server::PersistedReplicaState> persisted;
  try {
    dbpath = open_dbpath(ctx.options.dbpath, store);
    if (dbpath) persisted = dbpath->load_replica_state();
  } catch (const std::exception& e) {
    server::log_event(server::Severity::kError, "STORAGE", 90100, "initandlisten",
                      "Cannot start on the dbpath", bson::Document{{"error", bson::V(e.what())}});
    std::fprintf(stderr, "mongosim: %s\n", e.what());
    return kExitBadDbPath;
  }

  server::ReplicationCoordinator replication(ctx, store, repl_state_lock, dbpath.get());
  replication.register_commands();
  if (persisted) replication.restore(*persisted);

  try {
    srv->start();
  } catch (const std::runtime_error& e) {
    server::log_event(server::Severity::kError, "NETWORK", server::log_id::kListenFailed, "main",
                      "Cannot listen", bson::Document{{"error", bson::V(e.what())}});
    std::fprintf(stderr, "mongosim: %s\n", e.what());
    return kExitCannotListen;
  }
  store.start_ttl_monitor();
  replication.start();

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  server::log_event(server::Severity::kInfo, "CONTROL", server::log_id::kShutdown, "main",
                    "Shutting down", bson::Document{{"signal", bson::V(int32_t{signal_number})}});
  srv->stop();
  replication.stop();
  store.stop();
  if (dbpath) dbpath->close(store);  // a last journal fsync
  return 0;
}
