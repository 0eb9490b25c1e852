// The record of the processes a run started (workers, members), kept in the run's temporary
// directory so that whoever removes that directory also ends what they left: the run's teardown,
// the janitor after a SIGKILLed harness, a later run's sweep (run/cleanup.h). A run's children
// die with it (PDEATHSIG), but not their own children: a worker's child, the member a faketime
// wrapper forked. And a process under libfaketime leaves its /dev/shm pair whenever it ends
// without returning from main (db/faketime_clock.h): the faketime program on SIGTERM as on
// SIGKILL (measured: faketime 0.9.10), a worker when the harness dies before reaping it.
//
// A start is "+ <pid> <start time> <0|1 under libfaketime> <PID namespace>"; the start time
// (/proc/<pid>/stat's starttime) tells a reused pid apart, and is 0 when /proc does not show the
// process as this process's child (a /proc the sandbox could not remount: never signalled); the
// PID namespace (the inode of /proc/self/ns/pid) is the noter's: a reader in another one (the
// janitor and the sweep outside a netns run's sandbox, whose pids mean nothing there) leaves the
// entry alone, and the sandbox's end kills what ran in it anyway. An end is
// "- <pid>": the harness saw the process and its whole group end (and removed its pair), so its
// pid, and a group of that number, may be anyone's from then on; the cleanup leaves it alone.
// What it ends is what the harness did not see end: processes alive at its death, and their
// groups, which kept the pid reserved since (a pid is not reused while a group of that number
// has members).
// Stateless; one writer per directory (the harness's main thread).
#pragma once

#include <sys/types.h>

#include <string>

namespace locklab {

// Appends the child `pid`, just spawned, to <dir>/processes. Throws std::runtime_error naming
// the file when it cannot be written.
void note_run_process(const std::string& dir, pid_t pid, bool under_faketime);
// Appends the end of the noted process `pid`: it was reaped, its group is empty or SIGKILLed,
// and its libfaketime pair (if any) removed. Throws like note_run_process.
void note_run_process_ended(const std::string& dir, pid_t pid);

// What to do with the group of a noted process that is gone: kEnd right after the run (its
// teardown; the janitor, woken by the harness's death), when that group has kept the pid
// reserved since; kLeave long after (a later run's sweep of a run whose janitor died too: the pid
// may have been free and reused since).
enum class GoneGroups { kEnd, kLeave };

// For each process noted in <dir> by this PID namespace and not noted ended, unless its pid now
// names another process or it was noted with start time 0: SIGKILLs it and its process group
// (the run is over; a process of ours may still be exiting after the harness's death, and its
// children outlive it otherwise); a gone one's group only with kEnd. Then removes the
// libfaketime pair of each such process noted under libfaketime whose pid names no other
// process. Nothing at all unless <dir> and its record belong to this process's effective user
// and are writable by nobody else (a directory another user made under /tmp, named like a dead
// run's, must not make this process signal anyone). Returns how many it ended or found gone.
// Never throws.
int end_noted_processes(const std::string& dir, GoneGroups gone);

}  // namespace locklab
