// A process's wall clock moved through libfaketime, read from a timestamp file: the one way the
// harness moves a clock it cannot command (workers, --mongod members, mongod images).
//
// The process runs with the environment below (libfaketime preloaded, reading `timestamp_file`
// on every call, monotonic clock untouched: timers run on it, as mongod's and the workers' do),
// and the harness moves its clock by rewriting the file with write_clock_file. Stateless; any
// thread (one writer per file).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace locklab {

// libfaketime's "+N.NNNs" / "-N.NNNs" offset spec, written whole (truncating); throws
// std::runtime_error naming the file when it cannot be written.
void write_clock_file(const std::string& path, int64_t offset_ms);

// An LD_PRELOAD value naming `libraries` in order. ld.so splits it at spaces and colons and
// expands $ORIGIN, $LIB, $PLATFORM in it, with no escape: a path holding any of those would be
// dropped with a warning only the process's own output shows, so such a path throws
// std::runtime_error naming it.
std::string ld_preload_list(const std::vector<std::string>& libraries);

// "NAME=value" entries for a process under libfaketime: `preload` its LD_PRELOAD (libfaketime, or
// a colon-separated list ending with it; paths the process sees), its clock read from
// `timestamp_file` (a path the process sees).
std::vector<std::string> faketime_environment(const std::string& preload,
                                              const std::string& timestamp_file);

// Removes the semaphore and shared memory libfaketime made in the process `creator`
// (/dev/shm/sem.faketime_sem_<pid>, faketime_shm_<pid>), once that process has ended and been
// reaped. libfaketime makes the pair in the first process it is loaded into, hands it on to the
// process's children and exec'd images (FAKETIME_SHARED), and removes it only when the process
// that made it returns from main: a worker's `env` makes it and execs the worker, and a process
// killed by a signal never returns, so without this every worker left its pair behind.
// Call it only for a process whose pid is not yet reused (just reaped, or checked by its start
// time: run/noted_processes.h, which also covers processes the harness never reaped). Errors are
// ignored (the pair may not exist: a process that never loaded libfaketime).
void remove_faketime_files(pid_t creator);

}  // namespace locklab
