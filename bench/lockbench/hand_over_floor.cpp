#include "hand_over_floor.h"

#include <mongoc/mongoc.h>
#include <sys/prctl.h>

#include <algorithm>
#include <barrier>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "bson_owner.h"
#include "clock.h"

namespace lockbench {
namespace {

using mongolock::bson::Bson;

struct PoolDeleter {
  void operator()(mongoc_client_pool_t* p) const { mongoc_client_pool_destroy(p); }
};

// The baton and everything recorded under its mutex. Each thread waits on its own condition
// variable, so a hand-over wakes the grantee alone (one shared variable woke all N - 1 waiters
// on every hand-over: at hold 0 that herd, not the server, made the turn).
struct Baton {
  std::mutex mutex;
  std::vector<std::unique_ptr<std::condition_variable>> handed;  // per thread
  std::deque<int> waiting;  // thread indexes, earliest ask first
  bool held = false;
  std::string error;                // the first failure; non-empty stops every thread
  std::vector<int64_t> granted_ns;  // per thread: when the baton was handed to it, or -1
  int64_t asks = 0;
  std::vector<int64_t> grant_order;  // the ask sequence numbers, in the order of grants
  std::vector<int64_t> grants_ns;    // every grant time, in order
  std::vector<double> waits_ms;
  int64_t writes = 0;
  int64_t asks_written = 0;
  int last_writer = -1;  // the thread of the last hand-over write
};

// One majority findAndModify of the floor's document (upserted): `update` names the change.
void write_floor(mongoc_client_t* client, const std::string& database, const std::string& lock_name,
                 const bson_t* update, const char* what) {
  Bson cmd(BCON_NEW("findAndModify", "lockbench_hand_over", "query", "{", "_id",
                    BCON_UTF8(lock_name.c_str()), "}", "update", BCON_DOCUMENT(update), "upsert",
                    BCON_BOOL(true), "new", BCON_BOOL(true), "writeConcern", "{", "w",
                    BCON_UTF8("majority"), "}"));
  bson_t reply;
  bson_error_t error;
  const bool ok = mongoc_client_write_command_with_opts(client, database.c_str(), cmd.get(),
                                                        nullptr, &reply, &error);
  bson_destroy(&reply);
  if (!ok)
    throw std::runtime_error(std::string("hand-over floor: findAndModify (") + what +
                             ") failed: " + error.message);
}

// One hand-over write: the token goes up by one and names the writer.
void write_hand_over(mongoc_client_t* client, const std::string& database,
                     const std::string& lock_name, int writer) {
  Bson update(BCON_NEW("$inc", "{", "token", BCON_INT64(1), "}", "$set", "{", "holder",
                       BCON_INT32(writer), "}"));
  write_floor(client, database, lock_name, update.get(), "hand-over");
}

// One ask (asks_written): the document counts it, as a queued lock's document records a waiter.
void write_ask(mongoc_client_t* client, const std::string& database, const std::string& lock_name) {
  Bson update(BCON_NEW("$inc", "{", "asks", BCON_INT64(1), "}"));
  write_floor(client, database, lock_name, update.get(), "ask");
}

// Waits for the baton (taking it at once when nobody holds or waits for it); returns when it
// was granted, or -1 when the run failed.
int64_t take(Baton& b, int self, int64_t asked_ns) {
  std::unique_lock lock(b.mutex);
  const int64_t seq = b.asks++;
  int64_t got_ns = 0;
  if (!b.held && b.waiting.empty()) {
    b.held = true;
    got_ns = monotonic_now_ns();
  } else {
    b.waiting.push_back(self);
    b.handed[static_cast<size_t>(self)]->wait(
        lock, [&] { return b.granted_ns[self] >= 0 || !b.error.empty(); });
    if (b.granted_ns[self] < 0) return -1;
    got_ns = b.granted_ns[self];
    b.granted_ns[self] = -1;
  }
  b.grant_order.push_back(seq);
  b.grants_ns.push_back(got_ns);
  b.waits_ms.push_back(static_cast<double>(got_ns - asked_ns) / kNsPerMs);
  return got_ns;
}

// Hands the baton of `self`, who just wrote, to the earliest waiter, or frees it.
void give(Baton& b, int self) {
  int next = -1;
  {
    std::lock_guard lock(b.mutex);
    ++b.writes;
    b.last_writer = self;
    if (b.waiting.empty()) {
      b.held = false;
      return;
    }
    next = b.waiting.front();
    b.waiting.pop_front();
    b.granted_ns[next] = monotonic_now_ns();
  }
  b.handed[static_cast<size_t>(next)]->notify_one();
}

// Records the first failure and wakes every waiter: each sees it and leaves.
void fail(Baton& b, const std::string& why) {
  {
    std::lock_guard lock(b.mutex);
    if (b.error.empty()) b.error = why;
  }
  for (const auto& handed : b.handed) handed->notify_one();
}

bool failed(Baton& b) {
  std::lock_guard lock(b.mutex);
  return !b.error.empty();
}

struct Shared {
  const std::string& database;
  const std::string& lock_name;
  const HandOverFloorSpec& spec;
  mongoc_client_pool_t* pool;
  Baton baton;
  int64_t stop_ns = 0;  // set once, by the barrier's completion, before any thread reads it
};

void contend(Shared& s, mongoc_client_t* client, int self) {
  while (monotonic_now_ns() < s.stop_ns && !failed(s.baton)) {
    const int64_t asked_ns = monotonic_now_ns();
    if (s.spec.asks_written) {
      write_ask(client, s.database, s.lock_name);
      std::lock_guard lock(s.baton.mutex);
      ++s.baton.asks_written;
    }
    const int64_t got_ns = take(s.baton, self, asked_ns);
    if (got_ns < 0) return;
    if (s.spec.hold_ms > 0) sleep_until_ns(got_ns + s.spec.hold_ms * kNsPerMs);
    write_hand_over(client, s.database, s.lock_name, self);
    give(s.baton, self);
    if (s.spec.gap_ms > 0) sleep_until_ns(monotonic_now_ns() + s.spec.gap_ms * kNsPerMs);
  }
}

template <typename Barrier>
void run_thread(Shared& s, Barrier& start, int self) {
  (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);  // as a cell's contender
  mongoc_client_t* client = mongoc_client_pool_pop(s.pool);
  try {
    write_hand_over(client, s.database, s.lock_name, self);  // the connection, warmed
    {
      std::lock_guard lock(s.baton.mutex);
      ++s.baton.writes;
    }
  } catch (const std::exception& e) {
    fail(s.baton, e.what());
    start.arrive_and_drop();
    mongoc_client_pool_push(s.pool, client);
    return;
  }
  start.arrive_and_wait();
  try {
    contend(s, client, self);
  } catch (const std::exception& e) {
    fail(s.baton, e.what());
  }
  mongoc_client_pool_push(s.pool, client);
}

struct Counted {
  int64_t token = 0;
  int64_t asks = 0;
};

// The document's token and asks as the server has them (0 when there are none).
Counted read_counted(mongoc_client_pool_t* pool, const std::string& database,
                     const std::string& lock_name) {
  mongoc_client_t* client = mongoc_client_pool_pop(pool);
  std::unique_ptr<mongoc_collection_t, decltype(&mongoc_collection_destroy)> collection(
      mongoc_client_get_collection(client, database.c_str(), "lockbench_hand_over"),
      &mongoc_collection_destroy);
  Bson filter(BCON_NEW("_id", BCON_UTF8(lock_name.c_str())));
  std::unique_ptr<mongoc_cursor_t, decltype(&mongoc_cursor_destroy)> cursor(
      mongoc_collection_find_with_opts(collection.get(), filter.get(), nullptr, nullptr),
      &mongoc_cursor_destroy);
  const bson_t* doc = nullptr;
  Counted counted;
  bson_iter_t it;
  if (mongoc_cursor_next(cursor.get(), &doc)) {
    if (bson_iter_init_find(&it, doc, "token")) counted.token = bson_iter_as_int64(&it);
    if (bson_iter_init_find(&it, doc, "asks")) counted.asks = bson_iter_as_int64(&it);
  }
  bson_error_t error;
  const bool failed_read = mongoc_cursor_error(cursor.get(), &error);
  cursor.reset();
  collection.reset();
  mongoc_client_pool_push(pool, client);
  if (failed_read) {
    throw std::runtime_error(std::string("hand-over floor: reading the token failed: ") +
                             error.message);
  }
  return counted;
}

void check_spec(const HandOverFloorSpec& spec) {
  if (spec.contenders < 1 || spec.contenders > kHandOverFloorContendersMax || spec.hold_ms < 0 ||
      spec.gap_ms < 0 || !(spec.seconds > 0)) {
    throw std::invalid_argument("hand-over floor: contenders " + std::to_string(spec.contenders) +
                                " (1.." + std::to_string(kHandOverFloorContendersMax) + "), hold " +
                                std::to_string(spec.hold_ms) + " ms, gap " +
                                std::to_string(spec.gap_ms) + " ms, seconds " +
                                std::to_string(spec.seconds) + ": out of range");
  }
}

// Starts the threads; one that cannot start stops the run, and the barrier is told it will not
// come (nor will those after it), so that no started thread waits for it.
template <typename Barrier>
void start_threads(Shared& s, Barrier& start, std::vector<std::thread>& threads) {
  for (int i = 0; i < s.spec.contenders; ++i) {
    try {
      threads.emplace_back([&s, &start, i] { run_thread(s, start, i); });
    } catch (const std::system_error& e) {
      fail(s.baton,
           "hand-over floor: thread " + std::to_string(i) + " could not start: " + e.what());
      for (int k = i; k < s.spec.contenders; ++k) start.arrive_and_drop();
      return;
    }
  }
}

}  // namespace

HandOverFloor measure_hand_over_floor(const std::string& uri, const std::string& database,
                                      const std::string& lock_name, const HandOverFloorSpec& spec) {
  check_spec(spec);
  mongoc_init();
  bson_error_t error;
  std::unique_ptr<mongoc_uri_t, decltype(&mongoc_uri_destroy)> parsed(
      mongoc_uri_new_with_error(uri.c_str(), &error), &mongoc_uri_destroy);
  if (!parsed)
    throw std::invalid_argument("hand-over floor: bad URI '" + uri + "': " + error.message);
  std::unique_ptr<mongoc_client_pool_t, PoolDeleter> pool(mongoc_client_pool_new(parsed.get()));
  if (!pool) throw std::invalid_argument("hand-over floor: libmongoc refused a pool for " + uri);
  mongoc_client_pool_set_error_api(pool.get(), MONGOC_ERROR_API_VERSION_2);
  mongoc_client_pool_max_size(pool.get(), static_cast<uint32_t>(spec.contenders + 1));
  Shared s{database, lock_name, spec, pool.get(), {}, 0};
  s.baton.granted_ns.assign(static_cast<size_t>(spec.contenders), -1);
  for (int i = 0; i < spec.contenders; ++i) {
    s.baton.handed.push_back(std::make_unique<std::condition_variable>());
  }
  const auto open_window = [&s]() noexcept {
    s.stop_ns = monotonic_now_ns() + static_cast<int64_t>(s.spec.seconds * kNsPerS);
  };
  std::barrier start(spec.contenders, open_window);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(spec.contenders));
  start_threads(s, start, threads);
  for (std::thread& t : threads) t.join();
  if (!s.baton.error.empty()) throw std::runtime_error(s.baton.error);
  HandOverFloor r;
  r.spec = spec;
  r.acquisitions = static_cast<int64_t>(s.baton.grants_ns.size());
  r.writes_sent = s.baton.writes;
  r.last_writer = s.baton.last_writer;
  r.asks_sent = s.baton.asks_written;
  const Counted counted = read_counted(pool.get(), database, lock_name);
  r.token_counted = counted.token;
  r.asks_counted = counted.asks;
  r.add_up = r.token_counted == r.writes_sent && r.asks_counted == r.asks_sent;
  r.fifo = std::is_sorted(s.baton.grant_order.begin(), s.baton.grant_order.end());
  for (size_t i = 1; i < s.baton.grants_ns.size(); ++i) {
    r.turns_ms.push_back(static_cast<double>(s.baton.grants_ns[i] - s.baton.grants_ns[i - 1]) /
                         kNsPerMs);
  }
  r.waits_ms = std::move(s.baton.waits_ms);
  return r;
}

}  // namespace lockbench
