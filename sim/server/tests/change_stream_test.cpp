// Change streams with libmongoc 1.23's own mongoc_collection_watch against real mongosim
// processes (docs/mongodb-behaviour.md, Change streams): what the driver sends (verified by command
// monitoring), a getMore that is known to be waiting and is woken by a committed write, a getMore
// that times out empty with a postBatchResumeToken, resuming by token and by operation time,
// opcounters against what the driver sent, a three-member set where a w:1 write that is rolled
// back never reaches the stream while a majority write does, and a stream that goes on across a
// step-down and resumes on the new primary when its member dies, without losing or repeating an
// event.
//
// What the model leaves out: concurrent writers (one writer at a time), network partitions
// (members are paused or killed, not cut off), clock skew, and large events (every document is
// small).
#include <gtest/gtest.h>
#include <mongoc/mongoc.h>

#include <chrono>
#include <future>
#include <iostream>
#include <mutex>
#include <string>
#include <vector>

#include "base/error_codes.h"
#include "bson/codec.h"
#include "bson_owner.h"
#include "server/tests/mongoc_view.h"
#include "server/tests/sim_set.h"

namespace mongosim::testing {
namespace {

using bson::Document;
using bson::V;
using OwnedBson = mongolock::bson::Bson;

// Every command the client sent, with where it went and what came back.
struct Monitor {
  struct Command {
    int64_t request_id = 0;
    std::string name;
    std::string host;
    Document body;
    std::optional<Document> reply;
  };
  mutable std::mutex mu;
  std::vector<Command> commands;

  static void started(const mongoc_apm_command_started_t* e) {
    auto* self = static_cast<Monitor*>(mongoc_apm_command_started_get_context(e));
    std::lock_guard lock(self->mu);
    self->commands.push_back({mongoc_apm_command_started_get_request_id(e),
                              mongoc_apm_command_started_get_command_name(e),
                              mongoc_apm_command_started_get_host(e)->host_and_port,
                              to_document(mongoc_apm_command_started_get_command(e)),
                              std::nullopt});
  }
  static void succeeded(const mongoc_apm_command_succeeded_t* e) {
    static_cast<Monitor*>(mongoc_apm_command_succeeded_get_context(e))
        ->record(mongoc_apm_command_succeeded_get_request_id(e),
                 mongoc_apm_command_succeeded_get_reply(e));
  }
  static void failed(const mongoc_apm_command_failed_t* e) {
    static_cast<Monitor*>(mongoc_apm_command_failed_get_context(e))
        ->record(mongoc_apm_command_failed_get_request_id(e),
                 mongoc_apm_command_failed_get_reply(e));
  }
  void record(int64_t request_id, const bson_t* reply) {
    std::lock_guard lock(mu);
    for (auto& c : commands) {
      if (c.request_id == request_id) c.reply = to_document(reply);
    }
  }
  std::vector<Command> named(const std::string& name) const {
    std::lock_guard lock(mu);
    std::vector<Command> out;
    for (const auto& c : commands) {
      if (c.name == name) out.push_back(c);
    }
    return out;
  }
  size_t count_except(const std::vector<std::string>& names) const {
    std::lock_guard lock(mu);
    size_t n = 0;
    for (const auto& c : commands) {
      if (std::find(names.begin(), names.end(), c.name) == names.end()) ++n;
    }
    return n;
  }
};

// A client whose commands `monitor` records (the monitor must outlive it).
Client monitored_client(const std::string& uri, Monitor& monitor) {
  Client client(mongoc_client_new(uri.c_str()));
  if (!client) throw std::runtime_error("bad URI " + uri);
  mongoc_apm_callbacks_t* callbacks = mongoc_apm_callbacks_new();
  mongoc_apm_set_command_started_cb(callbacks, Monitor::started);
  mongoc_apm_set_command_succeeded_cb(callbacks, Monitor::succeeded);
  mongoc_apm_set_command_failed_cb(callbacks, Monitor::failed);
  mongoc_client_set_apm_callbacks(client.get(), callbacks, &monitor);
  mongoc_apm_callbacks_destroy(callbacks);
  return client;
}

// The URI options every test client uses: quick rediscovery, bounded waits.
constexpr const char* kClientOptions =
    "serverSelectionTryOnce=false&serverSelectionTimeoutMS=30000&heartbeatFrequencyMS=500"
    "&connectTimeoutMS=2000&socketTimeoutMS=20000";

Stream watch(mongoc_collection_t* coll, const char* pipeline_json, const char* opts_json) {
  bson_error_t error;
  OwnedBson pipeline(
      bson_new_from_json(reinterpret_cast<const uint8_t*>(pipeline_json), -1, &error));
  OwnedBson opts(bson_new_from_json(reinterpret_cast<const uint8_t*>(opts_json), -1, &error));
  return Stream(mongoc_collection_watch(coll, pipeline.get(), opts.get()));
}

// The stream's next event, calling next() (one getMore each) until one comes, the stream fails
// or the deadline passes; nullopt with `error` set otherwise.
std::optional<Document> next_event(mongoc_change_stream_t* stream,
                                   locklab::testkit::Deadline deadline,
                                   std::string* error = nullptr) {
  do {
    const bson_t* doc = nullptr;
    if (mongoc_change_stream_next(stream, &doc)) return to_document(doc);
    bson_error_t err;
    const bson_t* reply = nullptr;
    if (mongoc_change_stream_error_document(stream, &err, &reply)) {
      if (error != nullptr)
        *error = std::string(err.message) + " " + bson::to_json(to_document(reply));
      return std::nullopt;
    }
  } while (locklab::testkit::Clock::now() < deadline);
  if (error != nullptr) *error = "no event before the deadline";
  return std::nullopt;
}

std::string key_of(const Document& event) {
  return event.get("documentKey")->as_document().get("_id")->as_string();
}

void insert(mongoc_collection_t* coll, const char* id, const char* wc_json) {
  OwnedBson doc(BCON_NEW("_id", BCON_UTF8(id)));
  bson_error_t error;
  OwnedBson opts(bson_new_from_json(reinterpret_cast<const uint8_t*>(wc_json), -1, &error));
  ASSERT_TRUE(mongoc_collection_insert_one(coll, doc.get(), opts.get(), nullptr, &error))
      << error.message;
}

const char* const kMajority = R"({"writeConcern": {"w": "majority"}})";

int64_t waiting_get_mores(const SimSet& set, int i) {
  auto status = set.command(i, Document{{"serverStatus", V(int32_t{1})}});
  if (!status) return -1;
  return status->get("mongosim")->as_document().get("changeStreamGetMoresWaiting")->as_int64();
}

TEST(ChangeStream, LibmongocSendsAnAggregateThenAwaitDataGetMores) {
  SimSet set({.members = 1});
  Monitor monitor;
  Client client = monitored_client(set.uri(kClientOptions), monitor);
  Collection coll(mongoc_client_get_collection(client.get(), "db", "locks"));
  Stream stream = watch(coll.get(), R"({"pipeline": [{"$match": {"operationType": "insert"}}]})",
                        R"({"fullDocument": "updateLookup", "maxAwaitTimeMS": 300,
                            "batchSize": 5})");
  ASSERT_TRUE(stream);
  insert(coll.get(), "a", kMajority);
  auto event = next_event(stream.get(), locklab::testkit::after(kConvergeTimeout));
  ASSERT_TRUE(event);
  EXPECT_EQ(key_of(*event), "a");

  auto aggregates = monitor.named("aggregate");
  ASSERT_EQ(aggregates.size(), 1u);
  const Document& agg = aggregates[0].body;
  std::cout << "aggregate: " << bson::to_json(agg) << "\n";
  EXPECT_EQ(agg.get("aggregate")->as_string(), "locks");
  const bson::Array& pipeline = agg.get("pipeline")->as_array();
  ASSERT_EQ(pipeline.size(), 2u);
  EXPECT_EQ(bson::to_json(pipeline[0]),
            bson::to_json(
                V(Document{{"$changeStream", V(Document{{"fullDocument", V("updateLookup")}})}})));
  EXPECT_EQ(agg.get("cursor")->as_document().get("batchSize")->number_as_double(), 5);
  EXPECT_FALSE(agg.has("maxAwaitTimeMS"));
  EXPECT_FALSE(agg.has("maxTimeMS"));
  EXPECT_TRUE(agg.has("lsid"));
  ASSERT_TRUE(aggregates[0].reply);
  const Document& first = aggregates[0].reply->get("cursor")->as_document();
  std::cout << "aggregate reply cursor: " << bson::to_json(first) << "\n";
  EXPECT_NE(first.get("id")->as_int64(), 0);
  EXPECT_TRUE(first.get("firstBatch")->as_array().empty());
  EXPECT_TRUE(first.has("postBatchResumeToken"));

  auto get_mores = monitor.named("getMore");
  ASSERT_GE(get_mores.size(), 1u);
  const Document& gm = get_mores[0].body;
  std::cout << "getMore: " << bson::to_json(gm) << "\n";
  EXPECT_EQ(gm.get("getMore")->as_int64(), first.get("id")->as_int64());
  EXPECT_EQ(gm.get("collection")->as_string(), "locks");
  EXPECT_EQ(gm.get("batchSize")->number_as_double(), 5);
  EXPECT_EQ(gm.get("maxTimeMS")->number_as_double(), 300);
  EXPECT_TRUE(gm.get("lsid")->as_document().identical(agg.get("lsid")->as_document()));
  ASSERT_TRUE(get_mores.back().reply);
  const Document& last = get_mores.back().reply->get("cursor")->as_document();
  ASSERT_EQ(last.get("nextBatch")->as_array().size(), 1u);
  ASSERT_TRUE(last.has("postBatchResumeToken"));
  EXPECT_TRUE(
      last.get("postBatchResumeToken")->as_document().identical(event->get("_id")->as_document()));
}

TEST(ChangeStream, AGetMoreThatTimesOutReturnsNothingButAPostBatchToken) {
  SimSet set({.members = 1});
  Monitor monitor;
  Client client = monitored_client(set.uri(kClientOptions), monitor);
  Collection coll(mongoc_client_get_collection(client.get(), "db", "locks"));
  Stream stream = watch(coll.get(), "{}", R"({"maxAwaitTimeMS": 100})");
  const bson_t* doc = nullptr;
  EXPECT_FALSE(mongoc_change_stream_next(stream.get(), &doc));
  EXPECT_FALSE(mongoc_change_stream_error_document(stream.get(), nullptr, nullptr));
  auto get_mores = monitor.named("getMore");
  ASSERT_EQ(get_mores.size(), 1u);
  ASSERT_TRUE(get_mores[0].reply);
  const Document& cursor = get_mores[0].reply->get("cursor")->as_document();
  EXPECT_TRUE(cursor.get("nextBatch")->as_array().empty());
  EXPECT_NE(cursor.get("id")->as_int64(), 0);
  ASSERT_TRUE(cursor.has("postBatchResumeToken"));
  EXPECT_TRUE(cursor.get("postBatchResumeToken")->is_document());
  // The driver caches it as its resume token.
  const bson_t* token = mongoc_change_stream_get_resume_token(stream.get());
  ASSERT_NE(token, nullptr);
  EXPECT_TRUE(to_document(token).identical(cursor.get("postBatchResumeToken")->as_document()));
}

// The first getMore is known to be waiting (serverStatus counts it) when the write happens, and
// its maxAwaitTimeMS is ten minutes: only a wake-up brings the event within the test's
// kConvergeTimeout (a hang guard, not a measurement), and it comes in that same getMore.
class ChangeStreamWake : public ::testing::TestWithParam<int> {};

constexpr int32_t kLongAwaitMs = 600'000;
// A socket timeout beyond the await, so the driver waits for the server's answer.
constexpr const char* kLongAwaitClientOptions =
    "serverSelectionTryOnce=false&serverSelectionTimeoutMS=30000&heartbeatFrequencyMS=500"
    "&connectTimeoutMS=2000&socketTimeoutMS=900000";

TEST_P(ChangeStreamWake, AWaitingGetMoreReturnsTheEventOnceItCommits) {
  SimSet set({.members = GetParam()});
  int primary = set.primary();
  ASSERT_GE(primary, 0);
  Monitor monitor;
  Client client = monitored_client(set.uri(kLongAwaitClientOptions), monitor);
  Collection coll(mongoc_client_get_collection(client.get(), "db", "locks"));
  Client writer(mongoc_client_new(set.uri(kClientOptions).c_str()));
  Collection writer_coll(mongoc_client_get_collection(writer.get(), "db", "locks"));
  Document opts{{"maxAwaitTimeMS", V(kLongAwaitMs)}};
  Stream stream = watch(coll.get(), "{}", bson::to_json(opts).c_str());
  ASSERT_TRUE(stream);
  constexpr int kRounds = 5;
  std::vector<double> latencies_ms;
  for (int round = 0; round < kRounds; ++round) {
    size_t get_mores_before = monitor.named("getMore").size();
    auto next = std::async(std::launch::async, [&] {
      return next_event(stream.get(), locklab::testkit::after(std::chrono::minutes(15)));
    });
    ASSERT_TRUE(
        poll_until(after(kConvergeTimeout), [&] { return waiting_get_mores(set, primary) == 1; }));
    std::string id = "w" + std::to_string(round);
    auto written = std::chrono::steady_clock::now();
    insert(writer_coll.get(), id.c_str(), kMajority);
    if (next.wait_for(kConvergeTimeout) != std::future_status::ready) {
      for (int i = 0; i < set.size(); ++i) set.kill(i);  // ends the driver's wait
      next.wait();
      FAIL() << "the waiting getMore was not woken by the committed write";
    }
    auto event = next.get();
    latencies_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - written)
            .count());
    ASSERT_TRUE(event);
    EXPECT_EQ(key_of(*event), id);
    EXPECT_EQ(monitor.named("getMore").size(), get_mores_before + 1)
        << "the event did not come in the getMore that was waiting";
  }
  std::sort(latencies_ms.begin(), latencies_ms.end());
  // Informational (benchmarks measure; this never gates): write sent to event received.
  std::cout << GetParam() << " member(s): write-to-event ms, median " << latencies_ms[kRounds / 2]
            << ", max " << latencies_ms.back() << "\n";
}

INSTANTIATE_TEST_SUITE_P(Members, ChangeStreamWake, ::testing::Values(1, 3));

TEST(ChangeStream, ResumesAfterATokenAndAtAnOperationTime) {
  SimSet set({.members = 1});
  Monitor monitor;
  Client client = monitored_client(set.uri(kClientOptions), monitor);
  Collection coll(mongoc_client_get_collection(client.get(), "db", "locks"));
  Stream stream = watch(coll.get(), "{}", R"({"maxAwaitTimeMS": 200})");
  for (const char* id : {"r1", "r2", "r3"}) insert(coll.get(), id, kMajority);
  std::vector<Document> events;
  for (int i = 0; i < 3; ++i) {
    auto e = next_event(stream.get(), locklab::testkit::after(kConvergeTimeout));
    ASSERT_TRUE(e);
    events.push_back(*e);
  }
  // resumeAfter r1's token: r2, r3.
  Document opts{{"resumeAfter", *events[0].get("_id")}, {"maxAwaitTimeMS", V(int32_t{200})}};
  Stream resumed = watch(coll.get(), "{}", bson::to_json(opts).c_str());
  for (const char* expected : {"r2", "r3"}) {
    auto e = next_event(resumed.get(), locklab::testkit::after(kConvergeTimeout));
    ASSERT_TRUE(e);
    EXPECT_EQ(key_of(*e), expected);
  }
  // startAtOperationTime r2's clusterTime: r2, r3.
  Document at{{"startAtOperationTime", *events[1].get("clusterTime")},
              {"maxAwaitTimeMS", V(int32_t{200})}};
  Stream from_time = watch(coll.get(), "{}", bson::to_json(at).c_str());
  for (const char* expected : {"r2", "r3"}) {
    auto e = next_event(from_time.get(), locklab::testkit::after(kConvergeTimeout));
    ASSERT_TRUE(e);
    EXPECT_EQ(key_of(*e), expected);
  }
  // A token from no server at all: a clear error, not a stream.
  Stream bad = watch(coll.get(), "{}", R"({"resumeAfter": {"_data": "not hex"}})");
  const bson_t* doc = nullptr;
  EXPECT_FALSE(mongoc_change_stream_next(bad.get(), &doc));
  bson_error_t error;
  ASSERT_TRUE(mongoc_change_stream_error_document(bad.get(), &error, nullptr));
  EXPECT_EQ(error.code, static_cast<uint32_t>(code::kFailedToParse));
}

// A getMore failing with a retriable code (here from the failCommand fail point) carries the
// ResumableChangeStreamError label, which is what makes libmongoc resume at wire version 9 and
// later; a stream broken by its own pipeline gets NonResumableChangeStreamError and ends.
TEST(ChangeStream, ErrorsCarryMongodsChangeStreamLabels) {
  SimSet set({.members = 1});
  Monitor monitor;
  Client client = monitored_client(set.uri(kClientOptions), monitor);
  Collection coll(mongoc_client_get_collection(client.get(), "db", "locks"));
  Stream stream = watch(coll.get(), "{}", R"({"maxAwaitTimeMS": 200})");
  auto fail =
      set.command(0, Document{{"configureFailPoint", V("failCommand")},
                              {"mode", V(Document{{"times", V(int32_t{1})}})},
                              {"data", V(Document{{"failCommands", V(bson::Array{V("getMore")})},
                                                  {"errorCode", V(code::kNotWritablePrimary)}})}});
  ASSERT_TRUE(fail && is_ok(*fail)) << show(fail);
  insert(coll.get(), "l1", kMajority);
  auto event = next_event(stream.get(), locklab::testkit::after(kConvergeTimeout));
  ASSERT_TRUE(event);
  EXPECT_EQ(key_of(*event), "l1");
  auto get_mores = monitor.named("getMore");
  ASSERT_GE(get_mores.size(), 1u);
  ASSERT_TRUE(get_mores[0].reply);
  EXPECT_EQ(bson::to_json(*get_mores[0].reply->get("errorLabels")),
            bson::to_json(V(bson::Array{V("ResumableChangeStreamError")})));
  EXPECT_EQ(monitor.named("aggregate").size(), 2u);  // resumed

  Stream broken = watch(coll.get(), R"({"pipeline": [{"$project": {"_id": 0}}]})",
                        R"({"maxAwaitTimeMS": 200})");
  insert(coll.get(), "l2", kMajority);
  std::string error;
  EXPECT_FALSE(next_event(broken.get(), locklab::testkit::after(kConvergeTimeout), &error));
  EXPECT_NE(error.find("NonResumableChangeStreamError"), std::string::npos) << error;
  EXPECT_NE(error.find("Encountered an event whose _id field"), std::string::npos) << error;
}

int64_t opcounter(mongoc_client_t* client, const char* name) {
  OwnedBson cmd(BCON_NEW("serverStatus", BCON_INT32(1)));
  mongolock::bson::BsonReply reply;
  bson_error_t error;
  bool ok = mongoc_client_command_simple(client, "admin", cmd.get(), nullptr, reply.out(), &error);
  if (!ok) throw std::runtime_error(error.message);
  Document d = to_document(reply.get());
  return d.get("opcounters")->as_document().get(name)->as_int64();
}

TEST(ChangeStream, OpcountersCountTheAggregateAndEachGetMoreAsSent) {
  SimSet set({.members = 1});
  Monitor monitor;
  Client client = monitored_client(set.member(0).uri("directConnection=true"), monitor);
  Collection coll(mongoc_client_get_collection(client.get(), "db", "locks"));
  int64_t get_more_before = opcounter(client.get(), "getmore");
  int64_t command_before = opcounter(client.get(), "command");
  size_t commands_before = monitor.count_except({"getMore", "insert", "find", "update", "delete"});
  {
    Stream stream = watch(coll.get(), "{}", R"({"maxAwaitTimeMS": 50})");
    const bson_t* doc = nullptr;
    for (int i = 0; i < 3; ++i) EXPECT_FALSE(mongoc_change_stream_next(stream.get(), &doc));
  }  // destroying the stream sends killCursors
  int64_t get_more_after = opcounter(client.get(), "getmore");
  int64_t command_after = opcounter(client.get(), "command");
  size_t commands_after = monitor.count_except({"getMore", "insert", "find", "update", "delete"});
  EXPECT_EQ(monitor.named("getMore").size(), 3u);
  EXPECT_EQ(monitor.named("killCursors").size(), 1u);
  EXPECT_EQ(get_more_after - get_more_before, 3);
  // The aggregate, the killCursors and the second serverStatus (which counts itself).
  EXPECT_EQ(static_cast<size_t>(command_after - command_before), commands_after - commands_before);
}

// --- three members --------------------------------------------------------------------------

TEST(ChangeStream, ARolledBackWriteNeverAppearsWhileAMajorityWriteDoes) {
  SimSet set(durable_set(3));
  int old_primary = set.primary();
  ASSERT_GE(old_primary, 0);
  Monitor monitor;
  Client client = monitored_client(set.uri(kClientOptions), monitor);
  Collection coll(mongoc_client_get_collection(client.get(), "db", "c"));
  Stream stream = watch(coll.get(), "{}", R"({"maxAwaitTimeMS": 200})");
  ASSERT_TRUE(write_ok(
      set.insert(old_primary, Document{{"_id", V("before")}}, Document{{"w", V("majority")}})));
  std::vector<std::string> seen;
  auto e = next_event(stream.get(), locklab::testkit::after(kConvergeTimeout));
  ASSERT_TRUE(e);
  seen.push_back(key_of(*e));

  // Only the primary has "lost": the others' fetchers are stopped while it takes the w:1 write
  // (they keep answering heartbeats, so the primary keeps its majority however slow the reads).
  for (int i = 0; i < set.size(); ++i) {
    if (i != old_primary) stop_fetcher(set, i);
  }
  ASSERT_TRUE(write_ok(
      set.insert(old_primary, Document{{"_id", V("lost")}}, Document{{"w", V(int32_t{1})}})))
      << set.logs();
  // The stream reads on the primary meanwhile: "lost" is there but not committed.
  for (int i = 0; i < 3; ++i) {
    const bson_t* doc = nullptr;
    if (mongoc_change_stream_next(stream.get(), &doc)) seen.push_back(key_of(to_document(doc)));
  }
  set.pause(old_primary);
  for (int i = 0; i < set.size(); ++i) {
    if (i != old_primary) fail_point(set, i, "stopReplProducer", V("off"));
  }
  int new_primary = set.wait_for_primary(after(kDurableConvergeTimeout), old_primary);
  ASSERT_GE(new_primary, 0) << set.logs();
  ASSERT_FALSE(set.has_document(new_primary, "db", "c", V("lost")))
      << "the w:1 write reached a secondary; this run does not test a rollback";
  ASSERT_TRUE(write_ok(
      set.insert(new_primary, Document{{"_id", V("kept")}}, Document{{"w", V("majority")}})))
      << set.logs();
  set.resume(old_primary);
  // The old primary rolls "lost" back; the stream ends up on a member that never had it.
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    return !set.has_document(old_primary, "db", "c", V("lost")) &&
           set.state(old_primary) == "SECONDARY";
  })) << set.logs();
  std::string error;
  while (std::find(seen.begin(), seen.end(), "kept") == seen.end()) {
    auto next = next_event(stream.get(), locklab::testkit::after(kDurableConvergeTimeout), &error);
    ASSERT_TRUE(next) << error << set.logs();
    seen.push_back(key_of(*next));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"before", "kept"}));
}

TEST(ChangeStream, AStreamGoesOnAcrossAStepDownAndResumesWhenItsMemberDies) {
  SimSet set({.members = 3});
  int old_primary = set.primary();
  ASSERT_GE(old_primary, 0);
  Monitor monitor;
  Client client = monitored_client(set.uri(kClientOptions), monitor);
  Collection coll(mongoc_client_get_collection(client.get(), "db", "locks"));
  Client writer(mongoc_client_new(set.uri(kClientOptions).c_str()));
  Collection writer_coll(mongoc_client_get_collection(writer.get(), "db", "locks"));
  Stream stream = watch(coll.get(), "{}", R"({"maxAwaitTimeMS": 200})");
  std::vector<std::string> seen;
  auto take = [&](const char* expected) {
    std::string error;
    auto e = next_event(stream.get(), locklab::testkit::after(kConvergeTimeout), &error);
    ASSERT_TRUE(e) << error << set.logs();
    seen.push_back(key_of(*e));
    EXPECT_EQ(seen.back(), expected);
  };
  insert(writer_coll.get(), "e1", kMajority);
  insert(writer_coll.get(), "e2", kMajority);
  take("e1");
  take("e2");

  // A step-down does not interrupt the stream: its getMores go on on the former primary.
  auto down = set.command(old_primary, Document{{"replSetStepDown", V(int32_t{30})},
                                                {"secondaryCatchUpPeriodSecs", V(int32_t{10})}});
  ASSERT_TRUE(down && is_ok(*down)) << show(down);
  int new_primary = set.wait_for_primary(after(kConvergeTimeout), old_primary);
  ASSERT_GE(new_primary, 0) << set.logs();
  insert(writer_coll.get(), "e3", kMajority);
  take("e3");
  EXPECT_EQ(monitor.named("aggregate").size(), 1u);

  // Its member dies: the next getMore fails with a network error and libmongoc resumes on the
  // primary with the last token.
  set.kill(old_primary);
  insert(writer_coll.get(), "e4", kMajority);
  take("e4");
  insert(writer_coll.get(), "e5", kMajority);
  take("e5");
  EXPECT_EQ(seen, (std::vector<std::string>{"e1", "e2", "e3", "e4", "e5"}));
  auto aggregates = monitor.named("aggregate");
  ASSERT_GE(aggregates.size(), 2u);
  EXPECT_EQ(aggregates[0].host, set.member(old_primary).host());
  const Document& resume = aggregates.back().body;
  const Document& stage =
      resume.get("pipeline")->as_array()[0].as_document().get("$changeStream")->as_document();
  EXPECT_TRUE(stage.has("resumeAfter")) << bson::to_json(resume);
  EXPECT_NE(aggregates.back().host, set.member(old_primary).host());
}

}  // namespace
}  // namespace mongosim::testing
