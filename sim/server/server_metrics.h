// The counters serverStatus reports: opcounters, per-command totals and failures, connections.
// Tests and benchmarks count round trips with them, so every command the dispatcher sees is
// counted exactly once, before it runs (as mongod does: serverStatus counts itself).
//
// Thread-safe: connection threads update, serverStatus reads.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "bson/value.h"

namespace mongosim::server {

class ServerMetrics {
 public:
  // `name` is the canonical command name ("<UNKNOWN>" for unknown commands); `body` is used
  // for the per-statement opcounters (insert documents, update/delete statements).
  void count_command(std::string_view name, const bson::Document& body);
  void count_failure(std::string_view name);

  void connection_opened();
  void connection_closed();
  int64_t current_connections() const { return current_connections_.load(); }

  bson::Document opcounters() const;
  bson::Document command_metrics() const;  // {<name>: {failed, total}, ...}
  bson::Document connections(int64_t limit) const;

 private:
  struct CommandCounts {
    int64_t total = 0;
    int64_t failed = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::string, CommandCounts, std::less<>> commands_;
  int64_t insert_ = 0, query_ = 0, update_ = 0, delete_ = 0, getmore_ = 0, command_ = 0;
  std::atomic<int64_t> current_connections_{0};
  std::atomic<int64_t> total_connections_{0};
};

}  // namespace mongosim::server
