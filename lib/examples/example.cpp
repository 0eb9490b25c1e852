// mongolock example: acquire a lock, work under its fencing token, release it.
//
//   mongolock_example "mongodb://127.0.0.1:27017/?replicaSet=rs0" [lock-name]
//
// The "resource" here is a document that refuses writes carrying a token lower than the highest
// it has accepted: that check, done by the resource itself, is what makes a lease lock safe
// against a holder that was paused or partitioned past its lease.
#include <mongolock/mongolock.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace {

// Stand-in for a real fenced store (a database row with a "last token" column, for example).
struct FencedResource {
  int64_t highest_token = 0;
  bool write(int64_t token, const std::string& value) {
    if (token < highest_token) return false;  // a stale holder: refuse
    highest_token = token;
    std::printf("wrote '%s' under token %lld\n", value.c_str(), static_cast<long long>(token));
    return true;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MONGODB_URI [LOCK_NAME]\n", argv[0]);
    return 2;
  }
  try {
    mongolock::Options options;
    options.expiry_ms = 10'000;  // extended in the background every expiry/3 while held
    mongolock::Provider provider(argv[1], "example", options);
    mongolock::Lock lock = provider.create_lock(argc > 2 ? argv[2] : "example-lock");

    mongolock::Handle held = lock.acquire(std::chrono::seconds(30));
    FencedResource resource;
    for (int step = 0; step < 3 && !held.lost(); ++step) {
      resource.write(held.fencing_token(), "step " + std::to_string(step));
    }
    if (held.lost()) std::fprintf(stderr, "lock lost; stopped working\n");
    held.release();
    return 0;
  } catch (const mongolock::Timeout& timeout) {
    std::fprintf(stderr, "%s\n", timeout.what());
    return 1;
  } catch (const mongolock::Error& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 2;
  }
}
