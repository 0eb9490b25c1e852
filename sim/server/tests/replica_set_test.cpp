// Integration tests for multi-member replica sets: three real mongosim processes on 127.0.0.1
// forming a set over TCP, observed through hello on every member and through libmongoc with a
// replicaSet URI.
#include <gtest/gtest.h>
#include <mongoc/mongoc.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/error_codes.h"
#include "bson/codec.h"
#include "bson_owner.h"
#include "server/replication_fields.h"
#include "server/tests/mongoc_view.h"
#include "server/tests/raw_client.h"
#include "server/tests/sim_set.h"

namespace mongosim::testing {
namespace {

using bson::Document;
using OwnedBson = mongolock::bson::Bson;
using BsonReply = mongolock::bson::BsonReply;
using bson::V;

constexpr int kMembers = 3;
// Short protocol timers keep elections quick; the waits below are deadlines, not assertions.
constexpr int32_t kElectionTimeoutMs = 1000;
constexpr int32_t kHeartbeatIntervalMs = 200;

std::optional<Document> try_command(int port, const Document& cmd,
                                    const std::string& db = "admin") {
  try {
    RawClient raw(port);
    return raw.command(cmd, db);
  } catch (const std::exception&) {
    return std::nullopt;  // a killed or starting member
  }
}

bool is_ok(const Document& reply) {
  return reply.get("ok") != nullptr && reply.get("ok")->truthy();
}

class ThreeMemberSet : public ::testing::Test {
 protected:
  std::string seed_list() const { return set_.uri("serverSelectionTimeoutMS=20000"); }
  std::optional<Document> hello(int i) const { return set_.hello(i); }
  // The member every live member agrees is the writable primary, or -1.
  int primary_index() const { return set_.primary(); }
  std::string logs() const { return set_.logs(); }
  void kill_member(int i) { set_.kill(i); }

  SimSet set_{{.members = kMembers,
               .election_timeout_ms = kElectionTimeoutMs,
               .heartbeat_interval_ms = kHeartbeatIntervalMs}};
};

TEST_F(ThreeMemberSet, ElectsExactlyOnePrimaryAndHelloDescribesTheSet) {
  int primary = primary_index();
  ASSERT_GE(primary, 0);
  int primaries = 0;
  for (int i = 0; i < kMembers; ++i) {
    auto h = hello(i);
    ASSERT_TRUE(h);
    EXPECT_EQ(h->get("setName")->as_string(), set_.set_name());
    EXPECT_EQ(h->get("hosts")->as_array().size(), static_cast<size_t>(kMembers));
    EXPECT_EQ(h->get("me")->as_string(), set_.member(i).host());
    bool writable = h->get("isWritablePrimary")->truthy();
    primaries += writable ? 1 : 0;
    EXPECT_EQ(h->get("secondary")->truthy(), !writable) << "member " << i;
    EXPECT_EQ(h->has("electionId"), writable) << "member " << i;
  }
  EXPECT_EQ(primaries, 1);
  auto config =
      try_command(set_.member(primary).port(), Document{{"replSetGetConfig", V(int32_t{1})}});
  ASSERT_TRUE(config && is_ok(*config));
  // replSetGetStatus on the primary names every member's state as it sees it.
  ASSERT_TRUE(poll_until(after(kConvergeTimeout), [&] {
    auto status =
        try_command(set_.member(primary).port(), Document{{"replSetGetStatus", V(int32_t{1})}});
    if (!status || !is_ok(*status)) return false;
    int primaries_seen = 0;
    int secondaries_seen = 0;
    for (const auto& m : status->get("members")->as_array()) {
      std::string state = m.as_document().get("stateStr")->as_string();
      primaries_seen += state == "PRIMARY" ? 1 : 0;
      secondaries_seen += state == "SECONDARY" ? 1 : 0;
    }
    return primaries_seen == 1 && secondaries_seen == kMembers - 1;
  })) << logs();
}

TEST_F(ThreeMemberSet, EveryMemberShutsDownCleanlyOnSigterm) {
  for (int i = 0; i < kMembers; ++i) {
    const locklab::ExitStatus status = set_.member(i).stop();  // throws if it ignores SIGTERM
    EXPECT_EQ(status.signal, 0) << "member " << i << ": " << status.describe();
    EXPECT_EQ(status.code, 0) << "member " << i;
  }
}

TEST_F(ThreeMemberSet, DriverFindsPrimaryAndMajorityWriteReachesEveryMember) {
  Client client(mongoc_client_new(seed_list().c_str()));
  ASSERT_TRUE(client);
  std::string raw = bson::encode_document(Document{
      {"insert", V("c")},
      {"documents", V(bson::Array{V(Document{{"_id", V(int32_t{1})}, {"x", V("a")}})})},
      {"writeConcern", V(Document{{"w", V("majority")}, {"wtimeout", V(int32_t{20000})}})}});
  const OwnedBson cmd(bson_new_from_data(reinterpret_cast<const uint8_t*>(raw.data()), raw.size()));
  BsonReply reply;
  bson_error_t error;
  bool ok = mongoc_client_write_command_with_opts(client.get(), "test", cmd.get(), nullptr,
                                                  reply.out(), &error);
  Document r = to_document(reply.get());
  ASSERT_TRUE(ok) << error.message << " " << bson::to_json(r);
  EXPECT_FALSE(r.has("writeConcernError")) << bson::to_json(r);
  // The primary's hello now reports a commit point at or past the write.
  int primary = primary_index();
  ASSERT_GE(primary, 0);
  auto h = hello(primary);
  ASSERT_TRUE(h);
  ASSERT_TRUE(r.has("opTime")) << bson::to_json(r);
  bson::Timestamp written = r.get("opTime")->as_document().get("ts")->as_timestamp();
  bson::Timestamp majority = h->get("lastWrite")
                                 ->as_document()
                                 .get("majorityOpTime")
                                 ->as_document()
                                 .get("ts")
                                 ->as_timestamp();
  EXPECT_GE(majority, written);

  Document find{{"find", V("c")},
                {"filter", V(Document{{"_id", V(int32_t{1})}})},
                {"$readPreference", V(Document{{"mode", V("secondaryPreferred")}})}};
  for (int i = 0; i < kMembers; ++i) {
    bool seen = poll_until(after(kConvergeTimeout), [&] {
      auto f = try_command(set_.member(i).port(), find, "test");
      return f && is_ok(*f) &&
             f->get("cursor")->as_document().get("firstBatch")->as_array().size() == 1;
    });
    EXPECT_TRUE(seen) << "member " << i << " never showed the majority write";
  }
}

// A driver reading from a secondary sends $readPreference on the find only: the getMore and
// killCursors that follow carry none (libmongoc, pymongo). mongod runs both in any member state,
// as the cursor was opened by a read allowed there; mongosim once answered the getMore with
// NotPrimaryNoSecondaryOk (13435). Model: one connection to a secondary, raw commands.
TEST_F(ThreeMemberSet, GetMoreAndKillCursorsOnASecondaryNeedNoReadPreference) {
  const int primary = primary_index();
  ASSERT_GE(primary, 0);
  const int secondary = (primary + 1) % kMembers;
  bson::Array docs;
  for (int32_t i = 0; i < 5; ++i) docs.push_back(V(Document{{"_id", V(i)}}));
  auto inserted = try_command(set_.member(primary).port(),
                              Document{{"insert", V("cur")},
                                       {"documents", V(docs)},
                                       {"writeConcern", V(Document{{"w", V(int32_t{kMembers})}})}},
                              "test");
  ASSERT_TRUE(inserted && is_ok(*inserted)) << (inserted ? bson::to_json(*inserted) : "none");
  RawClient raw(set_.member(secondary).port());
  const Document find{{"find", V("cur")},
                      {"batchSize", V(int32_t{2})},
                      {"$readPreference", V(Document{{"mode", V("secondaryPreferred")}})}};
  const Document opened = raw.command(find, "test");
  ASSERT_TRUE(is_ok(opened)) << bson::to_json(opened);
  const int64_t cursor = opened.get("cursor")->as_document().get("id")->as_int64();
  ASSERT_NE(cursor, 0) << "5 documents in batches of 2 leave a cursor open";
  const Document more = raw.command(
      Document{{"getMore", V(cursor)}, {"collection", V("cur")}, {"batchSize", V(int32_t{2})}},
      "test");
  ASSERT_TRUE(is_ok(more)) << bson::to_json(more);
  EXPECT_EQ(more.get("cursor")->as_document().get("nextBatch")->as_array().size(), 2u);
  const Document killed = raw.command(
      Document{{"killCursors", V("cur")}, {"cursors", V(bson::Array{V(cursor)})}}, "test");
  ASSERT_TRUE(is_ok(killed)) << bson::to_json(killed);
  EXPECT_EQ(killed.get("cursorsKilled")->as_array().size(), 1u) << bson::to_json(killed);
  // A read that opens nothing still needs secondaryOk there.
  const Document plain = raw.command(Document{{"find", V("cur")}}, "test");
  EXPECT_FALSE(is_ok(plain));
  ASSERT_NE(plain.get("code"), nullptr) << bson::to_json(plain);
  EXPECT_EQ(plain.get("code")->as_int32(), code::kNotPrimaryNoSecondaryOk);
}

TEST_F(ThreeMemberSet, WriteConcernTimeoutReportsError64WithTheWriteApplied) {
  int primary = primary_index();
  ASSERT_GE(primary, 0);
  kill_member((primary + 1) % kMembers);
  auto reply = try_command(
      set_.member(primary).port(),
      Document{{"insert", V("c")},
               {"documents", V(bson::Array{V(Document{{"_id", V(int32_t{7})}})})},
               {"writeConcern", V(Document{{"w", V(int32_t{3})}, {"wtimeout", V(int32_t{300})}})}},
      "test");
  ASSERT_TRUE(reply);
  ASSERT_TRUE(is_ok(*reply)) << bson::to_json(*reply);
  EXPECT_EQ(reply->get("n")->number_as_double(), 1);
  const bson::Value* wce = reply->get("writeConcernError");
  ASSERT_NE(wce, nullptr) << bson::to_json(*reply);
  EXPECT_EQ(wce->as_document().get("code")->number_as_double(), code::kWriteConcernFailed);
}

TEST_F(ThreeMemberSet, KillingThePrimaryElectsAnotherAndARetryableWriteSucceeds) {
  Client client(mongoc_client_new((seed_list() + "&retryWrites=true").c_str()));
  ASSERT_TRUE(client);
  mongoc_collection_t* coll = mongoc_client_get_collection(client.get(), "test", "c");
  bson_error_t error;
  ASSERT_TRUE(mongoc_collection_insert_one(coll, OwnedBson(BCON_NEW("_id", BCON_INT32(1))).get(),
                                           nullptr, nullptr, &error))
      << error.message << "\n"
      << logs();

  int old_primary = primary_index();
  ASSERT_GE(old_primary, 0);
  kill_member(old_primary);
  int new_primary = -1;
  ASSERT_TRUE(poll_until(after(kConvergeTimeout), [&] {
    new_primary = primary_index();
    return new_primary >= 0;
  })) << "no new primary after the old one was killed";
  EXPECT_NE(new_primary, old_primary);

  bool inserted = mongoc_collection_insert_one(
      coll, OwnedBson(BCON_NEW("_id", BCON_INT32(2))).get(), nullptr, nullptr, &error);
  mongoc_collection_destroy(coll);
  EXPECT_TRUE(inserted) << error.message << "\n" << logs();
}

TEST_F(ThreeMemberSet, StepDownMovesThePrimary) {
  int old_primary = primary_index();
  ASSERT_GE(old_primary, 0);
  auto reply = try_command(set_.member(old_primary).port(),
                           Document{{"replSetStepDown", V(int32_t{30})},
                                    {"secondaryCatchUpPeriodSecs", V(int32_t{10})}});
  ASSERT_TRUE(reply);
  EXPECT_TRUE(is_ok(*reply)) << bson::to_json(*reply);
  int new_primary = -1;
  ASSERT_TRUE(poll_until(after(kConvergeTimeout), [&] {
    new_primary = primary_index();
    return new_primary >= 0 && new_primary != old_primary;
  }));
  auto h = hello(old_primary);
  ASSERT_TRUE(h);
  EXPECT_FALSE(h->get("isWritablePrimary")->truthy());
  // A secondary refuses to step down with NotWritablePrimary.
  auto refused =
      try_command(set_.member(old_primary).port(), Document{{"replSetStepDown", V(int32_t{30})}});
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->get("code")->number_as_double(), code::kNotWritablePrimary);
}

TEST_F(ThreeMemberSet, FreezeIsRefusedOnThePrimaryAndAcceptedOnASecondary) {
  int primary = primary_index();
  ASSERT_GE(primary, 0);
  int secondary = (primary + 1) % kMembers;
  auto refused =
      try_command(set_.member(primary).port(), Document{{"replSetFreeze", V(int32_t{30})}});
  ASSERT_TRUE(refused);
  EXPECT_FALSE(is_ok(*refused));
  EXPECT_EQ(refused->get("code")->number_as_double(), code::kNotSecondary);
  auto frozen =
      try_command(set_.member(secondary).port(), Document{{"replSetFreeze", V(int32_t{30})}});
  ASSERT_TRUE(frozen);
  EXPECT_TRUE(is_ok(*frozen)) << bson::to_json(*frozen);
}

// replSetStepUp runs one election, and mongod answers CommandFailed ("Election failed: ...")
// whenever that election cannot be won at that moment: the candidate does not see a majority
// (heartbeats late on a slow or loaded build), a voter holds a newer entry, the votes miss the
// election timeout. mongod does not promise that a step-up wins, so the test asks again after
// such an answer, as a client of mongod must; any other refusal fails it, and the candidate must
// end up the primary every member names. Model: one candidate, no concurrent writes; left out:
// how long the refusals last (bounded only by the convergence deadline).
TEST_F(ThreeMemberSet, StepUpOnASecondaryMakesItThePrimary) {
  int old_primary = primary_index();
  ASSERT_GE(old_primary, 0);
  int candidate = (old_primary + 1) % kMembers;
  // The candidate wins only with an up-to-date log: it asks once it has the primary's newest
  // entry.
  auto last_write = [&](int i) {
    auto h = hello(i);
    return h ? bson::to_json(*h->get("lastWrite")->as_document().get("opTime")) : std::string();
  };
  // Asked again until the deadline, however many refusals: a loaded build can keep the
  // candidate from seeing a majority for seconds, and a count of tries would be a timing
  // assumption of its own.
  int step_ups = 0;
  bool answered_ok = false;
  const bool became_primary = poll_until(after(kConvergeTimeout), [&] {
    const int primary = primary_index();
    if (primary == candidate) return true;
    if (primary < 0) return false;
    const std::string primary_optime = last_write(primary);
    if (primary_optime.empty() || last_write(candidate) != primary_optime) return false;
    auto reply =
        try_command(set_.member(candidate).port(), Document{{"replSetStepUp", V(int32_t{1})}});
    if (!reply) return false;
    ++step_ups;
    if (is_ok(*reply)) {
      answered_ok = true;
      return false;  // the next rounds wait for every member to name it
    }
    const bson::Value* code = reply->get("code");
    EXPECT_TRUE(code != nullptr && code->number_as_double() == code::kCommandFailed)
        << "a refusal mongod does not give: " << bson::to_json(*reply);
    return false;
  });
  EXPECT_TRUE(answered_ok) << step_ups << " replSetStepUp answered, none ok\n" << logs();
  EXPECT_TRUE(became_primary) << "primary is " << primary_index() << " after " << step_ups
                              << " replSetStepUp\n"
                              << logs();
}

TEST(OneMemberSet, StepDownAndFreezeAreRefusedAsMongodRefusesThem) {
  MongosimNode server({.args = {"--replSet", "rs0"}});
  auto before = try_command(server.port(), Document{{"replSetFreeze", V(int32_t{10})}});
  ASSERT_TRUE(before);
  EXPECT_EQ(before->get("code")->number_as_double(), code::kNotYetInitialized);
  Document member{{"_id", V(int32_t{0})}, {"host", V(server.host())}};
  auto init = try_command(
      server.port(),
      Document{{"replSetInitiate",
                V(Document{{"_id", V("rs0")}, {"members", V(bson::Array{V(member)})}})}});
  ASSERT_TRUE(init && is_ok(*init));
  auto step_down = try_command(server.port(), Document{{"replSetStepDown", V(int32_t{10})}});
  ASSERT_TRUE(step_down);
  EXPECT_EQ(step_down->get("code")->number_as_double(), code::kExceededTimeLimit);
  auto freeze = try_command(server.port(), Document{{"replSetFreeze", V(int32_t{10})}});
  ASSERT_TRUE(freeze);
  EXPECT_EQ(freeze->get("code")->number_as_double(), code::kNotSecondary);
  auto h = try_command(server.port(), Document{{"hello", V(int32_t{1})}});
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->get("isWritablePrimary")->truthy());
}

// replSetFetchOplog with maxAwaitMs, as a secondary's fetcher sends it: on a source with nothing
// after `after`, the fetch waits (the server counts it in oplogFetchesWaiting) and answers with
// the next write once it is made, instead of answering empty at once and leaving the fetcher to
// poll. With nothing written it answers empty when the wait runs out; a bad maxAwaitMs is refused
// naming it. The secondaries' own fetchers are stopped (stopReplProducer) so the only fetch
// waiting on the primary is the test's, and the test writes only once it is known to be waiting.
// What it omits: a source that steps down or rolls back while a fetch waits (the fetcher
// re-validates every batch; ReplState tests), and the secondary's loop itself (every replica-set
// test runs it).
TEST_F(ThreeMemberSet, OplogFetchWaitsForTheNextWrite) {
  const int p = set_.wait_for_majority_write();
  ASSERT_GE(p, 0) << logs();
  for (int i = 0; i < kMembers; ++i) {
    if (i != p) fail_point(set_, i, "stopReplProducer", V("alwaysOn"));
  }
  const auto fetches_waiting = [&] {
    const std::optional<Document> status = set_.command(p, Document{{"serverStatus", V(1)}});
    if (!status) return int64_t{-1};
    return status->get("mongosim")->as_document().get("oplogFetchesWaiting")->as_int64();
  };
  // The secondaries' last fetches end within their wait.
  ASSERT_TRUE(poll_until(after(std::chrono::seconds(10)), [&] { return fetches_waiting() == 0; }));
  const Document w1{{"w", V(int32_t{1})}};
  const std::optional<Document> first = set_.insert(p, Document{{"_id", V("first")}}, w1);
  ASSERT_TRUE(write_ok(first)) << show(first);
  ASSERT_NE(first->get("opTime"), nullptr) << show(first);
  const auto fetch = [&](const bson::Value& from, bson::Value max_await_ms) {
    return set_.command(p, Document{{"replSetFetchOplog", V(int32_t{1})},
                                    {"after", from},
                                    {"limit", V(int64_t{10})},
                                    {"maxAwaitMs", std::move(max_await_ms)}});
  };

  std::optional<Document> waited;
  std::thread fetcher([&] { waited = fetch(*first->get("opTime"), V(int64_t{8'000})); });
  const bool seen_waiting =
      poll_until(after(std::chrono::seconds(8)), [&] { return fetches_waiting() == 1; });
  const std::optional<Document> second = set_.insert(p, Document{{"_id", V("second")}}, w1);
  fetcher.join();
  ASSERT_TRUE(seen_waiting) << "the fetch never waited: " << show(waited);
  ASSERT_TRUE(write_ok(second)) << show(second);
  ASSERT_TRUE(reply_is_ok(waited)) << show(waited);
  EXPECT_TRUE(waited->get("found")->truthy());
  const bson::Array& entries = waited->get("entries")->as_array();
  ASSERT_EQ(entries.size(), 1u) << show(waited);
  const Document& entry = entries[0].as_document();
  EXPECT_EQ(entry.get("op")->as_string(), "i") << show(waited);
  EXPECT_EQ(entry.get("o")->as_document().get("_id")->as_string(), "second") << show(waited);
  EXPECT_EQ(fetches_waiting(), 0);

  // From "second" there is nothing new: the wait runs out and the answer is empty.
  const std::optional<Document> idle = fetch(*second->get("opTime"), V(int32_t{1}));
  ASSERT_TRUE(reply_is_ok(idle)) << show(idle);
  EXPECT_TRUE(idle->get("found")->truthy());
  EXPECT_TRUE(idle->get("entries")->as_array().empty()) << show(idle);

  // A fetcher that knows an older commit point than the source's is answered at once (empty,
  // with the newer lastCommittedOpTime): the fetch is never counted as waiting. The source's
  // commit point is at least "first"'s majority write; the fetcher claims term 0.
  std::optional<Document> told;
  std::atomic<bool> behind_done = false;  // set after `told`: the thread's only handoff
  std::thread behind([&] {
    told = set_.command(
        p, Document{{"replSetFetchOplog", V(int32_t{1})},
                    {"after", *second->get("opTime")},
                    {"maxAwaitMs", V(int64_t{8'000})},
                    {"lastKnownCommittedOpTime",
                     V(Document{{"ts", bson::Value::timestamp({1, 1})}, {"t", V(int64_t{0})}})}});
    behind_done = true;
  });
  bool held = false;
  poll_until(after(std::chrono::seconds(8)), [&] {
    held = held || fetches_waiting() == 1;
    return held || behind_done.load();
  });
  if (held) set_.insert(p, Document{{"_id", V("release")}}, w1);  // lets the held fetch end
  behind.join();
  EXPECT_FALSE(held) << "the fetch waited although its commit point was behind the source's";
  ASSERT_TRUE(reply_is_ok(told)) << show(told);
  if (!held) {
    EXPECT_TRUE(told->get("entries")->as_array().empty()) << show(told);
  }
  const bson::Value* committed = told->get("lastCommittedOpTime");
  ASSERT_NE(committed, nullptr) << show(told);
  EXPECT_GE(committed->as_document().get("t")->number_as_double(), 1) << show(told);

  for (const bson::Value& bad : {V(int64_t{-1}), V("soon")}) {
    const std::optional<Document> refused = fetch(*second->get("opTime"), bad);
    ASSERT_TRUE(refused) << bson::to_json(Document{{"maxAwaitMs", bad}});
    EXPECT_FALSE(is_ok(*refused)) << show(refused);
    EXPECT_EQ(refused->get("code")->number_as_double(), code::kBadValue) << show(refused);
    EXPECT_NE(refused->get("errmsg")->as_string().find("maxAwaitMs"), std::string::npos)
        << show(refused);
  }
  const std::optional<Document> bad_known =
      set_.command(p, Document{{"replSetFetchOplog", V(int32_t{1})},
                               {"after", *second->get("opTime")},
                               {"lastKnownCommittedOpTime", V("yesterday")}});
  ASSERT_TRUE(bad_known);
  EXPECT_EQ(bad_known->get("code")->number_as_double(), code::kBadValue) << show(bad_known);
  EXPECT_NE(bad_known->get("errmsg")->as_string().find("lastKnownCommittedOpTime"),
            std::string::npos)
      << show(bad_known);
  for (int i = 0; i < kMembers; ++i) {
    if (i != p) fail_point(set_, i, "stopReplProducer", V("off"));
  }
}

// Two sets of one name on one host: a member of set A is killed and a set B of the same name
// (three members in its config, only itself voting) starts on its port, as any test, or any
// deployment, may take a port just freed. A's primary must not count B's answers as its lost
// member's: a w:3 write on A with one of its three members dead can only time out. mongod tells
// the sets apart by the replicaSetId replSetInitiate puts in the config and heartbeat answers
// carry; B also refuses a position report carrying A's id (93), and a garbled id (2).
// What it omits: A's own check of an answer's id end to end (B refuses A's heartbeats before it
// answers; ReplTopology.HeartbeatFromAnotherSetOfTheSameNameIsIgnored covers it), B staying
// uninitialised (it would join A from A's heartbeat, as a member being added does: only unique
// set names prevent that), and drivers: a driver's monitor that reaches B on that port sees a
// primary of the set's name (hello carries no replicaSetId), as it would with mongod.
TEST_F(ThreeMemberSet, AMemberOfAnotherSetOfTheSameNameIsNotCountedAsOurs) {
  const int p = primary_index();
  ASSERT_GE(p, 0);
  const int lost = (p + 1) % kMembers;
  const int lost_port = set_.member(lost).port();
  kill_member(lost);
  // Three members like A's, so it answers heartbeats from any of A's member indexes; the two it
  // never reaches have no vote, so it elects itself.
  auto b_config = [&](const std::string& host) {
    bson::Array members{V(Document{{"_id", V(int32_t{0})}, {"host", V(host)}})};
    for (int32_t i = 1; i < kMembers; ++i) {
      members.push_back(V(Document{{"_id", V(i)},
                                   {"host", V("127.0.0.1:" + std::to_string(i))},
                                   {"votes", V(int32_t{0})},
                                   {"priority", V(int32_t{0})}}));
    }
    return Document{{"_id", V(set_.set_name())}, {"members", V(std::move(members))}};
  };
  // Between B's start and its initiate, a heartbeat of A (every 200 ms, carrying A's config) can
  // reach it first: B then joins A, as a member being added does, and its initiate is 23. That
  // start is thrown away and B started again (each try loses that race rarely).
  std::unique_ptr<MongosimNode> b;
  std::optional<Document> init;
  for (int attempt = 0; attempt < 5; ++attempt) {
    b = std::make_unique<MongosimNode>(
        locklab::testkit::NodeOptions{.args = {"--replSet", set_.set_name()}, .port = lost_port});
    init = try_command(b->port(), Document{{"replSetInitiate", V(b_config(b->host()))}});
    if (code_of(init) != code::kAlreadyInitialized) break;
    b.reset();
  }
  ASSERT_TRUE(b && init && is_ok(*init)) << show(init);
  MongosimNode& other = *b;
  // B writes until A's write is answered; B's answers would satisfy A's w:3 if counted once B's
  // newest optime is past A's write (asserted below: else the test would prove nothing).
  std::atomic<bool> writing{true};
  std::mutex b_mutex;
  OpTime b_newest;
  std::thread b_writes([&] {
    for (int32_t i = 0; writing.load(); ++i) {
      auto r = try_command(
          other.port(),
          Document{{"insert", V("c")}, {"documents", V(bson::Array{V(Document{{"_id", V(i)}})})}},
          "test");
      if (r && is_ok(*r) && r->get("opTime") != nullptr) {
        std::lock_guard lock(b_mutex);
        b_newest = std::max(b_newest, server::replication_fields::optime_field(*r, "opTime"));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // pacing, not a sync
    }
  });
  auto reply = try_command(
      set_.member(p).port(),
      Document{{"insert", V("c")},
               {"documents", V(bson::Array{V(Document{{"_id", V("a")}})})},
               {"writeConcern", V(Document{{"w", V(int32_t{3})}, {"wtimeout", V(int32_t{4000})}})}},
      "test");
  writing = false;
  b_writes.join();
  ASSERT_TRUE(reply);
  ASSERT_TRUE(is_ok(*reply)) << bson::to_json(*reply);
  ASSERT_NE(reply->get("opTime"), nullptr) << bson::to_json(*reply);
  {
    std::lock_guard lock(b_mutex);
    ASSERT_GT(b_newest, server::replication_fields::optime_field(*reply, "opTime"))
        << "B never wrote past A's write (A in a later term?): its answers could not satisfy w:3 "
           "even if counted";
  }
  const bson::Value* wce = reply->get("writeConcernError");
  ASSERT_NE(wce, nullptr) << "acknowledged at w:3 with a member dead: " << bson::to_json(*reply)
                          << "\n"
                          << logs();
  EXPECT_EQ(code_of(Document{wce->as_document()}), code::kWriteConcernFailed);

  // The two sets' ids; A's members send theirs (B refused A's heartbeats naming it) and answer
  // with it; B refuses what a member of A sends it, and a garbled id.
  const std::optional<bson::ObjectId> a_id = replica_set_id_of(set_.member(p));
  const std::optional<bson::ObjectId> b_id = replica_set_id_of(other);
  ASSERT_TRUE(a_id && b_id) << "replSetGetConfig shows no settings.replicaSetId";
  EXPECT_FALSE(*a_id == *b_id);
  const std::string mismatch = "ours: " + b_id->hex() + "; remote node's: " + a_id->hex();
  EXPECT_NE(other.log_text().find(mismatch), std::string::npos)
      << "B never refused a heartbeat carrying A's id:\n"
      << other.log_text();
  auto heartbeat =
      try_command(set_.member(p).port(), Document{{"replSetHeartbeat", V(set_.set_name())},
                                                  {"fromIndex", V(int32_t{lost})},
                                                  {"term", V(int64_t{0})},
                                                  {"configVersion", V(int64_t{1})},
                                                  {"replicaSetId", bson::Value::object_id(*a_id)}});
  ASSERT_TRUE(heartbeat && is_ok(*heartbeat)) << show(heartbeat);
  const bson::Value* answered_id = heartbeat->get("replicaSetId");
  ASSERT_TRUE(answered_id != nullptr && answered_id->type() == bson::Type::kObjectId)
      << "a heartbeat answer without the set's id: " << show(heartbeat);
  EXPECT_TRUE(answered_id->as_object_id() == *a_id) << show(heartbeat);
  auto report =
      try_command(other.port(), Document{{"replSetUpdatePosition", V(int32_t{1})},
                                         {"fromIndex", V(int32_t{1})},
                                         {"term", V(int64_t{1})},
                                         {"appliedOpTime", V(Document{})},
                                         {"durableOpTime", V(Document{})},
                                         {"replicaSetId", bson::Value::object_id(*a_id)}});
  EXPECT_EQ(code_of(report), code::kInvalidReplicaSetConfig) << show(report);
  EXPECT_NE(errmsg_of(report).find(mismatch), std::string::npos) << show(report);
  auto garbled = try_command(other.port(), Document{{"replSetHeartbeat", V(set_.set_name())},
                                                    {"fromIndex", V(int32_t{1})},
                                                    {"replicaSetId", V("not an id")}});
  EXPECT_EQ(code_of(garbled), code::kBadValue) << show(garbled);
  EXPECT_NE(errmsg_of(garbled).find("replicaSetId"), std::string::npos) << show(garbled);
}

TEST(OneMemberSet, InitiateGivesTheSetAnIdAndRefusesOneGivenToIt) {
  MongosimNode server({.args = {"--replSet", "rs0"}});
  Document member{{"_id", V(int32_t{0})}, {"host", V(server.host())}};
  auto given = try_command(
      server.port(),
      Document{{"replSetInitiate",
                V(Document{{"_id", V("rs0")},
                           {"members", V(bson::Array{V(member)})},
                           {"settings",
                            V(Document{{"replicaSetId",
                                        bson::Value::object_id(bson::ObjectId::generate())}})}})}});
  EXPECT_EQ(code_of(given), code::kInvalidReplicaSetConfig) << show(given);
  EXPECT_NE(errmsg_of(given).find("cannot contain 'replicaSetId'"), std::string::npos)
      << show(given);
  auto init = try_command(
      server.port(),
      Document{{"replSetInitiate",
                V(Document{{"_id", V("rs0")}, {"members", V(bson::Array{V(member)})}})}});
  ASSERT_TRUE(init && is_ok(*init)) << (init ? bson::to_json(*init) : "no reply");
  EXPECT_TRUE(replica_set_id_of(server)) << "replSetGetConfig shows no settings.replicaSetId";
}

// Occurrences of `needle` in `text`.
size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

Document fail_point_command(const char* mode) {
  return Document{{"configureFailPoint", V("hangAfterCheckingReplicaSetId")}, {"mode", V(mode)}};
}

// A member-to-member command's replicaSetId is checked before its handler runs, against the
// installed config; a config installed after that check and before the handler (here an
// initiate, while a heartbeat and a rollback read of another set of the same name wait at the
// test-only fail point hangAfterCheckingReplicaSetId) must still refuse them (93), and the
// heartbeat's term must not be taken.
// What it omits: the fail point stretches a window that is otherwise microseconds wide; votes,
// position reports and fetches share the heartbeat's check and are not driven here.
TEST(TwoMemberSet, ACommandOfAnotherSetHeldPastTheIdCheckMeetsTheConfigInstalledMeanwhile) {
  const std::string set_name = "rs-idcheck-" + std::to_string(::getpid());
  MongosimNode a({.args = {"--replSet", set_name}});
  MongosimNode b({.args = {"--replSet", set_name}});
  auto hold = try_command(a.port(), fail_point_command("alwaysOn"));
  ASSERT_TRUE(hold && is_ok(*hold)) << show(hold);
  const bson::ObjectId foreign = bson::ObjectId::generate();
  constexpr int64_t kForeignTerm = 7;
  std::optional<Document> heartbeat;
  std::optional<Document> rollback_read;
  std::thread heartbeat_sender([&] {
    heartbeat = try_command(a.port(), Document{{"replSetHeartbeat", V(set_name)},
                                               {"fromIndex", V(int32_t{1})},
                                               {"term", V(kForeignTerm)},
                                               {"configVersion", V(int64_t{1})},
                                               {"replicaSetId", bson::Value::object_id(foreign)}});
  });
  std::thread rollback_sender([&] {
    rollback_read =
        try_command(a.port(), Document{{"replSetRollbackFetch", V(int32_t{1})},
                                       {"documents", V(bson::Array{})},
                                       {"namespaces", V(bson::Array{})},
                                       {"replicaSetId", bson::Value::object_id(foreign)}});
  });
  const bool held = poll_until(after(kConvergeTimeout), [&] {
    return count_of(a.log_text(), "Fail point enabled: pausing") >= 2;
  });
  std::optional<Document> init;
  if (held) {
    bson::Array members{V(Document{{"_id", V(int32_t{0})}, {"host", V(a.host())}}),
                        V(Document{{"_id", V(int32_t{1})}, {"host", V(b.host())}})};
    init = try_command(
        a.port(), Document{{"replSetInitiate", V(Document{{"_id", V(set_name)},
                                                          {"members", V(std::move(members))}})}});
  }
  auto release = try_command(a.port(), fail_point_command("off"));
  heartbeat_sender.join();
  rollback_sender.join();
  ASSERT_TRUE(held) << "the commands never reached the fail point:\n" << a.log_text();
  ASSERT_TRUE(release && is_ok(*release)) << show(release);
  ASSERT_TRUE(init && is_ok(*init)) << show(init);
  const std::optional<bson::ObjectId> ours = replica_set_id_of(a);
  ASSERT_TRUE(ours) << "replSetGetConfig shows no settings.replicaSetId";
  const std::string mismatch = "ours: " + ours->hex() + "; remote node's: " + foreign.hex();
  EXPECT_EQ(code_of(heartbeat), code::kInvalidReplicaSetConfig) << show(heartbeat);
  EXPECT_NE(errmsg_of(heartbeat).find(mismatch), std::string::npos) << show(heartbeat);
  EXPECT_EQ(code_of(rollback_read), code::kInvalidReplicaSetConfig) << show(rollback_read);
  auto status = try_command(a.port(), Document{{"replSetGetStatus", V(int32_t{1})}});
  ASSERT_TRUE(status && status->get("term") != nullptr) << show(status);
  EXPECT_LT(status->get("term")->number_as_double(), static_cast<double>(kForeignTerm))
      << "the other set's term was taken: " << show(status);
}

// A heartbeat to a member without a config teaches it the config it carries, but only one of
// the set the heartbeat names: a config whose replicaSetId is not the heartbeat's is refused
// (93) and not installed.
TEST(OneMemberSet, AHeartbeatsConfigOfAnotherIdIsNotLearned) {
  const std::string set_name = "rs-learn-" + std::to_string(::getpid());
  MongosimNode a({.args = {"--replSet", set_name}});
  const bson::ObjectId named = bson::ObjectId::generate();
  const bson::ObjectId carried = bson::ObjectId::generate();
  bson::Array members{V(Document{{"_id", V(int32_t{0})}, {"host", V(a.host())}}),
                      V(Document{{"_id", V(int32_t{1})}, {"host", V("127.0.0.1:1")}})};
  Document config{{"_id", V(set_name)},
                  {"version", V(int32_t{1})},
                  {"members", V(std::move(members))},
                  {"settings", V(Document{{"replicaSetId", bson::Value::object_id(carried)}})}};
  auto heartbeat = try_command(a.port(), Document{{"replSetHeartbeat", V(set_name)},
                                                  {"fromIndex", V(int32_t{1})},
                                                  {"term", V(int64_t{1})},
                                                  {"configVersion", V(int64_t{1})},
                                                  {"replicaSetId", bson::Value::object_id(named)},
                                                  {"config", V(config)}});
  EXPECT_EQ(code_of(heartbeat), code::kInvalidReplicaSetConfig) << show(heartbeat);
  auto learned = try_command(a.port(), Document{{"replSetGetConfig", V(int32_t{1})}});
  EXPECT_EQ(code_of(learned), code::kNotYetInitialized) << show(learned);
}

// A command held at the fail point when the member shuts down ends with it (11600) and is not
// acted on: the vote request's newer term is neither taken nor persisted.
// What it omits: a command already past the fail point when shutdown begins (the usual case)
// runs on, as in mongod until its operation context is interrupted.
TEST(TwoMemberSet, ACommandHeldAtShutdownIsNotActedOn) {
  const std::string set_name = "rs-heldstop-" + std::to_string(::getpid());
  locklab::testkit::TempDir dbpath("held-shutdown");
  MongosimNode a({.args = {"--replSet", set_name}});
  MongosimNode b({.args = {"--replSet", set_name}, .dbpath = dbpath.path()});
  bson::Array members{V(Document{{"_id", V(int32_t{0})}, {"host", V(a.host())}}),
                      V(Document{{"_id", V(int32_t{1})}, {"host", V(b.host())}})};
  auto init = try_command(
      a.port(), Document{{"replSetInitiate",
                          V(Document{{"_id", V(set_name)}, {"members", V(std::move(members))}})}});
  ASSERT_TRUE(init && is_ok(*init)) << show(init);
  ASSERT_TRUE(poll_until(after(kConvergeTimeout), [&] { return replica_set_id_of(b).has_value(); }))
      << b.log_text();
  const bson::ObjectId ours = *replica_set_id_of(b);
  auto hold = try_command(b.port(), fail_point_command("alwaysOn"));
  ASSERT_TRUE(hold && is_ok(*hold)) << show(hold);
  constexpr int64_t kNewTerm = 99;
  std::optional<Document> vote;
  std::thread voter([&] {
    vote = try_command(
        b.port(), Document{{"replSetRequestVotes", V(int32_t{1})},
                           {"setName", V(set_name)},
                           {"dryRun", V(false)},
                           {"term", V(kNewTerm)},
                           {"candidateIndex", V(int32_t{0})},
                           {"configVersion", V(int64_t{1})},
                           {"lastWrittenOpTime", V(Document{{"ts", bson::Value::timestamp({1, 1})},
                                                            {"t", V(int64_t{1})}})},
                           {"replicaSetId", bson::Value::object_id(ours)}});
  });
  const bool held = poll_until(after(kConvergeTimeout), [&] {
    return b.log_text().find("Fail point enabled: pausing") != std::string::npos;
  });
  if (held) b.stop();
  voter.join();
  ASSERT_TRUE(held) << "the vote request never reached the fail point:\n" << b.log_text();
  EXPECT_TRUE(!vote || code_of(vote) == code::kInterruptedAtShutdown) << show(vote);
  b.restart();
  std::optional<Document> status;
  ASSERT_TRUE(
      poll_until(after(kConvergeTimeout),
                 [&] {
                   status = try_command(b.port(), Document{{"replSetGetStatus", V(int32_t{1})}});
                   return status && is_ok(*status);
                 }))
      << show(status) << b.log_text();
  EXPECT_LT(status->get("term")->number_as_double(), static_cast<double>(kNewTerm))
      << "a vote request held at shutdown was acted on: " << show(status);
}

TEST(StandaloneMember, ReplicaSetAdminCommandsNeedReplication) {
  MongosimNode server;
  auto step_down = try_command(server.port(), Document{{"replSetStepDown", V(int32_t{10})}});
  ASSERT_TRUE(step_down);
  EXPECT_EQ(step_down->get("code")->number_as_double(), code::kNoReplicationEnabled);
}

}  // namespace
}  // namespace mongosim::testing
