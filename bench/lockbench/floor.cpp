#include "floor.h"

#include <mongoc/mongoc.h>
#include <mongolock/options.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "clock.h"
#include "hold_spec.h"
#include "stats.h"

namespace lockbench {
namespace {

struct ClientDeleter {
  void operator()(mongoc_client_t* c) const { mongoc_client_destroy(c); }
};

// The write options mongolock's Context sends with every write (majority, wtimeout).
mongolock::bson::Bson write_opts(const mongolock::Options& options) {
  return mongolock::bson::Bson(BCON_NEW("writeConcern", "{", "w", BCON_UTF8("majority"), "wtimeout",
                                        BCON_INT64(options.write_timeout_ms), "}"));
}

void run(mongoc_client_t* client, const std::string& database, const bson_t& command,
         const bson_t& opts, mongolock::bson::BsonReply& reply) {
  bson_error_t error;
  if (!mongoc_client_command_with_opts(client, database.c_str(), &command, nullptr, &opts,
                                       reply.out(), &error)) {
    throw std::runtime_error(std::string("floor: round trip failed: ") + error.message);
  }
}

}  // namespace

FloorResult measure_floor(const std::string& uri, const std::string& database,
                          const std::string& lock_name, const std::string& target_name,
                          int64_t samples_max, double seconds_max) {
  mongoc_init();
  std::unique_ptr<mongoc_client_t, ClientDeleter> client(mongoc_client_new(uri.c_str()));
  if (!client) throw std::invalid_argument("floor: bad URI '" + uri + "'");
  mongoc_client_set_error_api(client.get(), MONGOC_ERROR_API_VERSION_2);
  const mongolock::Options options = mongolock::Options{}.validated();
  const mongolock::detail::HoldSpec spec{options.collection, lock_name};
  const mongolock::bson::Bson opts = write_opts(options);
  FloorResult r;
  r.target = target_name;
  const int64_t stop_ns = monotonic_now_ns() + static_cast<int64_t>(seconds_max * kNsPerS);
  while (r.samples < samples_max && monotonic_now_ns() < stop_ns) {
    const std::string id = mongolock::detail::new_acquisition_id();
    const mongolock::bson::Bson acquire = mongolock::detail::acquire_for(spec, id, options);
    mongolock::bson::BsonReply granted;
    const int64_t sent_ns = monotonic_now_ns();
    run(client.get(), database, *acquire, *opts, granted);
    r.rtt_ms.push_back(static_cast<double>(monotonic_now_ns() - sent_ns) / kNsPerMs);
    ++r.samples;
    if (!mongolock::detail::granted_token(spec, *granted.get(), id)) {
      throw std::runtime_error("floor: an uncontended acquire of '" + lock_name +
                               "' was not granted (is another client holding it?)");
    }
    mongolock::bson::BsonReply released;
    run(client.get(), database, *mongolock::detail::release_for(spec, id, options), *opts,
        released);
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
