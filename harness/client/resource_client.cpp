#include "client/resource_client.h"

#include <stdexcept>

#include "bson_owner.h"

namespace locklab {
namespace {

constexpr int kDuplicateKey = 11000;

using mongolock::bson::Bson;
using mongolock::bson::BsonReply;

// The cluster's URI with every driver timeout bounded by the lease.
std::string bounded_uri(const WorkerConfig& c) {
  const std::string bound = std::to_string(c.lock.expiry_ms);
  return c.uri + (c.uri.find('?') == std::string::npos ? "?" : "&") +
         "serverSelectionTimeoutMS=" + bound + "&connectTimeoutMS=" + bound +
         "&socketTimeoutMS=" + bound;
}

}  // namespace

ResourceClient::ResourceClient(const WorkerConfig& config)
    : database_(config.database),
      write_concern_w_(config.lock.write_concern_w),
      fencing_(config.lock.fencing) {
  const std::string uri = bounded_uri(config);
  client_ = mongoc_client_new(uri.c_str());
  if (!client_) throw std::runtime_error("bad cluster URI: " + uri);
  mongoc_client_set_error_api(client_, MONGOC_ERROR_API_VERSION_2);
}

ResourceClient::~ResourceClient() {
  mongoc_client_destroy(client_);
}

WriteOutcome ResourceClient::fenced_write(const std::string& resource, int64_t token,
                                          const std::string& id, std::string* error) {
  Bson filter(fencing_ ? BCON_NEW("_id", BCON_UTF8(resource.c_str()), "token", "{", "$lte",
                                  BCON_INT64(token), "}")
                       : BCON_NEW("_id", BCON_UTF8(resource.c_str())));
  Bson update(BCON_NEW("$set", "{", "token", BCON_INT64(token), "}", "$inc", "{", "count",
                       BCON_INT64(1), "}", "$push", "{", "writes", "{", "$each", "[", "{", "id",
                       BCON_UTF8(id.c_str()), "token", BCON_INT64(token), "}", "]", "$slice",
                       BCON_INT32(-kFencedWritesKept), "}", "}"));
  return update_one(kFencedCollection, filter.get(), update.get(), error);
}

std::optional<int64_t> ResourceClient::read_counter(std::string* error) {
  mongoc_collection_t* coll =
      mongoc_client_get_collection(client_, database_.c_str(), kCounterCollection);
  Bson filter(BCON_NEW("_id", BCON_UTF8(kCounterResource)));
  // The read must show every write a worker was told was applied. At w:majority that is the
  // majority-committed state (a majority read also never sees a write a failover will roll
  // back); at a numbered w only the primary is sure to have it, so read "local" there (the
  // driver's read preference is primary): at majority the read misses an acknowledged write
  // until the commit point passes it, a lost update the lock did not cause.
  Bson opts(BCON_NEW("readConcern", "{", "level",
                     BCON_UTF8(write_concern_w_ == 0 ? "majority" : "local"), "}"));
  mongoc_cursor_t* cursor =
      mongoc_collection_find_with_opts(coll, filter.get(), opts.get(), nullptr);
  const bson_t* doc = nullptr;
  std::optional<int64_t> count = 0;
  if (mongoc_cursor_next(cursor, &doc)) {
    bson_iter_t it;
    count = bson_iter_init_find(&it, doc, "count") && BSON_ITER_HOLDS_NUMBER(&it)
                ? bson_iter_as_int64(&it)
                : 0;
  }
  bson_error_t err;
  if (mongoc_cursor_error(cursor, &err)) {
    *error = err.message;
    count.reset();
  }
  mongoc_cursor_destroy(cursor);
  mongoc_collection_destroy(coll);
  return count;
}

WriteOutcome ResourceClient::write_counter(int64_t count, std::string* error) {
  Bson filter(BCON_NEW("_id", BCON_UTF8(kCounterResource)));
  Bson update(BCON_NEW("$set", "{", "count", BCON_INT64(count), "}"));
  return update_one(kCounterCollection, filter.get(), update.get(), error);
}

WriteOutcome ResourceClient::update_one(const char* collection, const bson_t* filter,
                                        const bson_t* update, std::string* error) {
  mongoc_collection_t* coll = mongoc_client_get_collection(client_, database_.c_str(), collection);
  Bson opts(write_concern_w_ == 0 ? BCON_NEW("upsert", BCON_BOOL(true), "writeConcern", "{", "w",
                                             BCON_UTF8("majority"), "}")
                                  : BCON_NEW("upsert", BCON_BOOL(true), "writeConcern", "{", "w",
                                             BCON_INT32(write_concern_w_), "}"));
  BsonReply reply;
  bson_error_t err;
  const bool ok = mongoc_collection_update_one(coll, filter, update, opts.get(), reply.out(), &err);
  mongoc_collection_destroy(coll);
  if (ok) return WriteOutcome::kAccepted;
  *error = err.message;
  return err.code == kDuplicateKey ? WriteOutcome::kRejected : WriteOutcome::kUnknown;
}

nlohmann::json fenced_final_value(const std::string& resource, const nlohmann::json& doc) {
  if (doc.is_null()) return {{"resource", resource}, {"missing", true}, {"count", 0}};
  nlohmann::json writes = nlohmann::json::array();
  for (const auto& w : doc.value("writes", nlohmann::json::array())) {
    writes.push_back({{"id", w.value("id", "")}, {"token", w.value("token", nlohmann::json())}});
  }
  return {{"resource", resource},
          {"token", doc.value("token", nlohmann::json(nullptr))},
          {"count", doc.value("count", nlohmann::json(nullptr))},
          {"writes", writes}};
}

}  // namespace locklab
