#include "test_server.h"

#include <mongoc/mongoc.h>
#include <unistd.h>

#include <mutex>

namespace mongolock::test {

std::unique_ptr<ReplicaSet> start_server() {
  if (std::string(MONGOSIM_PATH).empty()) return nullptr;
  return std::make_unique<ReplicaSet>(locklab::testkit::SetOptions{
      .members = 1,
      .program = MONGOSIM_PATH,
      .args = {"--bind_ip", "127.0.0.1", "--setParameter", "ttlMonitorSleepSecs=1"},
      .election_timeout_ms = 0,  // the server's own timers, as a one-member set needs no others
      .heartbeat_interval_ms = 0,
      .ready_timeout = std::chrono::seconds(20),
      .start_timeout = std::chrono::seconds(20)});
}

ReplicaSet* shared_server() {
  static std::once_flag once;
  static std::unique_ptr<ReplicaSet> server;
  std::call_once(once, [] { server = start_server(); });
  return server.get();
}

detail::Bson read_lock_document(const std::string& uri, const std::string& db,
                                const std::string& collection, const std::string& name) {
  mongoc_client_t* client = mongoc_client_new(uri.c_str());
  detail::Bson filter(BCON_NEW("_id", BCON_UTF8(name.c_str())));
  mongoc_collection_t* coll = mongoc_client_get_collection(client, db.c_str(), collection.c_str());
  mongoc_cursor_t* cursor = mongoc_collection_find_with_opts(coll, filter.get(), nullptr, nullptr);
  detail::Bson found = detail::make_bson();
  const bson_t* doc = nullptr;
  if (mongoc_cursor_next(cursor, &doc)) found = detail::Bson(bson_copy(doc));
  mongoc_cursor_destroy(cursor);
  mongoc_collection_destroy(coll);
  mongoc_client_destroy(client);
  return found;
}

std::string fresh_database() {
  static std::atomic<int> next{0};
  return "mongolock_t" + std::to_string(getpid()) + "_" + std::to_string(next++);
}

}  // namespace mongolock::test
