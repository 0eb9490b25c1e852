// Leaving nothing behind. A run owns namespaces "ll-<pid>-*" (nft tables live inside them), a
// temporary directory "/tmp/ll-<pid>-*", and the processes it started, noted in that directory
// with their process groups and libfaketime files (run/noted_processes.h); its child processes
// die with it (PDEATHSIG), their children with the noted groups. On the netns backend the
// namespaces exist only inside the run's sandbox (run/sandbox.h), which the kernel frees when
// the run dies; what follows is for the temporary directory, and for namespaces that older
// versions created on the host. Three mechanisms together cover every way a run can end:
//   1. normal teardown and the SIGINT/SIGTERM path delete what the run created;
//   2. a janitor process, forked at start, waits for the harness to die by any means (even
//      SIGKILL: the kernel closes the harness's end of a pipe) and then deletes the run's
//      namespaces and temporary directory;
//   3. every run starts with a sweep of "ll-<pid>-*" leftovers whose owner pid is dead (for the
//      case where the janitor itself was killed). A netns-backend run sweeps and cleans /tmp
//      only (HostNamespaces::kLeave): it never touches the host's /run/netns.
// Thread rules: call from the harness's main thread, before other threads exist (it forks).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "run/noted_processes.h"

namespace locklab {

// "ll-<pid>" for this process.
std::string run_prefix();
// The owner pid encoded in a name "ll-<pid>-...", or 0 when the name is not of that shape.
pid_t owner_of(const std::string& name);

// Whether the cleanup also deletes named network namespaces of the host (/run/netns). A sandboxed
// run never creates any there, and must leave the host's network state alone: kLeave.
enum class HostNamespaces { kClean, kLeave };

// Kills every process left inside the namespaces named "<prefix>-*" and deletes those
// namespaces (unless kLeave), and deletes the directories /tmp/<prefix>-* of this user (another
// user's, even to root, are left: a run's temporary directory is its own user's). Never throws.
// `gone`: what to do with the groups of noted processes that are gone (run/noted_processes.h):
// the janitor ends them, a later sweep leaves them.
void cleanup_run(const std::string& prefix, HostNamespaces host = HostNamespaces::kClean,
                 GoneGroups gone = GoneGroups::kLeave);
// cleanup_run for every "ll-<pid>" whose process is gone; returns the prefixes it cleaned.
std::vector<std::string> sweep_stale_runs(HostNamespaces host = HostNamespaces::kClean);

// Forks the janitor for `prefix`. It ignores SIGINT/SIGTERM (a Ctrl-C reaches the whole
// foreground process group) and exits after cleaning (cleanup_run with `host`) once the harness
// is gone.
void start_janitor(const std::string& prefix, HostNamespaces host = HostNamespaces::kClean);

// Creates /tmp/<prefix>-XXXXXX and returns its path. Throws std::runtime_error.
std::string make_run_temp_dir(const std::string& prefix);
// Removes a run's temporary directory and, first, ends the processes noted in it
// (run/noted_processes.h, end_noted_processes). Never throws.
void remove_run_temp_dir(const std::string& dir, GoneGroups gone);

}  // namespace locklab
