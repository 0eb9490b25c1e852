// ApmPool: a libmongoc client pool that counts, through the driver's APM command-started,
// -succeeded and -failed callbacks, every command its clients send (per command name) and how
// many are in flight. Handshakes and server monitoring are not APM events, so what it counts is
// what the application (mongolock) sent.
//
// Invariants: in_flight() = started - (succeeded + failed) >= 0; callbacks are installed before
// the first client is popped (libmongoc's rule).
// Thread rules: the callbacks run on whichever thread sends; counters are behind a mutex, read
// them from any thread. Not copyable; destroy it after every user of pool() is gone.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

typedef struct _mongoc_client_pool_t mongoc_client_pool_t;

namespace lockbench {

inline constexpr int kPoolClientsMax = 100;  // libmongoc's default maxPoolSize

class ApmPool {
 public:
  // Throws std::invalid_argument naming the URI when libmongoc refuses it.
  explicit ApmPool(const std::string& uri);
  ~ApmPool();
  ApmPool(const ApmPool&) = delete;
  ApmPool& operator=(const ApmPool&) = delete;

  mongoc_client_pool_t* pool() const { return pool_; }
  // Destroys the pool now (what it sends while closing, endSessions, is still counted); the
  // counters stay readable. pool() is nullptr afterwards. Idempotent.
  void close();
  std::map<std::string, int64_t> started() const;
  int64_t in_flight() const;
  // Pops n clients (at most kPoolClientsMax) and has each send {ping: 1} to the primary, so
  // that n connections are open before a measured window. Throws std::runtime_error on failure.
  void open_connections(int n);
  // Polls until no command is in flight; false when `timeout` passed first.
  bool wait_quiet(std::chrono::milliseconds timeout) const;

  // APM entry points (called by libmongoc through C callbacks).
  void on_started(const char* name);
  void on_finished();

 private:
  mongoc_client_pool_t* pool_ = nullptr;
  mutable std::mutex mutex_;
  std::map<std::string, int64_t> started_;
  int64_t finished_ = 0;
  int64_t started_total_ = 0;
};

int64_t total(const std::map<std::string, int64_t>& counts);
// after - before, per name (names only in `after` count from 0).
std::map<std::string, int64_t> difference(const std::map<std::string, int64_t>& after,
                                          const std::map<std::string, int64_t>& before);

}  // namespace lockbench
