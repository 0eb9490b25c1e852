#include "floor.h"

#include <mongoc/mongoc.h>
#include <mongolock/mongolock.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "bson_owner.h"
#include "clock.h"
#include "stats.h"

namespace lockbench {
namespace {

using mongolock::bson::Bson;
using mongolock::bson::BsonReply;

struct ClientDeleter {
  void operator()(mongoc_client_t* c) const { mongoc_client_destroy(c); }
};
struct PoolDeleter {
  void operator()(mongoc_client_pool_t* p) const { mongoc_client_pool_destroy(p); }
};

// Fields the driver adds to every command it sends; the replay's own client adds its own.
bool added_by_driver(const char* key) {
  for (const char* k : {"$db", "lsid", "txnNumber", "$clusterTime", "$readPreference"}) {
    if (std::strcmp(key, k) == 0) return true;
  }
  return false;
}

// The first findAndModify the library sent during its acquire and the first update during its
// release, without the driver's fields, and the holder the findAndModify's reply granted. Only
// commands sent by the thread that called want() count: APM callbacks run on the sending thread,
// and the Provider's own threads (an extension is an update too) send from others.
struct Capture {
  std::mutex mutex;
  const char* wanted = nullptr;  // the command name being recorded now; nullptr: none
  std::thread::id caller;
  Bson find_and_modify;
  Bson update;
  std::string holder;

  void want(const char* name) {
    std::lock_guard guard(mutex);
    wanted = name;
    caller = std::this_thread::get_id();
  }
  void started(const char* name, const bson_t* command) {
    std::lock_guard guard(mutex);
    if (wanted == nullptr || std::strcmp(name, wanted) != 0) return;
    if (std::this_thread::get_id() != caller) return;
    Bson& slot = std::strcmp(name, "findAndModify") == 0 ? find_and_modify : update;
    bson_iter_t it;
    if (slot || !bson_iter_init(&it, command)) return;
    slot = Bson(bson_new());
    while (bson_iter_next(&it)) {
      if (!added_by_driver(bson_iter_key(&it))) {
        bson_append_iter(slot.get(), bson_iter_key(&it), -1, &it);
      }
    }
  }
  void succeeded(const char* name, const bson_t* reply) {
    std::lock_guard guard(mutex);
    if (std::this_thread::get_id() != caller) return;
    if (std::strcmp(name, "findAndModify") != 0 || !holder.empty()) return;
    bson_iter_t it;
    if (bson_iter_init(&it, reply) && bson_iter_find_descendant(&it, "value.holder", &it) &&
        BSON_ITER_HOLDS_UTF8(&it)) {
      holder = bson_iter_utf8(&it, nullptr);
    }
  }
};

void on_started(const mongoc_apm_command_started_t* event) {
  static_cast<Capture*>(mongoc_apm_command_started_get_context(event))
      ->started(mongoc_apm_command_started_get_command_name(event),
                mongoc_apm_command_started_get_command(event));
}

void on_succeeded(const mongoc_apm_command_succeeded_t* event) {
  static_cast<Capture*>(mongoc_apm_command_succeeded_get_context(event))
      ->succeeded(mongoc_apm_command_succeeded_get_command_name(event),
                  mongoc_apm_command_succeeded_get_reply(event));
}

// One acquire and release of `lock_name` by the library, recorded. Throws std::runtime_error
// when the lock is not granted or a command was not seen.
void capture_library_commands(const std::string& uri, const std::string& database,
                              const std::string& lock_name, Capture& capture) {
  bson_error_t error;
  std::unique_ptr<mongoc_uri_t, decltype(&mongoc_uri_destroy)> parsed(
      mongoc_uri_new_with_error(uri.c_str(), &error), &mongoc_uri_destroy);
  if (!parsed) throw std::invalid_argument("floor: bad URI '" + uri + "': " + error.message);
  std::unique_ptr<mongoc_client_pool_t, PoolDeleter> pool(mongoc_client_pool_new(parsed.get()));
  if (!pool) throw std::invalid_argument("floor: libmongoc refused a pool for '" + uri + "'");
  std::unique_ptr<mongoc_apm_callbacks_t, decltype(&mongoc_apm_callbacks_destroy)> callbacks(
      mongoc_apm_callbacks_new(), &mongoc_apm_callbacks_destroy);
  mongoc_apm_set_command_started_cb(callbacks.get(), on_started);
  mongoc_apm_set_command_succeeded_cb(callbacks.get(), on_succeeded);
  if (!mongoc_client_pool_set_apm_callbacks(pool.get(), callbacks.get(), &capture)) {
    throw std::runtime_error("floor: libmongoc refused the pool's APM callbacks");
  }
  {
    mongolock::Provider provider(pool.get(), database, mongolock::Options{});
    mongolock::Lock lock = provider.create_lock(lock_name);
    capture.want("findAndModify");
    std::optional<mongolock::Handle> handle = lock.try_acquire(std::chrono::milliseconds(0));
    if (!handle) {
      throw std::runtime_error("floor: the library's uncontended acquire of '" + lock_name +
                               "' was not granted (is another client holding it?)");
    }
    capture.want("update");
    handle->release();
    capture.want(nullptr);
  }
  std::lock_guard guard(capture.mutex);
  if (!capture.find_and_modify || !capture.update || capture.holder.empty()) {
    throw std::runtime_error("floor: the library's acquire and release of '" + lock_name +
                             "' were not both seen on the wire");
  }
}

void run(mongoc_client_t* client, const std::string& database, const bson_t& command,
         BsonReply& reply) {
  bson_error_t error;
  if (!mongoc_client_command_with_opts(client, database.c_str(), &command, nullptr, nullptr,
                                       reply.out(), &error)) {
    throw std::runtime_error(std::string("floor: round trip failed: ") + error.message);
  }
}

bool holder_is(const bson_t& reply, const std::string& holder) {
  bson_iter_t it;
  return bson_iter_init(&it, &reply) && bson_iter_find_descendant(&it, "value.holder", &it) &&
         BSON_ITER_HOLDS_UTF8(&it) && holder == bson_iter_utf8(&it, nullptr);
}

}  // namespace

FloorResult measure_floor(const std::string& uri, const std::string& database,
                          const std::string& lock_name, const std::string& target_name,
                          int64_t samples_max, double seconds_max) {
  mongoc_init();
  Capture capture;
  capture_library_commands(uri, database, lock_name, capture);
  std::unique_ptr<mongoc_client_t, ClientDeleter> client(mongoc_client_new(uri.c_str()));
  if (!client) throw std::invalid_argument("floor: bad URI '" + uri + "'");
  mongoc_client_set_error_api(client.get(), MONGOC_ERROR_API_VERSION_2);
  FloorResult r;
  r.target = target_name;
  const int64_t stop_ns = monotonic_now_ns() + static_cast<int64_t>(seconds_max * kNsPerS);
  while (r.samples < samples_max && monotonic_now_ns() < stop_ns) {
    BsonReply granted;
    const int64_t sent_ns = monotonic_now_ns();
    run(client.get(), database, *capture.find_and_modify, granted);
    r.rtt_ms.push_back(static_cast<double>(monotonic_now_ns() - sent_ns) / kNsPerMs);
    ++r.samples;
    if (!holder_is(*granted.get(), capture.holder)) {
      throw std::runtime_error("floor: an uncontended acquire of '" + lock_name +
                               "' was not granted (is another client holding it?)");
    }
    BsonReply released;
    run(client.get(), database, *capture.update, released);
  }
  std::vector<double> sorted = r.rtt_ms;
  std::sort(sorted.begin(), sorted.end());
  r.p50_ms = quantile(sorted, 0.50);
  r.p90_ms = quantile(sorted, 0.90);
  r.p99_ms = quantile(sorted, 0.99);
  r.max_ms = sorted.empty() ? 0 : sorted.back();
  r.mean_ms = mean(sorted);
  return r;
}

}  // namespace lockbench
