// Structured logging in mongod's 4.4+ JSON format: one line per event on stdout,
//   {"t":{"$date":"2026-01-01T00:00:00.000+00:00"},"s":"I","c":"NETWORK","id":22943,
//    "ctx":"conn12","msg":"Connection accepted","attr":{...}}
// so the harness and tests can wait for "Waiting for connections" and grep connection events.
//
// Ids reuse mongod's where the event has a mongod counterpart (22943 accepted, 22944 ended,
// 23016 waiting for connections, 22942 refused); ids 90000+ are mongosim's own.
//
// Thread-safe: each line is written with one write(2) under a mutex, so lines never interleave.
#pragma once

#include <cstdint>
#include <string_view>

#include "bson/value.h"

namespace mongosim::server {

enum class Severity { kInfo, kWarning, kError };

namespace log_id {
inline constexpr int32_t kConnectionRefused = 22942;
inline constexpr int32_t kConnectionAccepted = 22943;
inline constexpr int32_t kConnectionEnded = 22944;
inline constexpr int32_t kWaitingForConnections = 23016;
inline constexpr int32_t kShutdown = 23138;
inline constexpr int32_t kClientMetadata = 51800;
inline constexpr int32_t kCommandFailed = 90001;
inline constexpr int32_t kBadMessage = 90002;
inline constexpr int32_t kListenFailed = 90003;
inline constexpr int32_t kStartup = 90004;
inline constexpr int32_t kElectionProgress = 90005;   // a step of an election (topology.h)
inline constexpr int32_t kVoteRequestFailed = 90006;  // no answer, or an error reply
}  // namespace log_id

// Writes one line. `context` names the thread of activity ("listener", "conn7").
void log_event(Severity severity, std::string_view component, int32_t id, std::string_view context,
               std::string_view message, const bson::Document& attributes = {});

// Redirects log lines to another file descriptor (tests); -1 silences logging.
void set_log_fd(int fd);

}  // namespace mongosim::server
