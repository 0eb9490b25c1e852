// Read concern (docs/mongodb-behaviour.md, Read concern) against the real mongosim binary over raw
// OP_MSG: validation errors with mongod's codes, afterClusterTime waits, and linearizable reads on
// one member.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "base/error_codes.h"
#include "bson/codec.h"
#include "server/tests/raw_client.h"
#include "server/tests/sim_set.h"

namespace mongosim::testing {
namespace {

using bson::Document;
using bson::V;

constexpr auto kPrimaryDeadline = std::chrono::seconds(20);

int32_t code_of(const Document& reply) {
  const bson::Value* code = reply.get("code");
  return code == nullptr ? 0 : static_cast<int32_t>(code->number_as_double());
}

bool ok(const Document& reply) {
  return reply.get("ok")->truthy();
}

Document find_with(const Document& read_concern) {
  return Document{{"find", V("c")}, {"filter", V(Document{})}, {"readConcern", V(read_concern)}};
}

size_t first_batch_size(const Document& reply) {
  return reply.get("cursor")->as_document().get("firstBatch")->as_array().size();
}

class StandaloneReadConcern : public ::testing::Test {
 protected:
  MongosimNode server_;
  RawClient raw_{server_.port()};
};

TEST_F(StandaloneReadConcern, LocalAndMajorityReadsAnswer) {
  ASSERT_TRUE(ok(raw_.command(
      Document{{"insert", V("c")}, {"documents", V(bson::Array{V(Document{{"_id", V(1)}})})}},
      "db")));
  for (const char* level : {"local", "available", "majority"}) {
    Document reply = raw_.command(find_with(Document{{"level", V(level)}}), "db");
    ASSERT_TRUE(ok(reply)) << level << ": " << bson::to_json(reply);
    EXPECT_EQ(first_batch_size(reply), 1u) << level;
  }
}

TEST_F(StandaloneReadConcern, MalformedReadConcernsAreRefusedWithMongodCodes) {
  struct Case {
    Document command;
    int32_t code;
    const char* names;  // a fragment the errmsg must contain
  };
  const Case cases[] = {
      {Document{{"find", V("c")}, {"readConcern", V(1)}}, code::kTypeMismatch, "readConcern"},
      {find_with(Document{{"level", V(2)}}), code::kTypeMismatch, "readConcern.level"},
      {find_with(Document{{"level", V("strong")}}), code::kBadValue, "strong"},
      {find_with(Document{{"levle", V("local")}}), code::kUnknownField, "readConcern.levle"},
      {find_with(Document{{"afterClusterTime", V(5)}}), code::kTypeMismatch, "afterClusterTime"},
      // A standalone has no cluster time to wait for.
      {find_with(Document{{"afterClusterTime", bson::Value::timestamp({1, 1})}}),
       code::kInvalidOptions, "replication"},
      // Writes outside transactions take no read concern but local.
      {Document{{"insert", V("c")},
                {"documents", V(bson::Array{V(Document{{"_id", V(2)}})})},
                {"readConcern", V(Document{{"level", V("majority")}})}},
       code::kInvalidOptions, "insert"},
      {Document{{"find", V("c")}, {"maxTimeMS", V(-1)}}, code::kBadValue, "maxTimeMS"},
  };
  for (const Case& c : cases) {
    Document reply = raw_.command(c.command, "db");
    EXPECT_FALSE(ok(reply)) << bson::to_json(c.command);
    EXPECT_EQ(code_of(reply), c.code) << bson::to_json(reply);
    EXPECT_NE(reply.get("errmsg")->as_string().find(c.names), std::string::npos)
        << bson::to_json(reply);
  }
  // Nothing was written by the refused insert.
  Document count = raw_.command(Document{{"count", V("c")}}, "db");
  EXPECT_EQ(count.get("n")->number_as_double(), 0);
}

// A one-member set of the kit's, initiated and ready (the kit's wait).
class OneMemberSetReadConcern : public ::testing::Test {
 protected:
  bson::Timestamp insert_one(int id) {
    Document reply = raw_.command(
        Document{{"insert", V("c")}, {"documents", V(bson::Array{V(Document{{"_id", V(id)}})})}},
        "db");
    EXPECT_TRUE(ok(reply)) << bson::to_json(reply);
    return reply.get("operationTime")->as_timestamp();
  }

  SimSet set_{{.members = 1,
               .election_timeout_ms = 0,  // the server's own timers
               .heartbeat_interval_ms = 0,
               .ready_timeout = kPrimaryDeadline}};
  RawClient raw_{set_.member(0).port()};
};

TEST_F(OneMemberSetReadConcern, AfterClusterTimeOfAWriteSeesTheWrite) {
  bson::Timestamp written = insert_one(1);
  for (const char* level : {"local", "majority", "snapshot"}) {
    Document reply =
        raw_.command(find_with(Document{{"level", V(level)},
                                        {"afterClusterTime", bson::Value::timestamp(written)}}),
                     "db");
    ASSERT_TRUE(ok(reply)) << level << ": " << bson::to_json(reply);
    EXPECT_EQ(first_batch_size(reply), 1u) << level;
  }
}

TEST_F(OneMemberSetReadConcern, AfterClusterTimeInTheFutureTimesOutWithMaxTimeMS) {
  bson::Timestamp written = insert_one(1);
  bson::Timestamp future{written.seconds + 3600, 1};
  Document command = find_with(Document{{"afterClusterTime", bson::Value::timestamp(future)}});
  command.append("maxTimeMS", V(100));
  Document reply = raw_.command(command, "db");
  EXPECT_FALSE(ok(reply));
  EXPECT_EQ(code_of(reply), code::kMaxTimeMSExpired) << bson::to_json(reply);
}

// The write is sent only once serverStatus shows the reader waiting for its afterClusterTime
// (mongosim.readConcernWaiters), so the read has waited when it answers; a server that does not
// wait never shows a waiter and the test fails at the poll. Left out: a read concern wait ended by
// maxTimeMS or shutdown (AfterClusterTimeInTheFutureTimesOutWithMaxTimeMS).
TEST_F(OneMemberSetReadConcern, AfterClusterTimeWaitEndsWhenALaterWriteArrives) {
  bson::Timestamp written = insert_one(1);
  // The next write's optime is the first one after `written` (same second, next increment, or
  // a later second): a read waiting for {written.seconds, written.increment + 1} is released by it.
  bson::Timestamp next{written.seconds, written.increment + 1};
  auto waiters = [this] {
    Document status = raw_.command(Document{{"serverStatus", V(1)}}, "admin");
    return status.get("mongosim")->as_document().get("readConcernWaiters")->as_int64();
  };
  ASSERT_EQ(waiters(), 0);
  Document reply_holder;
  std::thread reader([&] {
    RawClient other(set_.member(0).port());
    reply_holder = other.command(
        find_with(Document{{"afterClusterTime", bson::Value::timestamp(next)}}), "db");
  });
  const bool waiting = poll_until(after(std::chrono::seconds(20)), [&] { return waiters() == 1; });
  EXPECT_TRUE(waiting) << "the reader never waited for its afterClusterTime";
  insert_one(2);
  reader.join();
  ASSERT_TRUE(ok(reply_holder)) << bson::to_json(reply_holder);
  EXPECT_EQ(first_batch_size(reply_holder), 2u);
  EXPECT_EQ(waiters(), 0);
}

TEST_F(OneMemberSetReadConcern, LinearizableReadOnTheOnlyMemberAnswers) {
  insert_one(1);
  Document reply = raw_.command(find_with(Document{{"level", V("linearizable")}}), "db");
  ASSERT_TRUE(ok(reply)) << bson::to_json(reply);
  EXPECT_EQ(first_batch_size(reply), 1u);
  Document refused =
      raw_.command(find_with(Document{{"level", V("linearizable")},
                                      {"afterClusterTime", bson::Value::timestamp({1, 1})}}),
                   "db");
  EXPECT_EQ(code_of(refused), code::kInvalidOptions) << bson::to_json(refused);
}

// With both secondaries' replication stopped, the primary's fresh w:1 writes are visible to local
// reads but not to majority reads, which show the state at the commit point
// (docs/mongodb-behaviour.md, Read concern); once the secondaries catch up the majority read shows
// them. A linearizable read cannot be served: its no-op never reaches a majority, and it times out.
// The secondaries' fetchers are stopped, not the members paused: the primary keeps hearing a
// majority, so no step-down races the writes and reads (with paused secondaries it stepped down an
// election timeout later, which a TSan run reached inside the linearizable read, and a slower run
// could reach before the writes).
TEST(ThreeMemberSetReadConcern, MajorityReadsShowTheCommittedStateOnly) {
  SimSet set({.members = 3});
  const int p = set.primary();
  ASSERT_GE(p, 0);
  const Document rp{{"mode", V("primaryPreferred")}};  // still answered if it steps down
  auto run = [&](Document cmd) {
    cmd.append("$readPreference", V(rp));
    auto reply = set.command(p, cmd, "db");
    if (!reply) throw std::runtime_error("no reply from the primary");
    return *reply;
  };
  auto ids_read_with = [&](const char* level) {
    Document reply = run(find_with(Document{{"level", V(level)}}));
    if (!ok(reply)) throw std::runtime_error(bson::to_json(reply));
    std::string ids;
    for (const auto& d : reply.get("cursor")->as_document().get("firstBatch")->as_array()) {
      const bson::Value* x = d.as_document().get("x");
      ids += std::to_string(d.as_document().get("_id")->as_int32()) + ":" +
             (x ? std::to_string(x->as_int32()) : "-") + " ";
    }
    return ids;
  };
  Document majority_wc{{"w", V("majority")}};
  ASSERT_TRUE(ok(run(Document{
      {"insert", V("c")},
      {"documents", V(bson::Array{V(Document{{"_id", V(1)}}), V(Document{{"_id", V(3)}})})},
      {"writeConcern", V(majority_wc)}})));
  for (int i = 0; i < 3; ++i) {
    if (i != p) stop_fetcher(set, i);
  }
  Document w1{{"w", V(1)}};
  ASSERT_TRUE(ok(run(Document{{"insert", V("c")},
                              {"documents", V(bson::Array{V(Document{{"_id", V(2)}})})},
                              {"writeConcern", V(w1)}})));
  ASSERT_TRUE(ok(run(Document{
      {"update", V("c")},
      {"updates",
       V(bson::Array{V(Document{{"q", V(Document{{"_id", V(1)}})},
                                {"u", V(Document{{"$set", V(Document{{"x", V(7)}})}})}})})},
      {"writeConcern", V(w1)}})));
  ASSERT_TRUE(ok(run(Document{
      {"delete", V("c")},
      {"deletes", V(bson::Array{V(Document{{"q", V(Document{{"_id", V(3)}})}, {"limit", V(1)}})})},
      {"writeConcern", V(w1)}})));

  EXPECT_EQ(ids_read_with("local"), "1:7 2:- ");
  EXPECT_EQ(ids_read_with("majority"), "1:- 3:- ");
  EXPECT_EQ(ids_read_with("snapshot"), "1:- 3:- ");
  Document count =
      run(Document{{"count", V("c")}, {"readConcern", V(Document{{"level", V("majority")}})}});
  EXPECT_EQ(count.get("n")->number_as_double(), 2) << bson::to_json(count);
  Document linearizable = find_with(Document{{"level", V("linearizable")}});
  linearizable.append("maxTimeMS", V(300));
  Document refused = run(linearizable);
  EXPECT_FALSE(ok(refused));
  EXPECT_EQ(code_of(refused), code::kMaxTimeMSExpired) << bson::to_json(refused);

  for (int i = 0; i < 3; ++i) {
    if (i != p) fail_point(set, i, "stopReplProducer", V("off"));
  }
  EXPECT_TRUE(
      poll_until(after(kConvergeTimeout), [&] { return ids_read_with("majority") == "1:7 2:- "; }))
      << ids_read_with("majority") << "\n"
      << set.logs();
}

}  // namespace
}  // namespace mongosim::testing
