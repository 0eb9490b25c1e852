// mongolock_contender: a separate process for the cross-process tests of mongolock.
//
//   mongolock_contender count URI DB LOCK ITERATIONS DIR
//     ITERATIONS times: acquire LOCK, create DIR/inside exclusively (fails if another process is
//     inside: exit 3), read-increment-write DIR/counter, remove DIR/inside, release.
//   mongolock_contender hold URI DB LOCK EXPIRY_MS
//     acquire LOCK with EXPIRY_MS, print "held TOKEN", then wait for SIGKILL (no release).
// Exit codes: 0 done, 2 usage or library error, 3 mutual exclusion violated.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "mongolock/mongolock.h"

namespace {

constexpr auto kAcquireTimeout = std::chrono::seconds(60);

bool enter(const std::string& dir) {
  const int fd = open((dir + "/inside").c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
  if (fd < 0) return false;
  close(fd);
  return true;
}

void increment(const std::string& path) {
  long value = 0;
  {
    std::ifstream in(path);
    in >> value;
  }
  std::ofstream out(path, std::ios::trunc);
  out << value + 1 << "\n";
}

int count(const std::string& uri, const std::string& db, const std::string& name, int iterations,
          const std::string& dir) {
  mongolock::Options options;
  options.expiry_ms = 30'000;
  options.busy_wait_min_ms = 1;
  options.busy_wait_max_ms = 20;
  mongolock::Provider provider(uri, db, options);
  mongolock::Lock lock = provider.create_lock(name);
  for (int i = 0; i < iterations; ++i) {
    mongolock::Handle held = lock.acquire(kAcquireTimeout);
    if (!enter(dir)) {
      std::fprintf(stderr, "contender %d: another process is inside\n", getpid());
      return 3;
    }
    increment(dir + "/counter");
    unlink((dir + "/inside").c_str());
    held.release();
  }
  return 0;
}

int hold(const std::string& uri, const std::string& db, const std::string& name,
         int64_t expiry_ms) {
  mongolock::Options options;
  options.expiry_ms = expiry_ms;
  mongolock::Provider provider(uri, db, options);
  mongolock::Handle held = provider.create_lock(name).acquire(kAcquireTimeout);
  std::printf("held %lld\n", static_cast<long long>(held.fencing_token()));
  std::fflush(stdout);
  while (true) pause();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s count|hold URI DB LOCK ...\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  try {
    if (mode == "count" && argc == 7)
      return count(argv[2], argv[3], argv[4], std::atoi(argv[5]), argv[6]);
    if (mode == "hold" && argc == 6) return hold(argv[2], argv[3], argv[4], std::atoll(argv[5]));
  } catch (const mongolock::Error& error) {
    std::fprintf(stderr, "contender: %s\n", error.what());
    return 2;
  }
  std::fprintf(stderr, "contender: bad arguments for mode '%s'\n", mode.c_str());
  return 2;
}
