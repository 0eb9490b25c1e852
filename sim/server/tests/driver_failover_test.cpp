// libmongoc (the C driver mongolock uses) across a step-down of a three-member set, the scenario
// of sim/fidelity/failover_node.js: the driver writes through ?replicaSet=<the set>; with one
// secondary paused an insert with w:3 is applied on the primary and waits; replSetStepDown on an
// admin connection fails that wait with writeConcernError 189 + RetryableWriteError
// (docs/mongodb-behaviour.md, Step-down commands); after the secondary resumes the driver retries
// the insert exactly once, on the new primary, which has it already (same lsid/txnNumber) and does
// not insert it twice. Shown by command monitoring, each member's serverStatus insert counter and a
// document count.
#include <gtest/gtest.h>
#include <mongoc/mongoc.h>

#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "base/error_codes.h"
#include "bson/codec.h"
#include "bson_owner.h"
#include "server/tests/mongoc_view.h"
#include "server/tests/raw_client.h"
#include "server/tests/sim_set.h"

namespace mongosim::testing {
namespace {

using bson::Document;
using OwnedBson = mongolock::bson::Bson;
using BsonReply = mongolock::bson::BsonReply;
using bson::V;

// Every attempt of the insert of {_id: "across"}: the server it went to and its reply.
struct Attempts {
  struct Attempt {
    int64_t request_id;
    std::string host;
    std::string lsid_and_txn;  // the retry must repeat both
    std::optional<Document> reply;
  };
  std::mutex mu;
  std::vector<Attempt> list;

  static void started(const mongoc_apm_command_started_t* event) {
    auto* self = static_cast<Attempts*>(mongoc_apm_command_started_get_context(event));
    if (std::string(mongoc_apm_command_started_get_command_name(event)) != "insert") return;
    Document cmd = to_document(mongoc_apm_command_started_get_command(event));
    const bson::Value* docs = cmd.get("documents");
    if (docs == nullptr || docs->as_array().empty() ||
        bson::to_json(*docs->as_array()[0].as_document().get("_id")) != "\"across\"") {
      return;
    }
    std::string session = bson::to_json(*cmd.get("lsid")) + bson::to_json(*cmd.get("txnNumber"));
    std::lock_guard lock(self->mu);
    self->list.push_back({mongoc_apm_command_started_get_request_id(event),
                          mongoc_apm_command_started_get_host(event)->host_and_port, session,
                          std::nullopt});
  }

  static void succeeded(const mongoc_apm_command_succeeded_t* event) {
    auto* self = static_cast<Attempts*>(mongoc_apm_command_succeeded_get_context(event));
    self->record(mongoc_apm_command_succeeded_get_request_id(event),
                 mongoc_apm_command_succeeded_get_reply(event));
  }

  static void failed(const mongoc_apm_command_failed_t* event) {
    auto* self = static_cast<Attempts*>(mongoc_apm_command_failed_get_context(event));
    self->record(mongoc_apm_command_failed_get_request_id(event),
                 mongoc_apm_command_failed_get_reply(event));
  }

  void record(int64_t request_id, const bson_t* reply) {
    std::lock_guard lock(mu);
    for (auto& a : list) {
      if (a.request_id == request_id) a.reply = to_document(reply);
    }
  }
};

int64_t insert_total(const SimSet& set, int i) {
  auto status = set.command(i, Document{{"serverStatus", V(int32_t{1})}});
  if (!status) throw std::runtime_error("no serverStatus from member " + std::to_string(i));
  const bson::Value* insert =
      status->get("metrics")->as_document().get("commands")->as_document().get("insert");
  return insert == nullptr ? 0 : insert->as_document().get("total")->as_int64();
}

bool holds(const SimSet& set, int i, const std::string& id) {
  return set.has_document(i, "failover", "items", V(id));
}

// Inserts {_id: id} with the given write concern; returns the driver's error message or "".
std::string insert_one(mongoc_collection_t* coll, const char* id,
                       const OwnedBson& write_concern_opts) {
  const OwnedBson doc(BCON_NEW("_id", BCON_UTF8(id)));
  bson_error_t error;
  bool ok =
      mongoc_collection_insert_one(coll, doc.get(), write_concern_opts.get(), nullptr, &error);
  return ok ? std::string() : std::string(error.message);
}

TEST(DriverFailover, LibmongocFollowsAStepDownAndRetriesTheInterruptedInsertOnce) {
  SimSet set({.members = 3});
  // Declared before the client: the client's destructor still reports commands (endSessions)
  // to the APM callbacks, which write into `attempts`.
  Attempts attempts;
  // serverSelectionTryOnce=false: the retry's server selection waits for the new primary. With
  // a single-threaded client's default (one scan) a retry that comes before the election ends
  // finds no primary and the driver returns the first error (a slow, sanitized run hit that).
  Client client(mongoc_client_new(set.uri("appname=failover-libmongoc&serverSelectionTryOnce=false&"
                                          "serverSelectionTimeoutMS=30000")
                                      .c_str()));
  ASSERT_TRUE(client);
  mongoc_apm_callbacks_t* callbacks = mongoc_apm_callbacks_new();
  mongoc_apm_set_command_started_cb(callbacks, Attempts::started);
  mongoc_apm_set_command_succeeded_cb(callbacks, Attempts::succeeded);
  mongoc_apm_set_command_failed_cb(callbacks, Attempts::failed);
  mongoc_client_set_apm_callbacks(client.get(), callbacks, &attempts);
  mongoc_apm_callbacks_destroy(callbacks);
  Collection coll(mongoc_client_get_collection(client.get(), "failover", "items"));
  const OwnedBson majority(BCON_NEW("writeConcern", "{", "w", BCON_UTF8("majority"), "}"));
  const OwnedBson w3(BCON_NEW("writeConcern", "{", "w", BCON_INT32(3), "}"));

  ASSERT_EQ(insert_one(coll.get(), "before", majority), "") << set.logs();
  int old_primary = set.primary();
  ASSERT_GE(old_primary, 0);
  int paused = (old_primary + 2) % set.size();
  std::vector<int64_t> before;
  for (int i = 0; i < set.size(); ++i) before.push_back(insert_total(set, i));
  set.pause(paused);
  auto across =
      std::async(std::launch::async, [&] { return insert_one(coll.get(), "across", w3); });
  ASSERT_TRUE(
      poll_until(after(kConvergeTimeout), [&] { return holds(set, old_primary, "across"); }));
  auto step_down =
      set.command(old_primary, Document{{"replSetStepDown", V(int32_t{30})},
                                        {"secondaryCatchUpPeriodSecs", V(int32_t{10})}});
  ASSERT_TRUE(step_down);
  EXPECT_TRUE(is_ok(*step_down)) << bson::to_json(*step_down);
  set.resume(paused);
  EXPECT_EQ(across.get(), "") << set.logs();

  int new_primary = set.wait_for_primary(after(kConvergeTimeout), old_primary);
  ASSERT_GE(new_primary, 0) << set.logs();
  {
    std::lock_guard lock(attempts.mu);
    ASSERT_EQ(attempts.list.size(), 2u);
    EXPECT_EQ(attempts.list[0].host, set.member(old_primary).host());
    EXPECT_EQ(attempts.list[1].host, set.member(new_primary).host());
    EXPECT_EQ(attempts.list[0].lsid_and_txn, attempts.list[1].lsid_and_txn);
    ASSERT_TRUE(attempts.list[0].reply);
    const Document& first = *attempts.list[0].reply;
    ASSERT_TRUE(first.has("writeConcernError")) << bson::to_json(first);
    EXPECT_EQ(first.get("writeConcernError")->as_document().get("code")->number_as_double(),
              code::kPrimarySteppedDown);
  }
  std::vector<int64_t> delta;
  for (int i = 0; i < set.size(); ++i)
    delta.push_back(insert_total(set, i) - before[static_cast<size_t>(i)]);
  EXPECT_EQ(delta[static_cast<size_t>(old_primary)], 1);
  EXPECT_EQ(delta[static_cast<size_t>(new_primary)], 1);
  EXPECT_EQ(delta[0] + delta[1] + delta[2], 2);

  // The driver follows the new primary, and the retried insert exists once.
  ASSERT_EQ(insert_one(coll.get(), "after", majority), "") << set.logs();
  EXPECT_TRUE(holds(set, new_primary, "after"));
  const OwnedBson filter(BCON_NEW("_id", BCON_UTF8("across")));
  bson_error_t error;
  EXPECT_EQ(mongoc_collection_count_documents(coll.get(), filter.get(), nullptr, nullptr, nullptr,
                                              &error),
            1)
      << error.message;
}

}  // namespace
}  // namespace mongosim::testing
