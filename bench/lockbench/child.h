// Processes mode: lockbench runs each contender of a cell as a child process, itself re-executed
// (/proc/self/exe) with --child and the cell's settings.
//
// Protocol, per child: it builds its own APM-counted pool and Provider, warms up (one acquire
// and release of a lock of its own), waits until none of its commands is in flight, writes
// "ready\n" on stdout, and reads "go <start_ns> <stop_ns>\n" on stdin (CLOCK_MONOTONIC, shared by
// every process of the machine, so all children start and stop together). It then runs the
// contender loop, closes its pool, and writes its report (records.h text, with the commands its
// pool sent after "ready") to the file named by --report (written to a temporary name and
// renamed, so a partial report is never read). Exit 0 when the report has no error.
// The child dies with lockbench (PR_SET_PDEATHSIG) and refuses to start when its parent is not
// the pid it was given. The children are the harness Supervisor's (run/process.h): in their own
// process groups, killed and reaped when a cell throws. A child's stderr goes to
// <work_dir>/cell-<i>-contender-<j>.stderr; when the child fails, its last 2000 bytes are quoted
// in the cell's errors (the work dir is removed when the run ends).
// Thread rules: run_processes on the main thread (the children's PDEATHSIG follows it).
#pragma once

#include <string>
#include <vector>

#include "cell.h"

namespace lockbench {

CellRaw run_processes(Target& target, const RunSettings& settings, const CellSpec& spec);

// The child's main; argv as given to lockbench (argv[1] == "--child"). Returns the exit code.
int child_main(int argc, char** argv);

}  // namespace lockbench
