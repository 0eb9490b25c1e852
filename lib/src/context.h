// Context: the state a Provider shares with its Locks and Handles: the client pool, the database,
// the validated Options, and the one-time background index creation.
//
// Every round trip of the library goes through write() or read(), which classify the result:
//   kOk       the server ran the command (for writes: acknowledged with the write concern).
//   kNotSent  it provably never reached a server (server selection failed).
//   kRefused  the server answered with an error; nothing was written. `transient` marks errors a
//             retry may cure (not primary, stepping down, shutting down, write conflict, E11000).
//   kUnknown  it may have run: network error after sending, socket timeout, write concern error.
// Invariant: a kUnknown is never turned into "not done" here; callers resolve it.
// Thread rules: all methods are safe from any thread; the pool hands one client per call.
#pragma once

#include <mongoc/mongoc.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bson_ptr.h"
#include "mongolock/options.h"

namespace mongolock::detail {

enum class Outcome { kOk, kNotSent, kRefused, kUnknown };

struct Reply {
  Outcome outcome = Outcome::kUnknown;
  Bson doc;  // the server reply (empty document when none arrived)
  int domain = 0;
  int code = 0;
  bool transient = false;
  std::string message;
};

class Context {
 public:
  // Owns a pool built from `uri`. Throws InvalidArgument for a bad URI.
  Context(const std::string& uri, std::string database, Options options);
  // Borrows `pool`; the caller keeps it alive longer than this Context.
  Context(mongoc_client_pool_t* pool, std::string database, Options options);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const Options& options() const { return options_; }
  const std::string& database() const { return database_; }

  Reply write(const bson_t& command);
  Reply read(const bson_t& command);

 private:
  Reply run(const bson_t& command, bool is_write);
  void start_index_creation(const std::string& cluster_key);
  void create_index(const std::string& key, const std::string& collection, const char* field,
                    std::stop_token stop);

  Options options_;
  std::string database_;
  mongoc_client_pool_t* pool_ = nullptr;
  bool owns_pool_ = false;
  Bson write_opts_;
  Bson read_opts_;
  std::vector<std::jthread> index_threads_;  // at most 2 (plain and rw collection)
};

}  // namespace mongolock::detail
