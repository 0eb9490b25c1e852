#include "client/resource_steps.h"

#include <cassert>
#include <utility>

namespace locklab {

ResourceSteps::ResourceSteps(const WorkerConfig& config, Record record)
    : config_(config), record_(std::move(record)), resources_(config) {}

std::string ResourceSteps::next_write_id() {
  assert(write_ids_left());
  const int64_t n = config_.incarnation * kWriteIdsPerIncarnation + next_write_++;
  return config_.id + "-" + std::to_string(n);
}

void ResourceSteps::fenced_write(const std::string& lock, int64_t token) {
  const std::string resource = resource_name(lock);
  const std::string id = next_write_id();
  const nlohmann::json value = {{"resource", resource}, {"id", id}};
  record_("write", EventType::kInvoke, lock, token, value);
  std::string error;
  switch (resources_.fenced_write(resource, token, id, &error)) {
    case WriteOutcome::kAccepted:
      record_("write", EventType::kOk, lock, token, value);
      return;
    case WriteOutcome::kRejected:
      record_("write", EventType::kFail, lock, token,
              {{"resource", resource}, {"id", id}, {"reason", "stale token"}});
      return;
    case WriteOutcome::kUnknown:
      record_("write", EventType::kInfo, lock, token,
              {{"resource", resource}, {"id", id}, {"error", error}});
      return;
  }
}

void ResourceSteps::counter_increment(const std::string& lock, std::optional<int64_t> token,
                                      const std::function<bool()>& hold) {
  std::string error;
  const std::optional<int64_t> count = resources_.read_counter(&error);
  if (!count) {
    record_("read", EventType::kFail, lock, token,
            {{"resource", kCounterResource}, {"error", error}});
    return;
  }
  record_("read", EventType::kOk, lock, token, {{"resource", kCounterResource}, {"count", *count}});
  if (!hold()) return;
  const int64_t next = *count + 1;
  const nlohmann::json value = {{"resource", kCounterResource}, {"count", next}, {"read", *count}};
  record_("write", EventType::kInvoke, lock, token, value);
  switch (resources_.write_counter(next, &error)) {
    case WriteOutcome::kAccepted:
      record_("write", EventType::kOk, lock, token, value);
      return;
    case WriteOutcome::kRejected:  // no unique key can collide here: treated as unknown
    case WriteOutcome::kUnknown:
      record_("write", EventType::kInfo, lock, token,
              {{"resource", kCounterResource}, {"count", next}, {"error", error}});
      return;
  }
}

}  // namespace locklab
