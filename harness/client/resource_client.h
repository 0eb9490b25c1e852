// The resources the workloads guard, written the one way every worker writes them: locklab-worker
// (client/workload.cpp) and the seed-lock clients' kit (clients/kit/client_run.cpp) both use this,
// through ResourceSteps (client/resource_steps.h, which records the events), so the harness's
// final reads and the checkers judge every client's writes alike.
//   fenced   collection kFencedCollection, document "R<lock>": updateOne with upsert, filter
//            {_id, token: {$lte: T}} (just {_id} with fencing off), update $set token, $inc
//            count, $push {id, token} onto `writes` (the last kFencedWritesKept kept, in apply
//            order). A duplicate key means the token check refused the write: the document holds
//            a higher token, so the filter missed and the upsert collided on _id.
//   counter  collection kCounterCollection, document kCounterResource: read from the primary
//            at read concern majority when writes are w:majority, "local" at a numbered w (so
//            a read shows every acknowledged write), then $set count (guarded only by the lock).
// Writes use the worker's write concern. The driver's server selection, connect and socket
// timeouts are bounded by the lease (expiry_ms), so a partition cannot hang a critical section
// for minutes.
//
// Thread rules: not thread-safe (it owns one mongoc_client_t); one per workload thread.
#pragma once

#include <mongoc/mongoc.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "client/workload.h"

namespace locklab {

// The value of a final read of fenced resource `resource` (checker/history.h, "final"): the
// document's token, count and writes [{id, token}], or for no document (null) missing with a
// count of 0, so that a reader counting writes sees 0.
nlohmann::json fenced_final_value(const std::string& resource, const nlohmann::json& doc);

// The outcome of one write to a resource document.
enum class WriteOutcome { kAccepted, kRejected, kUnknown };

class ResourceClient {
 public:
  // Uses config.uri, database, lock.write_concern_w, lock.fencing and lock.expiry_ms. Throws
  // std::runtime_error on a URI the driver refuses.
  explicit ResourceClient(const WorkerConfig& config);
  ~ResourceClient();
  ResourceClient(const ResourceClient&) = delete;
  ResourceClient& operator=(const ResourceClient&) = delete;

  WriteOutcome fenced_write(const std::string& resource, int64_t token, const std::string& id,
                            std::string* error);
  // The counter's current value (0 when the document does not exist yet); nullopt on error.
  std::optional<int64_t> read_counter(std::string* error);
  WriteOutcome write_counter(int64_t count, std::string* error);

 private:
  std::string database_;
  int write_concern_w_;  // 0 = majority
  bool fencing_;
  mongoc_client_t* client_ = nullptr;

  WriteOutcome update_one(const char* collection, const bson_t* filter, const bson_t* update,
                          std::string* error);
};

}  // namespace locklab
