// The test's own process: its forked children and its threads; and /proc files read safely.
//
// A test that forks (to show what a child may or may not do with its parent's objects) waits
// for the child with a deadline, so a child that hangs fails the test instead of hanging the
// suite. A test that bounds the threads a library starts counts them (Linux: /proc/self/task).
//
//   const pid_t child = fork();
//   if (child == 0) _exit(run_in_child());
//   EXPECT_EQ(wait_child_exit(child, after(std::chrono::seconds(10))), 0);
//   EXPECT_LE(own_thread_count(), before + 33);
//
// Thread rules: none (no shared state).
#pragma once

#include <sys/types.h>

#include <string>

#include "poll_until.h"

namespace locklab::testkit {

// The child's exit status once it exits, or -1 when it died of a signal or had not exited by
// the deadline (then it is SIGKILLed and reaped: no child outlives the call).
int wait_child_exit(pid_t child, Deadline deadline);

// Threads of this process now (one entry of /proc/self/task per thread), a sanitizer's own
// background thread included from the first call on (it is started before the first count).
int own_thread_count();

// A /proc file's bytes (read(2) to the end), or "" when it cannot be opened or read: a process
// that exits while its file is read fails the read with ESRCH, which an ifstream read through
// istreambuf_iterator turns into an exception.
std::string read_proc_file(const std::string& path);

}  // namespace locklab::testkit
