// Whether a worker clock fault (clock-skew-worker, clock-jump-worker) can reach a worker's
// processes. The harness moves a worker's wall clock through libfaketime, preloaded by the
// dynamic loader into every process the worker runs (run/workers.h); libfaketime moves only
// the time a process asks libc for. Two kinds of process escape it, and a run under such a
// fault would then pass as if the clock had moved:
//   - a Go program, static or not: Go's runtime reads the time from the vDSO itself, never
//     through libc (measured with go1.19: time.Now() unmoved under libfaketime, with cgo too).
//     Told by what its linker writes into every ELF binary: the .go.buildinfo and
//     .note.go.buildid sections, and the "Go" build-id note in a PT_NOTE segment (which stays
//     when the section headers are stripped);
//   - a program that does not load libfaketime: a static ELF (no PT_INTERP: no loader runs), or
//     a dynamic one whose LD_PRELOAD was cleared.
//
// Two checks. Before the workers start, the client's program itself (check_worker_program).
// While they run, once an incarnation has written a line (its own program has been exec'd),
// every process of its process group (run/process.h gives each worker its own), through /proc:
// its executable and its memory map. In that order: Go code (the executable, or a mapped
// shared object: a c-shared Go library) escapes; libfaketime mapped reaches (a program run
// through ld.so itself too); a static executable escapes; a dynamic one whose map holds a
// shared object other than the loader and the preloads has loaded without libfaketime; one
// whose map holds nothing else yet is still being loaded (exec'd a moment ago) and is skipped.
// A live process whose executable or map cannot be read (an execute-only binary, another
// user's) cannot be checked, and says so. What the checks miss: a process the worker starts
// later or that leaves its process group, and a Go program with neither its sections, its
// build-id note, nor a mapped Go library (built with -buildid= and its section headers cut).
//
// Thread rules: none (reads /proc and files only).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace locklab {

struct ElfFacts {
  bool elf = false;              // a readable, well-formed ELF file
  bool go = false;               // a Go program (see above)
  bool dynamic = false;          // has a PT_INTERP: the dynamic loader runs it
  std::string interpreter = {};  // that loader's path, as the file names it
};

// What the file at `path` is (all false for anything that is not a readable, well-formed ELF).
ElfFacts elf_facts(const std::string& path);

// The processes whose process group is `pgid`, zombies left out (they have no memory map);
// from `proc` ("/proc"). Empty when none.
std::vector<pid_t> process_group(pid_t pgid, const std::string& proc = "/proc");

// Whether /proc/self is this process: false when /proc belongs to another PID namespace (a
// sandbox that could not mount its own), whose pids mean other processes.
bool proc_is_ours(const std::string& proc = "/proc");

// Why worker clock faults cannot reach a worker whose program is `program` (a Go program or a
// static ELF), or "" (a script, a dynamic ELF: the run-time check decides).
std::string check_worker_program(const std::string& program);

// Why libfaketime at `library` cannot move the wall clock of some process of process group
// `pgid`, naming the process and its executable; "" when every process there loads it and none
// is a Go program. `preloads`: every library the worker preloads (libfaketime among them).
// Skipped: a process that ends while it is read, one whose memory map this process may not
// read, one still being loaded (above). When `proc` belongs to another PID namespace than this
// process (a sandbox without a /proc of its own), says that the check cannot be made.
std::string clock_fault_unreachable(pid_t pgid, const std::string& library,
                                    const std::vector<std::string>& preloads,
                                    const std::string& proc = "/proc");

}  // namespace locklab
