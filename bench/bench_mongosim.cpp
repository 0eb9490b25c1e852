// Round trips against mongosim over loopback TCP, through the real C driver (libmongoc):
//   BM_FindAndModifyUpsertInc   one findAndModify {$inc} upsert, majority write concern
//   BM_FindAndModifyLockShape   one findAndModify shaped as mongolock's acquire (the lock
//                               document's fields, an update pipeline on $$NOW with the same
//                               $cond per field), sent as the library sends it: a pooled client,
//                               mongoc_client_command_with_opts, {w: "majority", wtimeout}
//   BM_RawAcquireReleasePair    that findAndModify and mongolock's release update, raw: the
//                               lock pair's two round trips without the library
//   BM_LockAcquireRelease       mongolock's uncontended acquire + release (two round trips)
// on a one-member replica set started for the run. Each reports ops/s and the p50 / p99
// latency of one iteration in microseconds; the lock pair is to be read against two
// BM_FindAndModifyLockShape round trips and against BM_RawAcquireReleasePair of the same run
// (the difference is what the library adds on the client). Not a test: run it and read the
// numbers (results/README.md has the command and the committed figures).
#include <benchmark/benchmark.h>
#include <mongoc/mongoc.h>
#include <mongolock/mongolock.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bson_owner.h"
#include "testkit.h"

namespace {

using Clock = std::chrono::steady_clock;

// The run's one-member set (the kit's), started on first use.
locklab::testkit::ReplicaSet& server() {
  static locklab::testkit::ReplicaSet set(
      {.members = 1,
       .args = {"--bind_ip", "127.0.0.1", "--setParameter", "ttlMonitorSleepSecs=1"},
       .election_timeout_ms = 0,  // the server's own timers
       .heartbeat_interval_ms = 0});
  return set;
}

// Latencies of one benchmark run; reported as percentile counters when the run ends.
class Latencies {
 public:
  explicit Latencies(benchmark::State& state) : state_(state) { samples_us_.reserve(1 << 16); }
  void add(Clock::duration d) {
    samples_us_.push_back(std::chrono::duration<double, std::micro>(d).count());
  }
  void report() {
    if (samples_us_.empty()) return;
    std::sort(samples_us_.begin(), samples_us_.end());
    state_.counters["p50_us"] = at(0.50);
    state_.counters["p99_us"] = at(0.99);
    state_.counters["ops_per_s"] =
        benchmark::Counter(static_cast<double>(samples_us_.size()), benchmark::Counter::kIsRate);
  }

 private:
  double at(double q) const {
    auto index = static_cast<size_t>(q * static_cast<double>(samples_us_.size() - 1));
    return samples_us_[index];
  }
  benchmark::State& state_;
  std::vector<double> samples_us_;
};

struct ClientDeleter {
  void operator()(mongoc_client_t* c) const { mongoc_client_destroy(c); }
};

void BM_FindAndModifyUpsertInc(benchmark::State& state) {
  mongoc_init();
  std::string uri = server().uri("appname=bench");
  bson_error_t error;
  std::unique_ptr<mongoc_client_t, ClientDeleter> client(mongoc_client_new(uri.c_str()));
  if (!client) {
    state.SkipWithError("invalid URI");
    return;
  }
  const mongolock::bson::Bson command(
      BCON_NEW("findAndModify", BCON_UTF8("counters"), "query", "{", "_id", BCON_UTF8("c"), "}",
               "update", "{", "$inc", "{", "n", BCON_INT32(1), "}", "}", "upsert", BCON_BOOL(true),
               "new", BCON_BOOL(true), "writeConcern", "{", "w", BCON_UTF8("majority"), "}"));
  Latencies latencies(state);
  for (auto _ : state) {
    mongolock::bson::BsonReply reply;
    auto start = Clock::now();
    bool ok = mongoc_client_command_simple(client.get(), "bench", command.get(), nullptr,
                                           reply.out(), &error);
    latencies.add(Clock::now() - start);
    if (!ok) {
      state.SkipWithError(error.message);
      break;
    }
  }
  latencies.report();
}
BENCHMARK(BM_FindAndModifyUpsertInc)->Unit(benchmark::kMicrosecond)->MinTime(3.0)->UseRealTime();

struct PoolDeleter {
  void operator()(mongoc_client_pool_t* p) const { mongoc_client_pool_destroy(p); }
};

constexpr const char* kRawId = R"("0123456789abcdef0123456789abcdef")";

// mongolock's acquire pipeline (docs/mongolock-wire.md): G = FREE and OK (the id is neither
// tombstoned nor abandoned), each field under its $cond on G. `regrant` adds "or already this
// id's" to FREE, so a findAndModify repeated without a release is a grant every time.
std::string lock_shaped_acquire(bool regrant) {
  const std::string id = kRawId;
  const std::string epoch = R"({"$date": {"$numberLong": "0"}})";
  const std::string free = R"({"$or": [{"$eq": [{"$ifNull": ["$holder", null]}, null]},
      {"$lte": [{"$ifNull": ["$expiresAt", )" +
                           epoch + R"(]}, "$$NOW"]})" +
                           (regrant ? R"(, {"$eq": ["$holder", )" + id + "]}" : "") + "]}";
  const std::string ok = R"({"$and": [
      {"$not": [{"$in": [)" +
                         id + R"(, {"$map": {"input": {"$ifNull": ["$tombstones", []]},
                                                  "in": "$$this.id"}}]}]},
      {"$not": [{"$in": [)" +
                         id + R"(, {"$ifNull": ["$abandoned", []]}]}]}]})";
  const std::string g = R"({"$and": [)" + free + ", " + ok + "]}";
  auto cond = [&](const std::string& granted, const char* kept) {
    return R"({"$cond": [)" + g + ", " + granted + R"(, ")" + kept + R"("]})";
  };
  return R"({"findAndModify": "bench_locks", "query": {"_id": "bench-lock"}, "upsert": true,
      "new": true, "update": [{"$set": {"reapAt": )" +
         cond(R"({"$max": [{"$ifNull": ["$reapAt", )" + epoch +
                  R"(]}, {"$add": ["$$NOW", 30000]}]})",
              "$reapAt") +
         R"(, "token": )" +
         cond(R"({"$max": [{"$add": [{"$ifNull": ["$token", 0]}, 1]},
                  {"$multiply": [{"$toLong": "$$NOW"}, 1048576]}]})",
              "$token") +
         R"(, "holder": )" + cond(id, "$holder") + R"(, "owner": )" +
         cond(R"({"$literal": {"host": "bench", "pid": 1, "description": ""}})", "$owner") +
         R"(, "acquiredAt": )" + cond(R"("$$NOW")", "$acquiredAt") + R"(, "expiresAt": )" +
         cond(R"({"$add": ["$$NOW", 30000]})", "$expiresAt") + "}}]}";
}

// mongolock's release: an owner-checked update that frees the hold.
std::string lock_shaped_release() {
  return R"({"update": "bench_locks", "updates": [{"q": {"_id": "bench-lock", "holder": )" +
         std::string(kRawId) +
         R"(}, "u": [{"$set": {"holder": null, "owner": null, "expiresAt": "$$NOW"}}]}]})";
}

// A client pool on the run's server and commands sent through it as mongolock sends them: the
// acquire with mongoc_client_command_with_opts (sent once), the release with
// mongoc_client_write_command_with_opts, both with {w: "majority", wtimeout}; a client popped
// and pushed back per round trip.
class RawSender {
 public:
  RawSender()
      : opts_(BCON_NEW("writeConcern", "{", "w", BCON_UTF8("majority"), "wtimeout",
                       BCON_INT64(27'000), "}")) {
    mongoc_init();
    bson_error_t error;
    mongoc_uri_t* uri = mongoc_uri_new_with_error(server().uri().c_str(), &error);
    if (uri == nullptr) throw std::runtime_error(error.message);
    pool_.reset(mongoc_client_pool_new(uri));
    mongoc_uri_destroy(uri);
    mongoc_client_pool_set_error_api(pool_.get(), MONGOC_ERROR_API_VERSION_2);
  }
  static mongolock::bson::Bson parse(const std::string& json) {
    bson_error_t error;
    bson_t* doc = bson_new_from_json(reinterpret_cast<const uint8_t*>(json.c_str()), -1, &error);
    if (doc == nullptr) throw std::runtime_error(error.message);
    return mongolock::bson::Bson(doc);
  }
  // One round trip; false (with the error in `error`) if it failed.
  bool send(const mongolock::bson::Bson& command, bool write_helper, bson_error_t* error) {
    mongolock::bson::BsonReply reply;
    mongoc_client_t* client = mongoc_client_pool_pop(pool_.get());
    const bool ok = write_helper
                        ? mongoc_client_write_command_with_opts(client, "bench", command.get(),
                                                                opts_.get(), reply.out(), error)
                        : mongoc_client_command_with_opts(client, "bench", command.get(), nullptr,
                                                          opts_.get(), reply.out(), error);
    mongoc_client_pool_push(pool_.get(), client);
    return ok;
  }

 private:
  std::unique_ptr<mongoc_client_pool_t, PoolDeleter> pool_;
  mongolock::bson::Bson opts_;
};

void BM_FindAndModifyLockShape(benchmark::State& state) {
  RawSender sender;
  const mongolock::bson::Bson acquire = RawSender::parse(lock_shaped_acquire(true));
  Latencies latencies(state);
  bson_error_t error;
  for (auto _ : state) {
    auto start = Clock::now();
    const bool ok = sender.send(acquire, false, &error);
    latencies.add(Clock::now() - start);
    if (!ok) {
      state.SkipWithError(error.message);
      break;
    }
  }
  latencies.report();
}
BENCHMARK(BM_FindAndModifyLockShape)->Unit(benchmark::kMicrosecond)->MinTime(3.0)->UseRealTime();

void BM_RawAcquireReleasePair(benchmark::State& state) {
  RawSender sender;
  const mongolock::bson::Bson acquire = RawSender::parse(lock_shaped_acquire(false));
  const mongolock::bson::Bson release = RawSender::parse(lock_shaped_release());
  Latencies latencies(state);
  bson_error_t error;
  for (auto _ : state) {
    auto start = Clock::now();
    const bool ok = sender.send(acquire, false, &error) && sender.send(release, true, &error);
    latencies.add(Clock::now() - start);
    if (!ok) {
      state.SkipWithError(error.message);
      break;
    }
  }
  latencies.report();
}
BENCHMARK(BM_RawAcquireReleasePair)->Unit(benchmark::kMicrosecond)->MinTime(3.0)->UseRealTime();

void BM_LockAcquireRelease(benchmark::State& state) {
  mongolock::Options options;
  options.expiry_ms = 30'000;
  mongolock::Provider provider(server().uri(), "bench", options);
  mongolock::Lock lock = provider.create_lock("bench-lock");
  Latencies latencies(state);
  for (auto _ : state) {
    auto start = Clock::now();
    std::optional<mongolock::Handle> held = lock.try_acquire();
    if (!held) {
      state.SkipWithError("uncontended lock not acquired");
      break;
    }
    held->release();
    latencies.add(Clock::now() - start);
  }
  latencies.report();
}
BENCHMARK(BM_LockAcquireRelease)->Unit(benchmark::kMicrosecond)->MinTime(3.0)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
