// The test kit's replica set (testkit/replica_set.h) seen through mongosim's own wire client:
// commands as bson::Document over RawClient, and the reads the server tests check (the _ids a
// member holds, its state, its term). Starting, initiating, readiness, the primary and every
// wait are the kit's; this file adds only the BSON view.
//
//   SimSet set(durable_set(3));             // dbpaths, 1.5 s election timeout
//   SimSet set({.members = 5});             // in memory, the kit's 1 s timers
//   auto reply = set.command(p, Document{{"hello", V(1)}});
//
// Thread rules: the kit's (one owner thread; command() opens its own connection per call).
#pragma once

#include <chrono>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bson/codec.h"
#include "server/tests/raw_client.h"
#include "testkit.h"

namespace mongosim::testing {

using bson::Document;
using bson::V;
using locklab::testkit::after;
using locklab::testkit::MongosimNode;
using locklab::testkit::poll_until;

// How long a set gets to converge (elect, replicate, roll back) in these tests.
inline constexpr std::chrono::milliseconds kConvergeTimeout{30'000};
// The same for sets on dbpaths, whose members restart from disk.
inline constexpr std::chrono::milliseconds kDurableConvergeTimeout{40'000};

// Returns once the machine's wall clock is in a later second than when it was called (or after
// 3 s): an oplog entry made after that has a larger timestamp than every entry made before on the
// same clock.
inline void wait_for_next_second() {
  auto now_secs = [] {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const int64_t start = now_secs();
  poll_until(after(std::chrono::seconds(3)), [&] { return now_secs() > start; });
}

inline bool is_ok(const Document& reply) {
  return reply.get("ok") != nullptr && reply.get("ok")->truthy();
}

inline bool reply_is_ok(const std::optional<Document>& reply) {
  return reply && is_ok(*reply);
}

// A write reply that is ok with no write error and no write-concern error.
inline bool write_ok(const std::optional<Document>& reply) {
  return reply_is_ok(reply) && !reply->has("writeErrors") && !reply->has("writeConcernError");
}

// The reply's numeric "code", or -1 when it has none (an ok reply, no reply): a test asserting a
// refusal fails on it instead of dereferencing a missing field.
inline int64_t code_of(const std::optional<Document>& reply) {
  const bson::Value* c = reply ? reply->get("code") : nullptr;
  return c != nullptr && c->is_number() ? static_cast<int64_t>(c->number_as_double()) : -1;
}

// The reply's "errmsg", or "" when it has none.
inline std::string errmsg_of(const std::optional<Document>& reply) {
  const bson::Value* m = reply ? reply->get("errmsg") : nullptr;
  return m != nullptr && m->is_string() ? m->as_string() : std::string();
}

inline std::string show(const std::optional<Document>& reply) {
  return reply ? bson::to_json(*reply) : std::string("no reply");
}

// One command on a fresh connection to a node; nullopt when it is not running, paused, or does
// not answer.
inline std::optional<Document> command(const locklab::testkit::MongosimNode& node,
                                       const Document& cmd, const std::string& db = "admin") {
  if (node.pid() <= 0 || node.paused()) return std::nullopt;
  try {
    RawClient raw(node.port());
    return raw.command(cmd, db);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The settings.replicaSetId of the node's replSetGetConfig; nullopt when it has none or does not
// answer.
inline std::optional<bson::ObjectId> replica_set_id_of(const locklab::testkit::MongosimNode& node) {
  const std::optional<Document> reply =
      command(node, Document{{"replSetGetConfig", V(int32_t{1})}});
  const bson::Value* config = reply ? reply->get("config") : nullptr;
  if (config == nullptr || !config->is_document()) return std::nullopt;
  const bson::Value* settings = config->as_document().get("settings");
  if (settings == nullptr || !settings->is_document()) return std::nullopt;
  const bson::Value* id = settings->as_document().get("replicaSetId");
  if (id == nullptr || id->type() != bson::Type::kObjectId) return std::nullopt;
  return id->as_object_id();
}

// The options of a set whose members keep their data on dbpaths (kill + restart keep it), with
// a 1.5 s election timeout; `settings` adds replica-set settings.
inline locklab::testkit::SetOptions durable_set(
    int members, nlohmann::json settings = nlohmann::json::object()) {
  return {.members = members,
          .dbpaths = true,
          .election_timeout_ms = 1500,
          .settings = std::move(settings),
          .ready_timeout = kDurableConvergeTimeout};
}

// The BSON documents of a file written as concatenated documents (a rollback file).
std::vector<Document> read_bson_file(const std::string& path);

class SimSet : public locklab::testkit::ReplicaSet {
 public:
  using ReplicaSet::ReplicaSet;

  std::optional<Document> command(int i, const Document& cmd,
                                  const std::string& db = "admin") const {
    return testing::command(member(i), cmd, db);
  }

  // hello of member i; nullopt when it is not running, paused, or does not answer.
  std::optional<Document> hello(int i) const {
    return command(i, Document{{"hello", V(int32_t{1})}});
  }
  // Inserts one document into db.c; the reply (nullopt if the member did not answer).
  std::optional<Document> insert(int i, const Document& doc, const Document& write_concern) const;
  // Polls (kDurableConvergeTimeout) until the agreed primary acknowledges a fresh document
  // under w:"majority"; returns that primary, or -1 with the last reply in `last`.
  int wait_for_majority_write(std::optional<Document>* last = nullptr) const;
  // The _ids in db.c on member i (any state); nullopt if it did not answer.
  std::optional<std::vector<std::string>> ids(int i) const;
  // "PRIMARY", "SECONDARY", "OTHER", or "" when it does not answer.
  std::string state(int i) const;
  // Whether member i's own data holds a document with this _id in db.coll.
  bool has_document(int i, const std::string& db, const std::string& coll,
                    const bson::Value& id) const;
  // The member's term from replSetGetStatus, or -1.
  int64_t term(int i) const;
};

// configureFailPoint on member i; returns the fail point's activation count before the call
// (throws when the member does not answer ok).
int64_t fail_point(SimSet& set, int i, const std::string& name, bson::Value mode,
                   Document data = {});
// Stops member i's oplog fetcher (stopReplProducer) and returns once no fetch it sent earlier can
// still be in flight: the fetcher is sequential, so one pass through the fail point after it was
// set proves it. The member stays up and keeps heartbeating (a primary keeps its majority), it
// only stops replicating: unlike a pause, no election timer runs out because of it.
void stop_fetcher(SimSet& set, int i);

}  // namespace mongosim::testing
