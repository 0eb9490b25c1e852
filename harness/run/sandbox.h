// The run's sandbox: a user, network, mount and PID namespace that the harness creates for
// itself, whether it was started as root or not. Every netns-backend run happens inside one, so
// its members, workers, veths and nft tables never touch the host's network stack.
//
// Layout: the harness (the "outer" process, the pid the user sees) unshares a user namespace in
// which it is root (uid and gid 0 map to the invoking user's euid and egid: files it writes belong
// to that user on the host; real root maps every id to itself, so it keeps its power over files
// of other owners), then a network and a mount namespace, and forks the run's PID 1 into a new
// PID namespace. PID 1 takes a mount namespace of its own (the outer process keeps the host's
// /dev/shm), mounts private tmpfs on /run (where `ip netns add` binds its named namespaces) and
// /dev/shm, and a /proc for its PID namespace, then runs the experiment. The outer
// process only forwards SIGINT/SIGTERM/SIGHUP to PID 1 and returns its exit code.
//
// Why nothing can outlive a run: PID 1 carries PDEATHSIG(SIGKILL) on the outer process; when
// PID 1 dies the kernel kills every process of its PID namespace (members, workers, orphans of
// wrappers); with no process left, the mount namespace and its /run (the named network
// namespaces' bind mounts) are freed, and with them every network namespace, veth and nft
// table. What lives outside (the member data directory under /tmp) is the janitor's
// (run/cleanup.h).
//
// Real root's user namespace maps every id to itself; the maps are written from outside the new
// namespace by a short-lived helper forked before the unshare (no exec: it only writes
// /proc/<outer>/uid_map and gid_map and exits).
//
// Root without user namespaces (user.max_user_namespaces=0 blocks root too) still gets the
// network, mount and PID namespaces: root needs no user namespace for them.
//
// Thread rules: unshare(CLONE_NEWUSER) refuses a multi-threaded caller, so run_sandboxed() and
// enter_private_namespaces() must be called while the process has a single thread.
#pragma once

#include <signal.h>

#include <functional>
#include <string>

namespace locklab {

// Why a netns-backend run cannot happen here ("" when it can): ip or nft missing, or the kernel
// refuses the namespaces (the message names the sysctl responsible). Probes in a short-lived
// child, so the calling process is unchanged.
std::string netns_backend_refusal();

// The message for a refused user namespace (`error` is the errno of the refusing call). Names
// the first of these settings found under `proc_sys` that forbids unprivileged user namespaces:
// kernel.unprivileged_userns_clone = 0, user.max_user_namespaces = 0,
// kernel.apparmor_restrict_unprivileged_userns = 1; otherwise says that none of them does.
std::string userns_refusal_message(int error, const std::string& proc_sys = "/proc/sys");

// SIGINT, SIGTERM and SIGHUP: the signals the outer process forwards to PID 1.
void stop_signal_set(sigset_t* set);

// Runs `body` as PID 1 of a fresh sandbox (see above) and returns its result, or 2 when the
// sandbox's PID 1 was killed by a signal. Throws std::runtime_error (naming the sysctl when one
// is the cause) when the sandbox cannot be built; the calling process is then unchanged unless
// the failure came after its user namespace was entered. `body` starts with the stop signals
// (stop_signal_set) blocked: it unblocks them once its handlers are installed, and receives then
// those sent since the sandbox started.
int run_sandboxed(const std::function<int()>& body);

// Moves the calling process into a new user (when not root), network and mount namespace with a
// private /run, without a PID namespace: for a test that builds networks directly. Throws
// std::runtime_error.
void enter_private_namespaces();

}  // namespace locklab
