// AddressSanitizer defaults compiled into every program of an ASan build (-DLOCKLAB_SANITIZE
// with "address"; CMakeLists.txt adds this file to each executable target, never to a library).
//
// The harness starts some of these programs under an LD_PRELOAD of libfaketime: members wrapped
// in the faketime program for clock faults on --mongod members, workers with libfaketimeMT for
// worker clock faults. GCC links the ASan runtime as a shared library, and by default the
// runtime refuses to start ("ASan runtime does not come first in initial library list") when a
// preloaded library precedes it, so such a member or worker exited before its first
// instruction. The preload only wraps time functions; ASan's interceptors still run, so the
// order check is switched off rather than the runtime linked statically (a static runtime with
// libfaketime preloaded recurses in clock_gettime during start-up and hangs).
//
// ASAN_OPTIONS from the environment are parsed after these defaults and override them.

extern "C" const char* __asan_default_options();

extern "C" const char* __asan_default_options() {
  return "verify_asan_link_order=0";
}
