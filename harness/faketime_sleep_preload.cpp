// liblocklab-faketime-sleep.so: preloaded ahead of libfaketime into a worker whose wall clock
// the harness moves (db/faketime_clock.h), so that a worker's sleeps on the monotonic clock work.
//
// Why: libfaketime 0.9.10 with FAKETIME_DONT_FAKE_MONOTONIC=1 answers an absolute
// clock_nanosleep on CLOCK_MONOTONIC with EINVAL (it shifts the deadline as though that clock
// were faked too), and Python's time.sleep sleeps exactly that way: a Python lock client that
// sleeps would die under clock-skew-worker, and the crash would be blamed on the lock. Relative
// sleeps and the other waits (condition variables, select, semaphores) are not affected.
//
// What it does: its clock_nanosleep takes the clocks libfaketime leaves alone (monotonic,
// boottime, the process CPU clock) straight to the kernel, answers the calling thread's CPU
// clock with EINVAL as glibc does (the kernel says EOPNOTSUPP), and hands the clocks libfaketime
// moves (CLOCK_REALTIME, CLOCK_REALTIME_ALARM, CLOCK_TAI) to the next definition in the preload
// order, libfaketime's, exactly as without this library: it sleeps to the moved wall clock
// (CLOCK_TAI: libfaketime moves its reading but not its deadlines). Nothing else is interposed.
//
// Thread rules: stateless after load (the next definition is looked up once, in the library's
// constructor); any thread. The kernel call is not a pthread cancellation point, as glibc's is:
// nothing the harness runs cancels a sleeping thread.
#include <dlfcn.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace {

using ClockNanosleep = int (*)(clockid_t, int, const timespec*, timespec*);

ClockNanosleep next_clock_nanosleep = nullptr;

__attribute__((constructor)) void find_next_clock_nanosleep() {
  next_clock_nanosleep = reinterpret_cast<ClockNanosleep>(dlsym(RTLD_NEXT, "clock_nanosleep"));
}

// The clocks libfaketime moves when the monotonic clock is left alone.
bool moved_by_faketime(clockid_t clock) {
  return clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_ALARM || clock == CLOCK_TAI;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int clock_nanosleep(clockid_t clock, int flags,
                                                                      const timespec* request,
                                                                      timespec* remain) {
  if (moved_by_faketime(clock) && next_clock_nanosleep != nullptr) {
    return next_clock_nanosleep(clock, flags, request, remain);
  }
  if (clock == CLOCK_THREAD_CPUTIME_ID) return EINVAL;  // glibc's answer (POSIX leaves it open)
  // clock_nanosleep returns the error number and leaves errno as it was.
  const int saved_errno = errno;
  const long result = syscall(SYS_clock_nanosleep, clock, flags, request, remain);
  const int error = result == 0 ? 0 : errno;
  errno = saved_errno;
  return error;
}
