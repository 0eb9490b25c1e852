// Whether a worker clock fault (clock-skew-worker, clock-jump-worker) can reach a worker's
// processes. The harness moves a worker's wall clock through libfaketime, preloaded by the
// dynamic loader into every process the worker runs (run/workers.h); libfaketime moves only
// the time a process asks libc for. Two kinds of process escape it, and a run under such a
// fault would then pass as if the clock had moved:
//   - one that does not load it: a static binary (the loader never runs), or a process whose
//     LD_PRELOAD was cleared;
//   - a Go program, static or not: Go's runtime reads the time from the vDSO itself, never
//     through libc (measured with go1.19: time.Now() unmoved under libfaketime, with cgo too).
// A Go program is told by the sections its linker writes into every ELF binary: .go.buildinfo
// and .note.go.buildid.
//
// The check reads /proc: every process of the worker's process group (run/process.h gives each
// worker its own), its executable and its memory map. It is made once the worker has written a
// line (so the worker's own program has been exec'd), per incarnation; what it misses: a process
// the worker starts later, or one that leaves the worker's process group.
//
// Thread rules: none (reads /proc and files only).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace locklab {

// The processes whose process group is `pgid`, zombies left out (they have no memory map);
// from `proc` ("/proc"). Empty when none.
std::vector<pid_t> process_group(pid_t pgid, const std::string& proc = "/proc");

// Whether the ELF file at `path` is a Go program (carries a .go.buildinfo or .note.go.buildid
// section). False for anything that is not a readable, well-formed ELF file.
bool is_go_program(const std::string& path);

// Why libfaketime at `library` cannot move the wall clock of some process of process group
// `pgid`, naming the process and its executable; "" when every process there loads it and none
// is a Go program. A process that ends while it is read, or whose memory map this process may
// not read, is skipped.
std::string clock_fault_unreachable(pid_t pgid, const std::string& library,
                                    const std::string& proc = "/proc");

}  // namespace locklab
