// The critical section's steps on the guarded resources, with the history events each records,
// taken the one way by both worker loops (locklab-worker's, client/workload.cpp, and the seed-lock
// clients' kit, clients/kit/client_run.cpp), so the checkers read every client's history alike:
//   fenced_write       write invoke {resource, id} before the request, then ok; fail with reason
//                      "stale token" (the token check refused it); or info with the error;
//   counter_increment  read ok {resource, count} (or read fail {resource, error}: nothing more),
//                      the hold, then write invoke {resource, count, read} before the request and
//                      ok, or info {resource, count, error} (no unique key can collide on the
//                      counter: every failure is unknown).
// Write ids are "<worker>-<incarnation * kWriteIdsPerIncarnation + sequence>".
//
// Thread rules: the worker's workload thread only (it owns a ResourceClient).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "checker/history.h"
#include "client/resource_client.h"
#include "client/workload.h"

namespace locklab {

class ResourceSteps {
 public:
  // Appends one event of this worker: f, type, lock, token, value.
  using Record = std::function<void(const std::string&, EventType, const std::string&,
                                    std::optional<int64_t>, nlohmann::json)>;

  // Throws std::runtime_error as ResourceClient does.
  ResourceSteps(const WorkerConfig& config, Record record);

  // Whether another operation may run: its write id would still be unique.
  bool write_ids_left() const { return next_write_ < kWriteIdsPerIncarnation; }

  void fenced_write(const std::string& lock, int64_t token);
  // `hold` runs between the read and the write; false: stop before writing.
  void counter_increment(const std::string& lock, std::optional<int64_t> token,
                         const std::function<bool()>& hold);

 private:
  std::string next_write_id();

  const WorkerConfig& config_;
  Record record_;
  ResourceClient resources_;
  int64_t next_write_ = 1;  // sequence of this incarnation's fenced write ids
};

}  // namespace locklab
