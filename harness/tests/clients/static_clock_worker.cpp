// A statically linked worker, for the harness's worker clock tests (worker_clock_test.cpp): no
// dynamic loader runs for it, so nothing is preloaded and libfaketime cannot move its clock; a
// run that moves it must say so. It writes one good hold of L1 to --history, then waits for
// SIGTERM (sigwait) and exits 0. Of the protocol's flags it reads only --id and --history.
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>

namespace {

long long monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1'000'000'000LL + now.tv_nsec;
}

}  // namespace

int main(int argc, char** argv) {
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_BLOCK, &term, nullptr);
  std::map<std::string, std::string> args;
  for (int i = 1; i + 1 < argc; i += 2) args[argv[i]] = argv[i + 1];
  const int fd = open(args["--history"].c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror("--history");
    return 3;
  }
  const std::string id = args["--id"];
  const auto event = [&](const char* kind, const char* f, const char* value) {
    const std::string line = "{\"t\":" + std::to_string(monotonic_ns()) + ",\"process\":\"" + id +
                             "\",\"type\":\"" + kind + "\",\"f\":\"" + f + "\",\"lock\":\"L1\"" +
                             value + "}\n";
    return write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  };
  const bool written = event("invoke", "acquire", "") &&
                       event("ok", "acquire", ",\"value\":{\"lease_ms\":1000,\"no_token\":true}") &&
                       event("invoke", "release", "") && event("ok", "release", "");
  if (!written) return 3;
  int signal_number = 0;
  sigwait(&term, &signal_number);
  return 0;
}
