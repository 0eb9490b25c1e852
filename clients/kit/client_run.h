// The shared worker kit of the seed-lock clients: the command line (the same flags as
// locklab-worker, so the harness launches every client alike), stop handling (SIGTERM/SIGINT
// taken by one sigwait thread), and the workload loop that turns a SeedLock's acquires and
// releases into history events (vocabulary v2, checker/history.h):
//   mutex    acquire, hold critical_section_ms, release;
//   fenced   acquire, hold, write the fenced resource with the hold's token (locks with tokens);
//   counter  acquire, read the counter, hold, write it plus one;
//   rw       (locks with shared holds) each operation a shared hold with probability
//            read_percent, else an exclusive one, held a uniform 0..2 * critical_section_ms;
//            acquire invoke carries value.mode ("shared" | "exclusive"), acquire ok value.mode
//            and value.max_shared.
// Every operation that can take effect is recorded as `invoke` before its request is sent.
// A lock without fencing tokens records `acquire ok` with no token and value.no_token = true, so
// a reader of the history knows the token is absent by design, not lost.
// With honour_lost, a lost notification stops the critical section and `lost` is recorded once
// it has stopped; without it `lost-ignored` is recorded when the notification fires.
//
// Thread rules: the loop runs on the main thread; only the lock's watchdog thread (if any) calls
// the lost notification, which sets a flag and appends one event.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "client/workload.h"
#include "seed_lock.h"

namespace locklab::clients {

// A worker's configuration: locklab-worker's, plus the rw workload's flags.
struct ClientConfig {
  WorkerConfig worker;     // worker.kind is kMutex for rw (the holds are plain holds)
  bool rw = false;         // --kind rw
  int read_percent = 80;   // rw: the share of operations that take a shared hold
  int32_t max_shared = 0;  // rw: readers at once per lock (0 = unlimited)
};

// What makes one client: its name, what it can run, the original's defaults, how to build it.
struct SeedClient {
  std::string program;             // "locklab-distributedlock": used in messages
  std::string description;         // one line for --help
  std::vector<std::string> kinds;  // the workloads it runs ("mutex", "fenced", "counter", "rw")
  LockSpec defaults;               // flag defaults: the original's own defaults
  // The first problem with a parsed configuration that this lock cannot honour (a flag the
  // original has no equivalent for), or "" when it can run it.
  std::function<std::string(const ClientConfig&)> refuse;
  // Builds the lock for one worker (after the history is open). May throw to refuse to start.
  std::function<std::unique_ptr<SeedLock>(const ClientConfig&, Recorder&)> make_lock;
};

// Parses the flags, runs the workload until done or stopped, and returns the exit code:
// 0 done, 2 could not start (the error is printed to stderr naming the program and worker),
// or CLI11's code for a bad command line.
int client_main(int argc, char** argv, const SeedClient& spec);

}  // namespace locklab::clients
