#include "server/read_concern.h"

#include <chrono>
#include <cmath>
#include <string>

namespace mongosim::server {

namespace {

// Polling slice of an afterClusterTime wait: the applied optime and commit point have no
// condition variable shared with the server core, and a causal read waits at most this long
// after its optime arrives.
constexpr int64_t kReadConcernPollMs = 2;

std::string wrong_type(const std::string& field, const bson::Value& v, const char* expected) {
  return "BSON field '" + field + "' is the wrong type '" + std::string(bson::type_name(v.type())) +
         "', expected type '" + expected + "'";
}

ReadConcern::Level parse_level(const bson::Value& v) {
  if (!v.is_string())
    throw CommandError(code::kTypeMismatch, wrong_type("readConcern.level", v, "string"));
  const std::string& s = v.as_string();
  if (s == "local") return ReadConcern::Level::kLocal;
  if (s == "available") return ReadConcern::Level::kAvailable;
  if (s == "majority") return ReadConcern::Level::kMajority;
  if (s == "linearizable") return ReadConcern::Level::kLinearizable;
  if (s == "snapshot") return ReadConcern::Level::kSnapshot;
  throw CommandError(code::kBadValue, "Enumeration value '" + s +
                                          "' for field 'readConcern.level' is not a valid value.");
}

const char* level_name(ReadConcern::Level level) {
  switch (level) {
    case ReadConcern::Level::kLocal:
      return "local";
    case ReadConcern::Level::kAvailable:
      return "available";
    case ReadConcern::Level::kMajority:
      return "majority";
    case ReadConcern::Level::kLinearizable:
      return "linearizable";
    case ReadConcern::Level::kSnapshot:
      return "snapshot";
  }
  return "local";
}

void check_allowed(const ReadConcern& rc, std::string_view command, bool replication_enabled) {
  bool non_default = rc.level != ReadConcern::Level::kLocal || rc.after_cluster_time.has_value();
  if (non_default && !supports_read_concern(command)) {
    throw CommandError(code::kInvalidOptions, "Command " + std::string(command) +
                                                  " does not support { readConcern: { level: \"" +
                                                  level_name(rc.level) + "\" } }");
  }
  if (rc.after_cluster_time && !replication_enabled) {
    throw CommandError(code::kInvalidOptions,
                       "Cannot specify afterClusterTime readConcern without replication enabled");
  }
  if (rc.after_cluster_time && rc.level == ReadConcern::Level::kLinearizable) {
    throw CommandError(code::kInvalidOptions,
                       "afterClusterTime is not allowed for linearizable read concern");
  }
  if (rc.after_cluster_time && *rc.after_cluster_time == bson::Timestamp{}) {
    throw CommandError(code::kInvalidOptions, "afterClusterTime cannot be a null timestamp");
  }
}

}  // namespace

bool supports_read_concern(std::string_view command) {
  return command == "find" || command == "aggregate" || command == "count" || command == "distinct";
}

ReadConcern parse_read_concern(const bson::Document& body, std::string_view command,
                               bool replication_enabled) {
  ReadConcern rc;
  const bson::Value* arg = body.get("readConcern");
  if (arg == nullptr) return rc;
  if (!arg->is_document()) {
    throw CommandError(code::kTypeMismatch, wrong_type("readConcern", *arg, "object"));
  }
  rc.explicitly_given = true;
  for (const auto& [name, value] : arg->as_document()) {
    if (name == "level") {
      rc.level = parse_level(value);
    } else if (name == "afterClusterTime") {
      if (value.type() != bson::Type::kTimestamp) {
        throw CommandError(code::kTypeMismatch,
                           wrong_type("readConcern.afterClusterTime", value, "timestamp"));
      }
      rc.after_cluster_time = value.as_timestamp();
    } else if (name == "provenance") {
      // Drivers never send it; mongod accepts it in the readConcern it echoes back.
    } else if (name == "afterOpTime" || name == "atClusterTime") {
      throw CommandError(code::kInvalidOptions,
                         "readConcern." + name + " is not supported by mongosim");
    } else {
      throw CommandError(code::kUnknownField,
                         "BSON field 'readConcern." + name + "' is an unknown field.");
    }
  }
  check_allowed(rc, command, replication_enabled);
  return rc;
}

int64_t parse_max_time_ms(const bson::Document& body) {
  const bson::Value* v = body.get("maxTimeMS");
  if (v == nullptr) return 0;
  if (!v->is_number()) throw CommandError(code::kBadValue, "maxTimeMS must be a number");
  double d = v->number_as_double();
  if (!(d >= 0) || d != std::floor(d) || d > 2147483647.0) {
    throw CommandError(code::kBadValue, "maxTimeMS must be a non-negative integer below 2^31");
  }
  return static_cast<int64_t>(d);
}

void wait_for_read_concern(ServerContext& server, const ReadConcern& rc, int64_t max_time_ms) {
  if (!rc.after_cluster_time) return;
  const bool majority =
      rc.level == ReadConcern::Level::kMajority || rc.level == ReadConcern::Level::kSnapshot;
  auto reached = [&] {
    OpTime point =
        majority ? server.replication().majority_read_point() : server.effective_last_applied();
    return point.ts >= *rc.after_cluster_time;
  };
  if (reached()) return;
  const int64_t budget_ms = max_time_ms > 0 ? max_time_ms : kMaxReadConcernWaitMs;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(budget_ms);
  struct Waiting {
    std::atomic<int64_t>& count;
    explicit Waiting(std::atomic<int64_t>& c) : count(c) { ++count; }
    ~Waiting() { --count; }
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;
  } waiting(server.read_concern_waiters);
  while (!reached()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      throw CommandError(code::kMaxTimeMSExpired,
                         "operation exceeded time limit waiting for afterClusterTime");
    }
    if (!server.sleep_unless_shutdown(kReadConcernPollMs)) {
      throw CommandError(code::kInterruptedAtShutdown, "interrupted at shutdown");
    }
  }
}

}  // namespace mongosim::server
