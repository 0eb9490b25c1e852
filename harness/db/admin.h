// The harness's own connections to members (admin commands, the confirmed final reads): one
// short-lived single-threaded libmongoc client per call, direct to one host, appname
// "locklab-harness" (which no failCommand fault targets), bounded timeouts. Used by Db's default
// admin methods; usable by any backend whose members are reachable by TCP from some namespace.
//
// Thread rules: every function may be called from any thread; run_in_netns runs its body on a
// helper thread joined before it returns.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace locklab {

// True for a command reply with ok: 1.
bool reply_ok(const nlohmann::json& reply);

// Keeps libmongoc's counters out of /dev/shm for this process and every child it starts
// (MONGOC_DISABLE_SHM=1). Without it the driver makes /dev/shm/mongoc-<pid> when it initializes
// (this build initializes at load, before main) and removes it only at mongoc_cleanup: a process
// killed by a signal (a SIGKILLed harness, a worker a kill fault hit) leaves the file on the host,
// and a later process given the same pid (pids wrap at 32768 on small machines) finds it taken.
// With `argv` (main's), a process whose environment lacks the variable removes its file and
// restarts itself with execv("/proc/self/exe", argv): same pid, same arguments; throws when that
// fails. Without `argv` it only sets the variable (enough for children and a later mongoc_init).
// Also drops the one warning the driver prints when it does not use /dev/shm (it would open every
// worker log); other messages keep the default handler. Call from main() before any thread
// starts: setenv and exec are not safe beside other threads.
void keep_driver_out_of_shm(char** argv);

// Initializes libmongoc once per process and silences its log
// output (the harness reports errors itself). Idempotent.
void init_driver();

// Runs `body` on a helper thread that has entered the network namespace `netns` (a name under
// /var/run/netns or an absolute path: run/process.h netns_path; "" stays in the current one) and
// rethrows its exception. setns(CLONE_NEWNET) affects only the calling thread, which is why a
// helper thread is used.
void run_in_netns(const std::string& netns, const std::function<void()>& body);

// One command on a direct connection to `host` ("address:port") from the calling thread's
// namespace. Never throws for a failed command: the reply, with ok 0, errmsg and code added when
// the driver failed. Throws std::runtime_error for a command that is not valid BSON.
nlohmann::json direct_command(const std::string& host, const std::string& database,
                              const nlohmann::ordered_json& command);

// How long a confirmed find waits for the commit point to reach the primary's last write.
inline constexpr int64_t kConfirmedFindCommitWaitMs = 10'000;

// hello, find {_id: id} at majority read concern after the primary's last applied write (so a
// write acknowledged at w:1 before the call is in it once committed), hello, on one connection
// to `host`: the document (null when none) when both hellos say writable primary with the same
// electionId; otherwise throws std::runtime_error saying why not (also when the commit point
// does not reach that write within kConfirmedFindCommitWaitMs).
nlohmann::json confirmed_find(const std::string& host, const std::string& database,
                              const std::string& collection, const std::string& id);

// The electionId of a primary's hello as comparable text ("" when absent). ObjectId hex of one
// length orders as the term it encodes.
std::string election_id(const nlohmann::json& hello);

// A replica-set name no other set on this host has: "rs0-<pid>-<random hex>". Sets whose members
// share 127.0.0.1 get one each: a member of one set on a port a dead member of another left free
// would otherwise be taken for that member, by drivers (hello names the set, nothing else) and
// by members that predate replicaSetId.
std::string unique_set_name();

}  // namespace locklab
