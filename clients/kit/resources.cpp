#include "resources.h"

#include "workload.h"

namespace locklab::clients {

Resources::Resources(const std::string& uri, const std::string& database, int write_concern_w,
                     bool fencing)
    : connection_(uri, database, write_concern_w), fencing_(fencing) {}

WriteOutcome Resources::fenced_write(const std::string& resource, int64_t token,
                                     const std::string& id, std::string* error) {
  Json filter = {{"_id", resource}};
  if (fencing_) filter["token"] = Json{{"$lte", json_int64(token)}};
  const Json entry = {{"id", id}, {"token", json_int64(token)}};
  const Json update = {
      {"$set", {{"token", json_int64(token)}}},
      {"$inc", {{"count", json_int64(1)}}},
      {"$push", {{"writes", {{"$each", Json::array({entry})}, {"$slice", -kFencedWritesKept}}}}}};
  return upsert_one(kFencedCollection, filter, update, error);
}

std::optional<int64_t> Resources::read_counter(std::string* error) {
  const Json find = {{"find", kCounterCollection},
                     {"filter", {{"_id", kCounterResource}}},
                     {"limit", 1},
                     {"readConcern", {{"level", "majority"}}}};
  const Reply reply = connection_.read(find);
  if (!reply.ok()) {
    *error = reply.message;
    return std::nullopt;
  }
  const Json batch = at_path(reply.doc, {"cursor", "firstBatch"});
  if (!batch.is_array() || batch.empty()) return 0;
  const Json count = at_path(batch[0], {"count"});
  return count.is_number_integer() ? count.get<int64_t>() : 0;
}

WriteOutcome Resources::write_counter(int64_t count, std::string* error) {
  return upsert_one(kCounterCollection, {{"_id", kCounterResource}},
                    {{"$set", {{"count", json_int64(count)}}}}, error);
}

WriteOutcome Resources::upsert_one(const char* collection, const Json& filter, const Json& update,
                                   std::string* error) {
  const Json command = {
      {"update", collection},
      {"updates", Json::array({{{"q", filter}, {"u", update}, {"upsert", true}}})}};
  const Reply reply = connection_.write(command);
  if (reply.ok()) return WriteOutcome::kAccepted;
  *error = reply.message;
  return reply.duplicate_key() ? WriteOutcome::kRejected : WriteOutcome::kUnknown;
}

}  // namespace locklab::clients
