#include "server/server_metrics.h"

namespace mongosim::server {

namespace {

int64_t array_length(const bson::Document& body, std::string_view field) {
  const bson::Value* v = body.get(field);
  return v != nullptr && v->is_array() ? static_cast<int64_t>(v->as_array().size()) : 0;
}

}  // namespace

void ServerMetrics::count_command(std::string_view name, const bson::Document& body) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = commands_.find(name);
  if (it == commands_.end()) it = commands_.emplace(std::string(name), CommandCounts{}).first;
  ++it->second.total;
  // mongod's opcounters count documents/statements for writes, commands for the rest.
  if (name == "insert") {
    insert_ += array_length(body, "documents");
  } else if (name == "update") {
    update_ += array_length(body, "updates");
  } else if (name == "delete") {
    delete_ += array_length(body, "deletes");
  } else if (name == "find") {
    ++query_;
  } else if (name == "getMore") {
    ++getmore_;
  } else {
    ++command_;
  }
}

void ServerMetrics::count_failure(std::string_view name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = commands_.find(name);
  if (it == commands_.end()) it = commands_.emplace(std::string(name), CommandCounts{}).first;
  ++it->second.failed;
}

void ServerMetrics::connection_opened() {
  ++current_connections_;
  ++total_connections_;
}

void ServerMetrics::connection_closed() {
  --current_connections_;
}

bson::Document ServerMetrics::opcounters() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bson::Document{{"insert", bson::V(insert_)},   {"query", bson::V(query_)},
                        {"update", bson::V(update_)},   {"delete", bson::V(delete_)},
                        {"getmore", bson::V(getmore_)}, {"command", bson::V(command_)}};
}

bson::Document ServerMetrics::command_metrics() const {
  std::lock_guard<std::mutex> lock(mutex_);
  bson::Document out;
  for (const auto& [name, counts] : commands_) {
    out.append(name, bson::V(bson::Document{{"failed", bson::V(counts.failed)},
                                            {"total", bson::V(counts.total)}}));
  }
  return out;
}

bson::Document ServerMetrics::connections(int64_t limit) const {
  int64_t current = current_connections_.load();
  return bson::Document{{"current", bson::V(static_cast<int32_t>(current))},
                        {"available", bson::V(static_cast<int32_t>(limit - current))},
                        {"totalCreated", bson::V(total_connections_.load())}};
}

}  // namespace mongosim::server
