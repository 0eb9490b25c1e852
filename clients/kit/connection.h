// One libmongoc client that runs database commands written as JSON, for the seed-lock clients.
// A command is an ordered JSON object (the command name must come first) in MongoDB extended
// JSON: dates as {"$date": {"$numberLong": "<ms>"}}, 64-bit integers as {"$numberLong": "<n>"}.
// The reply comes back as relaxed extended JSON (plain numbers; dates as {"$date": ...}).
//
// What a reply proves: `kOk` (the server answered ok:1 without write errors), `kRefused` (the
// server answered with an error or a write error: the code says which), `kNotSent` (server
// selection failed: the request never left the client) or `kUnknown` (network error, timeout,
// write-concern error: the command may have run). libmongoc retries a retryable write once, so
// a refusal of a write other than a duplicate key may be the retry's while the first try ran:
// callers that need certainty treat only kNotSent and code 11000 as "not applied".
//
// Thread rules: not thread-safe (a mongoc_client_t is single-threaded); one per thread.
#pragma once

#include <mongoc/mongoc.h>

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

#include "bson_owner.h"

namespace locklab::clients {

using Json = nlohmann::ordered_json;

inline constexpr int kDuplicateKey = 11000;

struct Reply {
  enum class Outcome { kOk, kRefused, kNotSent, kUnknown };
  Outcome outcome = Outcome::kUnknown;
  int code = 0;         // server error code (write error code when writeErrors is set)
  std::string message;  // what went wrong; empty when kOk
  Json doc;             // the server's reply (null when none arrived)

  bool ok() const { return outcome == Outcome::kOk; }
  bool duplicate_key() const { return outcome == Outcome::kRefused && code == kDuplicateKey; }
  // Proven not applied: never sent, or refused with a duplicate key.
  bool proves_not_applied() const { return outcome == Outcome::kNotSent || duplicate_key(); }
};

// The value at keys[0].keys[1]... in a reply, or null when any step is missing.
Json at_path(const Json& doc, std::initializer_list<const char*> keys);

// Extended-JSON literals.
Json json_date_ms(int64_t ms_since_epoch);
Json json_int64(int64_t value);

class Connection {
 public:
  // uri: a MongoDB connection string; database: where every command runs; write_concern_w:
  // 0 for "majority", otherwise the number of members. Throws std::runtime_error on a bad URI.
  Connection(const std::string& uri, std::string database, int write_concern_w);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // A command that writes: sent with the configured write concern.
  Reply write(const Json& command);
  // A command that only reads, to the primary.
  Reply read(const Json& command);

 private:
  mongoc_client_t* client_ = nullptr;
  std::string database_;
  mongolock::bson::Bson write_opts_;

  Reply run(const Json& command, bool is_write);
};

}  // namespace locklab::clients
