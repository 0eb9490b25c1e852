// Change streams in the data layer (docs/mongodb-behaviour.md, Change streams), driven the way the
// server core drives the commands: the events of each operation type with their exact shapes,
// updateLookup, the user's stages, drops and invalidation, database streams, resuming by token and
// by time, lost history, the majority rule, cursor bounds, and mongod's errors for bad options
// and tokens, including a random search over malformed stages that must only ever produce a
// command error.
//
// What the model leaves out: threads (a getMore here never waits: maxTimeMS 0, or the deadline
// has passed; waking is tested with real processes in sim/server/tests/change_stream_test.cpp),
// replication (the commit point is a value the test sets), and the wire.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "data/cursors.h"
#include "data/resume_token.h"
#include "data/tests/store_fixture.h"

namespace mongosim::data::testing {
namespace {

class ChangeStreamTest : public StoreFixture {
 protected:
  // aggregate on db.<coll> (or {aggregate: 1} when coll is empty) with these stages after
  // {$changeStream: <stage>}.
  Document open(std::string_view stage_json = "{}", std::string_view stages_json = "[]",
                const std::string& coll = "c", int64_t batch_size = 101,
                const std::string& db = "db") {
    bson::Array pipeline{bson::V(Document{{"$changeStream", bson::V(J(stage_json))}})};
    Document wrapped = J(std::string("{\"s\": ") + std::string(stages_json) + "}");
    for (const auto& s : wrapped.get("s")->as_array()) pipeline.push_back(s);
    Document cmd;
    cmd.append("aggregate", coll.empty() ? bson::V(int32_t{1}) : bson::V(coll));
    cmd.append("pipeline", bson::V(std::move(pipeline)));
    cmd.append("cursor", bson::V(Document{{"batchSize", bson::V(batch_size)}}));
    return run(db, cmd);
  }

  // getMore that does not wait.
  Document more(const Document& opened, int64_t batch_size = 0, const std::string& db = "db") {
    const Document& c = cursor_of(opened);
    std::string ns = c.get("ns")->as_string();
    Document cmd{{"getMore", *c.get("id")},
                 {"collection", bson::V(ns.substr(ns.find('.') + 1))},
                 {"maxTimeMS", bson::V(int32_t{0})}};
    if (batch_size > 0) cmd.append("batchSize", bson::V(batch_size));
    return run(db, cmd);
  }

  static bson::Array batch(const Document& reply) {
    const Document& c = cursor_of(reply);
    const Value* b = c.has("firstBatch") ? c.get("firstBatch") : c.get("nextBatch");
    return b->as_array();
  }

  void write(std::string_view json) { run(json); }

  // The token of the event, checked to be {_data: string}.
  static Document token_of(const Value& event) {
    const Value* id = event.as_document().get("_id");
    EXPECT_TRUE(id != nullptr && id->is_document() && id->as_document().get("_data") != nullptr &&
                id->as_document().get("_data")->is_string())
        << js(event);
    return id->as_document();
  }

  // The event with _id, clusterTime and wallTime checked for type and replaced by "T", "ts" and
  // "wall", so a test can compare the rest exactly (field order included).
  static Document shape(const Value& event) {
    Document out;
    for (const auto& [k, v] : event.as_document()) {
      if (k == "_id") {
        (void)token_of(event);
        out.append(k, bson::V("T"));
      } else if (k == "clusterTime") {
        EXPECT_EQ(v.type(), bson::Type::kTimestamp);
        out.append(k, bson::V("ts"));
      } else if (k == "wallTime") {
        EXPECT_EQ(v.type(), bson::Type::kDateTime);
        out.append(k, bson::V("wall"));
      } else {
        out.append(k, v);
      }
    }
    return out;
  }

  static std::vector<std::string> types(const bson::Array& events) {
    std::vector<std::string> out;
    for (const Value& e : events) out.push_back(e.as_document().get("operationType")->as_string());
    return out;
  }

  CommandError open_error(std::string_view stage_json, std::string_view stages_json = "[]",
                          const std::string& coll = "c", const std::string& db = "db") {
    try {
      Document d = open(stage_json, stages_json, coll, 101, db);
      ADD_FAILURE() << "expected an error, got " << js(d);
    } catch (const CommandError& e) {
      return e;
    }
    return CommandError(0, "");
  }
};

TEST_F(ChangeStreamTest, EachOperationTypeHasMongodsShape) {
  Document opened = open();
  EXPECT_NE(cursor_of(opened).get("id")->as_int64(), 0);  // open even with nothing to return
  EXPECT_TRUE(batch(opened).empty());
  EXPECT_TRUE(cursor_of(opened).has("postBatchResumeToken"));
  write(R"({"insert": "c", "documents": [{"_id": 1, "a": 1, "b": [1, 2, 3]}]})");
  write(R"({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"a": 2, "n.x": 1},
                                                               "$pop": {"b": 1}}}]})");
  write(R"({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"z": 9}}]})");
  write(R"({"delete": "c", "deletes": [{"q": {"_id": 1}, "limit": 1}]})");
  write(R"({"insert": "other", "documents": [{"_id": 1}]})");  // another collection: no event
  bson::Array events = batch(more(opened));
  ASSERT_EQ(events.size(), 4u);
  const char* ns = R"("ns": {"db": "db", "coll": "c"}, "documentKey": {"_id": 1})";
  EXPECT_TRUE(Same(shape(events[0]),
                   std::string(R"({"_id": "T", "operationType": "insert", "clusterTime": "ts",
                       "wallTime": "wall", "fullDocument": {"_id": 1, "a": 1, "b": [1, 2, 3]},)") +
                       ns + "}"));
  EXPECT_TRUE(Same(shape(events[1]),
                   std::string(R"({"_id": "T", "operationType": "update", "clusterTime": "ts",
                       "wallTime": "wall", )") +
                       ns + R"(, "updateDescription": {"updatedFields": {"a": 2, "n": {"x": 1}},
                       "removedFields": [], "truncatedArrays": [{"field": "b", "newSize": 2}]}})"));
  EXPECT_TRUE(Same(shape(events[2]),
                   std::string(R"({"_id": "T", "operationType": "replace", "clusterTime": "ts",
                       "wallTime": "wall", "fullDocument": {"_id": 1, "z": 9}, )") +
                       ns + "}"));
  EXPECT_TRUE(Same(shape(events[3]), std::string(R"({"_id": "T", "operationType": "delete",
                       "clusterTime": "ts", "wallTime": "wall", )") +
                                         ns + "}"));
  // Tokens sort by position, and the batch's token is the last event's.
  for (size_t i = 1; i < events.size(); ++i) {
    EXPECT_LT(token_of(events[i - 1]).get("_data")->as_string(),
              token_of(events[i]).get("_data")->as_string());
  }
}

TEST_F(ChangeStreamTest, PostBatchTokenIsTheLastEventsOrAHighWaterMarkBeyondIt) {
  Document opened = open();
  write(R"({"insert": "c", "documents": [{"_id": 1}]})");
  Document r = more(opened);
  ASSERT_EQ(batch(r).size(), 1u);
  EXPECT_TRUE(
      cursor_of(r).get("postBatchResumeToken")->as_document().identical(token_of(batch(r)[0])));
  write(R"({"insert": "other", "documents": [{"_id": 1}]})");
  Document r2 = more(opened);
  EXPECT_TRUE(batch(r2).empty());
  EXPECT_GT(cursor_of(r2).get("postBatchResumeToken")->as_document().get("_data")->as_string(),
            token_of(batch(r)[0]).get("_data")->as_string());
}

TEST_F(ChangeStreamTest, UpdateLookupGivesTheDocumentAsItIsNowOrNull) {
  Document opened = open(R"({"fullDocument": "updateLookup"})");
  write(R"({"insert": "c", "documents": [{"_id": 1, "v": 1}, {"_id": 2, "v": 1}]})");
  write(R"({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"v": 2}}},
                                       {"q": {"_id": 2}, "u": {"$set": {"v": 2}}}]})");
  write(R"({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"v": 3}}}]})");
  write(R"({"delete": "c", "deletes": [{"q": {"_id": 2}, "limit": 1}]})");
  bson::Array events = batch(more(opened));
  ASSERT_EQ(types(events),
            (std::vector<std::string>{"insert", "insert", "update", "update", "update", "delete"}));
  // The first update of 1 shows the document as it is when read (v: 3), not as it was then.
  EXPECT_TRUE(Same(*events[2].as_document().get("fullDocument"), R"({"_id": 1, "v": 3})"));
  const Value* gone = events[3].as_document().get("fullDocument");
  ASSERT_NE(gone, nullptr);
  EXPECT_TRUE(gone->is_null());  // 2 is gone
  // fullDocument comes right after wallTime, as in mongod's events.
  EXPECT_EQ(events[2].as_document().at(4).first, "fullDocument");
}

TEST_F(ChangeStreamTest, PipelineUpdatesOfSmallDocumentsAreReplaceEvents) {
  Document opened = open();
  std::string big(300, 'x');
  write(R"({"insert": "c", "documents": [{"_id": 1, "v": 1}]})");
  run(Document{{"insert", bson::V("c")},
               {"documents", bson::V(bson::Array{bson::V(Document{{"_id", bson::V(int32_t{2})},
                                                                  {"v", bson::V(int32_t{1})},
                                                                  {"big", bson::V(big)}})})}});
  write(R"({"update": "c", "updates": [{"q": {}, "u": [{"$set": {"v": 2}}], "multi": true}]})");
  bson::Array events = batch(more(opened));
  ASSERT_EQ(types(events), (std::vector<std::string>{"insert", "insert", "replace", "update"}));
  EXPECT_TRUE(Same(*events[3].as_document().get("updateDescription"),
                   R"({"updatedFields": {"v": 2}, "removedFields": [], "truncatedArrays": []})"));
}

TEST_F(ChangeStreamTest, FindAndModifyWritesGiveTheSameEvents) {
  Document opened = open();
  write(R"({"findAndModify": "c", "query": {"_id": 1}, "update": {"$set": {"v": 1}},
            "upsert": true})");
  write(R"({"findAndModify": "c", "query": {"_id": 1}, "update": {"$inc": {"v": 1}}})");
  write(R"({"findAndModify": "c", "query": {"_id": 1}, "update": {"w": 1}})");
  write(R"({"findAndModify": "c", "query": {"_id": 1}, "remove": true})");
  EXPECT_EQ(types(batch(more(opened))),
            (std::vector<std::string>{"insert", "update", "replace", "delete"}));
}

TEST_F(ChangeStreamTest, DropReportsTheDropThenInvalidatesAndClosesTheCursor) {
  write(R"({"insert": "c", "documents": [{"_id": 1}]})");
  Document opened = open();
  write(R"({"drop": "c"})");
  Document r = more(opened);
  bson::Array events = batch(r);
  ASSERT_EQ(types(events), (std::vector<std::string>{"drop", "invalidate"}));
  EXPECT_TRUE(Same(shape(events[0]), R"({"_id": "T", "operationType": "drop", "clusterTime": "ts",
                                         "wallTime": "wall", "ns": {"db": "db", "coll": "c"}})"));
  EXPECT_TRUE(Same(shape(events[1]), R"({"_id": "T", "operationType": "invalidate",
                                         "clusterTime": "ts", "wallTime": "wall"})"));
  EXPECT_EQ(cursor_of(r).get("id")->as_int64(), 0);
  // resumeAfter an invalidate is refused; startAfter it starts a new stream after the drop.
  Document invalidate = token_of(events[1]);
  Document resume{{"resumeAfter", bson::V(invalidate)}};
  EXPECT_EQ(open_error(js(resume)).code(), code::kInvalidResumeToken);
  Document after = open(js(Document{{"startAfter", bson::V(invalidate)}}));
  write(R"({"insert": "c", "documents": [{"_id": 2}]})");
  EXPECT_EQ(types(batch(more(after))), (std::vector<std::string>{"insert"}));
}

TEST_F(ChangeStreamTest, AnInvalidateThatDoesNotFitComesInTheNextBatch) {
  write(R"({"insert": "c", "documents": [{"_id": 1}]})");
  Document opened = open();
  write(R"({"drop": "c"})");
  Document first = more(opened, 1);
  EXPECT_EQ(types(batch(first)), (std::vector<std::string>{"drop"}));
  EXPECT_NE(cursor_of(first).get("id")->as_int64(), 0);
  Document second = more(opened, 1);
  EXPECT_EQ(types(batch(second)), (std::vector<std::string>{"invalidate"}));
  EXPECT_EQ(cursor_of(second).get("id")->as_int64(), 0);
}

TEST_F(ChangeStreamTest, DatabaseStreamsSeeEveryCollectionAndTheDatabaseDrop) {
  Document opened = open("{}", "[]", "");
  EXPECT_EQ(cursor_of(opened).get("ns")->as_string(), "db.$cmd.aggregate");
  Document collection_stream = open();
  write(R"({"insert": "c", "documents": [{"_id": 1}]})");
  write(R"({"insert": "d", "documents": [{"_id": 1}]})");
  run("db", J(R"({"dropDatabase": 1})"));
  bson::Array events = batch(more(opened));
  ASSERT_EQ(types(events), (std::vector<std::string>{"insert", "insert", "drop", "drop",
                                                     "dropDatabase", "invalidate"}));
  EXPECT_TRUE(Same(*events[4].as_document().get("ns"), R"({"db": "db"})"));
  EXPECT_EQ(types(batch(more(collection_stream))),
            (std::vector<std::string>{"insert", "drop", "invalidate"}));
}

TEST_F(ChangeStreamTest, StagesFilterOnFullDocumentAndExpressions) {
  Document by_owner =
      open(R"({"fullDocument": "updateLookup"})", R"([{"$match": {"fullDocument.owner": "w1"}}])");
  Document deletes = open("{}", R"([{"$match": {"$expr": {"$eq": ["$operationType", "delete"]}}},
                                    {"$project": {"documentKey": 1}}])");
  write(R"({"insert": "c", "documents": [{"_id": 1, "owner": "w1"}, {"_id": 2, "owner": "w2"}]})");
  write(R"({"update": "c", "updates": [{"q": {"_id": 2}, "u": {"$set": {"owner": "w1"}}}]})");
  write(R"({"delete": "c", "deletes": [{"q": {"_id": 1}, "limit": 1}]})");
  bson::Array owned = batch(more(by_owner));
  ASSERT_EQ(types(owned), (std::vector<std::string>{"insert", "update"}));
  bson::Array deleted = batch(more(deletes));
  ASSERT_EQ(deleted.size(), 1u);
  EXPECT_TRUE(Same(shape(deleted[0]), R"({"_id": "T", "documentKey": {"_id": 1}})"));
}

TEST_F(ChangeStreamTest, AStageThatChangesTheTokenFailsTheStream) {
  Document opened = open("{}", R"([{"$project": {"_id": 0}}])");
  write(R"({"insert": "c", "documents": [{"_id": 1}]})");
  try {
    more(opened);
    FAIL() << "expected ChangeStreamFatalError";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), code::kChangeStreamFatalError);
    EXPECT_TRUE(std::string(e.what()).starts_with(
        "Executor error during getMore :: caused by :: Encountered an event whose _id field"))
        << e.what();
  }
}

// A stage can replace the token with a value whose parts are shared many times (2^40 leaves in
// 40 arrays): the event is measured, within a bound, before the token check renders it, so the
// getMore fails at once (13548) instead of rendering it path by path under the store's lock.
TEST_F(ChangeStreamTest, ATokenReplacedByASharedValueFailsAtOnce) {
  Document opened = open(
      "{}",
      R"([{"$addFields": {"_id": {"$reduce": {"input": [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], "initialValue": 0, "in": ["$$value", "$$value"]}}}}])");
  write(R"({"insert": "c", "documents": [{"_id": 1}]})");
  try {
    more(opened);
    FAIL() << "expected the event to be refused";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), code::kBufBuilderTooLarge) << e.what();
  }
}

// A getMore's maxTimeMS is how long it awaits events, not a deadline on evaluating them: events
// are evaluated after the wait. Received an hour ago, a getMore with maxTimeMS still evaluates a
// stage of 6000 operators per event.
TEST_F(ChangeStreamTest, AGetMoresMaxTimeIsNoDeadline) {
  Document opened = open(
      "{}",
      R"([{"$addFields": {"v": {"$reduce": {"input": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], "initialValue": 0, "in": {"$add": ["$$value", 1]}}}}}])");
  write(R"({"insert": "c", "documents": [{"_id": 1}]})");
  received_ago_ = std::chrono::hours(1);
  const Document r = run(bson::Document{{"getMore", *cursor_of(opened).get("id")},
                                        {"collection", bson::V("c")},
                                        {"maxTimeMS", bson::V(int32_t{1000})}});
  const bson::Array events = batch(r);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].as_document().get("v")->as_int32(), 2000);
}

TEST_F(ChangeStreamTest, ResumeAfterATokenReturnsExactlyTheEventsAfterIt) {
  Document opened = open();
  for (int i = 1; i <= 4; ++i) {
    run(Document{{"insert", bson::V("c")},
                 {"documents", bson::V(bson::Array{bson::V(Document{{"_id", bson::V(i)}})})}});
  }
  bson::Array events = batch(more(opened));
  ASSERT_EQ(events.size(), 4u);
  auto ids_after = [&](const Document& stage) {
    std::vector<int32_t> ids;
    for (const Value& e : batch(open(js(stage)))) {
      ids.push_back(e.as_document().get("documentKey")->as_document().get("_id")->as_int32());
    }
    return ids;
  };
  EXPECT_EQ(ids_after(Document{{"resumeAfter", bson::V(token_of(events[1]))}}),
            (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(ids_after(Document{{"startAfter", bson::V(token_of(events[0]))}}),
            (std::vector<int32_t>{2, 3, 4}));
  // startAtOperationTime includes the event at that time.
  Value at = *events[2].as_document().get("clusterTime");
  EXPECT_EQ(ids_after(Document{{"startAtOperationTime", at}}), (std::vector<int32_t>{3, 4}));
  // A high-water mark resumes after everything the batch covered.
  Document r = more(opened);
  EXPECT_EQ(ids_after(Document{{"resumeAfter", *cursor_of(r).get("postBatchResumeToken")}}),
            (std::vector<int32_t>{}));
}

TEST_F(ChangeStreamTest, ATokenWhoseEventIsNotInTheOplogCannotResume) {
  write(R"({"insert": "c", "documents": [{"_id": 1}]})");
  Document opened = open();
  write(R"({"insert": "c", "documents": [{"_id": 2}]})");
  bson::Array events = batch(more(opened));
  ASSERT_EQ(events.size(), 1u);
  ResumeToken forged = parse_resume_token(token_of(events[0]));
  forged.ts.seconds -= 1;  // a second before the event: no entry there
  CommandError e = open_error(js(Document{{"resumeAfter", bson::V(forged.to_document())}}));
  EXPECT_EQ(e.code(), code::kChangeStreamFatalError);
  EXPECT_NE(std::string(e.what()).find(
                "Executor error during aggregate command on namespace: db.c :: caused by :: "
                "cannot resume stream; the resume token was not found."),
            std::string::npos)
      << e.what();
}

TEST_F(ChangeStreamTest, OnlyMajorityCommittedEventsAreReturned) {
  OpTime committed;
  customize_ = [&](StoreOptions& o) { o.majority_read_point = [&] { return committed; }; };
  make_store(60);
  Document opened = open();
  write(R"({"insert": "c", "documents": [{"_id": 1}]})");
  write(R"({"insert": "c", "documents": [{"_id": 2}]})");
  EXPECT_TRUE(batch(more(opened)).empty());  // nothing committed yet
  // Commit the first insert only: the stream returns it and nothing after.
  {
    auto entries = store_->oplog_after(OpTime{}, 100);
    ASSERT_GE(entries.size(), 2u);
    const Document& first_insert = entries[entries.size() - 2];
    committed = OpTime{first_insert.get("ts")->as_timestamp(), first_insert.get("t")->as_int64()};
  }
  bson::Array events = batch(more(opened));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(Same(*events[0].as_document().get("documentKey"), R"({"_id": 1})"));
  committed = store_->last_applied();
  bson::Array rest = batch(more(opened));
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_TRUE(Same(*rest[0].as_document().get("documentKey"), R"({"_id": 2})"));
}

// updateLookup reads at the commit point: the document as it was there, whatever this or
// another document of the collection became after it (here: 1 deleted, then 2 updated).
TEST_F(ChangeStreamTest, UpdateLookupOfACommittedEventReadsTheDocumentAtTheCommitPoint) {
  OpTime committed;
  customize_ = [&](StoreOptions& o) { o.majority_read_point = [&] { return committed; }; };
  make_store(60);
  Document opened = open(R"({"fullDocument": "updateLookup"})");
  write(R"({"insert": "c", "documents": [{"_id": 1, "v": 1}, {"_id": 2, "v": 1}]})");
  write(R"({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"v": 2}}}]})");
  committed = store_->last_applied();
  write(R"({"delete": "c", "deletes": [{"q": {"_id": 1}, "limit": 1}]})");
  write(R"({"update": "c", "updates": [{"q": {"_id": 2}, "u": {"$set": {"v": 5}}}]})");
  bson::Array events = batch(more(opened));
  ASSERT_EQ(types(events), (std::vector<std::string>{"insert", "insert", "update"}));
  EXPECT_TRUE(Same(*events[2].as_document().get("fullDocument"), R"({"_id": 1, "v": 2})"))
      << js(events[2]);
}

TEST_F(ChangeStreamTest, AResumePointTheOplogCapDroppedIsHistoryLost) {
  customize_ = [](StoreOptions& o) { o.oplog_max_entries = 5; };
  make_store(60);
  Document opened = open();
  write(R"({"insert": "c", "documents": [{"_id": 1}]})");
  bson::Array first = batch(more(opened));
  ASSERT_EQ(first.size(), 1u);
  Document early = token_of(first[0]);
  for (int i = 2; i <= 10; ++i) {
    run(Document{{"insert", bson::V("c")},
                 {"documents", bson::V(bson::Array{bson::V(Document{{"_id", bson::V(i)}})})}});
  }
  CommandError lost = open_error(js(Document{{"resumeAfter", bson::V(early)}}));
  EXPECT_EQ(lost.code(), code::kChangeStreamHistoryLost);
  EXPECT_STREQ(lost.what(),
               "Resume of change stream was not possible, as the resume point may no longer be "
               "in the oplog.");
  Value old_time = *first[0].as_document().get("clusterTime");
  EXPECT_EQ(open_error(js(Document{{"startAtOperationTime", old_time}})).code(),
            code::kChangeStreamHistoryLost);
  // The open stream's own position fell off the oplog too: its next getMore fails.
  try {
    more(opened);
    FAIL() << "expected CappedPositionLost";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), code::kCappedPositionLost);
  }
}

TEST_F(ChangeStreamTest, BatchSizeBoundsEveryBatch) {
  Document opened = open("{}", "[]", "c", 0);  // batchSize 0: an empty first batch
  EXPECT_TRUE(batch(opened).empty());
  EXPECT_NE(cursor_of(opened).get("id")->as_int64(), 0);
  for (int i = 1; i <= 5; ++i) {
    run(Document{{"insert", bson::V("c")},
                 {"documents", bson::V(bson::Array{bson::V(Document{{"_id", bson::V(i)}})})}});
  }
  EXPECT_EQ(batch(more(opened, 2)).size(), 2u);
  EXPECT_EQ(batch(more(opened, 2)).size(), 2u);
  EXPECT_EQ(batch(more(opened, 2)).size(), 1u);
}

TEST_F(ChangeStreamTest, KilledCursorsAreGoneAndOpenStreamsAreBounded) {
  Document opened = open();
  const Document& c = cursor_of(opened);
  Document killed =
      run(Document{{"killCursors", bson::V("c")}, {"cursors", bson::V(bson::Array{*c.get("id")})}});
  EXPECT_EQ(killed.get("cursorsKilled")->as_array().size(), 1u);
  try {
    more(opened);
    FAIL() << "expected CursorNotFound";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), code::kCursorNotFound);
  }
  Document oldest = open();
  clock_.set_offset_ms(1'000);  // every later stream was used after it
  for (size_t i = 0; i < CursorManager::kMaxStreamCursors; ++i) open();
  EXPECT_THROW(more(oldest), CommandError);  // the least recently used one was closed
}

TEST_F(ChangeStreamTest, GetMoreOfAnOrdinaryCursorRefusesMaxTimeMS) {
  write(R"({"insert": "c", "documents": [{"_id": 1}, {"_id": 2}]})");
  Document found = run(J(R"({"find": "c", "batchSize": 1})"));
  Document cmd{{"getMore", *cursor_of(found).get("id")},
               {"collection", bson::V("c")},
               {"maxTimeMS", bson::V(int32_t{10})}};
  try {
    run("db", cmd);
    FAIL() << "expected BadValue";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), code::kBadValue);
  }
}

struct BadStage {
  const char* stage;
  const char* stages;
  int32_t code;
  const char* message;  // a part of mongod's message
};

TEST_F(ChangeStreamTest, BadOptionsGetMongodsErrors) {
  const BadStage cases[] = {
      {R"({"fullDocument": "always"})", "[]", code::kBadValue,
       "Enumeration value 'always' for field '$changeStream.fullDocument' is not a valid value."},
      {R"({"fullDocument": 1})", "[]", code::kTypeMismatch,
       "BSON field '$changeStream.fullDocument' is the wrong type 'int', expected type 'string'"},
      {R"({"fullDocumentBeforeChange": "on"})", "[]", code::kBadValue, "is not a valid value"},
      {R"({"colour": 1})", "[]", code::kUnknownField,
       "BSON field '$changeStream.colour' is an unknown field."},
      {R"({"startAtOperationTime": 5})", "[]", code::kTypeMismatch, "expected type 'timestamp'"},
      {R"({"resumeAfter": "x"})", "[]", code::kTypeMismatch, "expected type 'object'"},
      {R"({"resumeAfter": {}})", "[]", 40647, "Bad resume token: _data of missing or of wrong"},
      {R"({"resumeAfter": {"_data": 5}})", "[]", 40647, "Expected string"},
      {R"({"resumeAfter": {"_data": "zz"}})", "[]", code::kFailedToParse,
       "resume token string was not a valid hex string"},
      {R"({"resumeAfter": {"_data": ""}})", "[]", 40649, "invalid empty resume token"},
      {R"({"resumeAfter": {"_data": "8263A1"}})", "[]", code::kFailedToParse,
       "is not a resume token of this server"},
      {R"({"resumeAfter": {"_data": "82000000010000000166"}})", "[]", code::kFailedToParse,
       "is not a resume token of this server"},
      {R"({"resumeAfter": {"_data": "82000000010000000105"}})", "[]", code::kFailedToParse,
       "is not a resume token of this server"},
      {R"({"resumeAfter": {"_data": "82000000010000000001", "_typeBits": 1}})", "[]", 40648,
       "_typeBits of wrong type"},
      {R"({"resumeAfter": {"_data": "8200000001000000016D01"},
           "startAfter": {"_data": "8200000001000000016D01"}})",
       "[]", 50865, "Do not specify both 'resumeAfter' and 'startAfter'"},
      {R"({"startAfter": {"_data": "8200000001000000016D01"},
           "startAtOperationTime": {"$timestamp": {"t": 1, "i": 1}}})",
       "[]", 40674, "Only one type of resume option is allowed"},
      {R"({"allChangesForCluster": true})", "[]", code::kInvalidOptions,
       "may only be opened on the 'admin' database"},
      {R"({"allChangesForCluster": 1})", "[]", code::kTypeMismatch, "expected type 'bool'"},
      {R"({"showExpandedEvents": true})", "[]", code::kInvalidOptions, "showExpandedEvents"},
      {"{}", R"([{"$group": {"_id": 1}}])", code::kIllegalOperation,
       "$group is not permitted in a $changeStream pipeline"},
      {"{}", R"([{"$limit": 1}])", code::kIllegalOperation, "$limit is not permitted"},
      {"{}", R"([{"$changeStream": {}}])", 40602,
       "$changeStream is only valid as the first stage in a pipeline."},
      {"{}", R"([{"$nope": {}}])", 40324, "Unrecognized pipeline stage name: '$nope'"},
      {"{}", R"([{"$match": {"$nope": 1}}])", code::kBadValue, "unknown top level operator"},
  };
  for (const BadStage& c : cases) {
    CommandError e = open_error(c.stage, c.stages);
    EXPECT_EQ(e.code(), c.code) << c.stage << " " << c.stages << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos)
        << c.stage << " " << c.stages << ": " << e.what();
  }
}

TEST_F(ChangeStreamTest, StreamsAreRefusedWhereMongodRefusesThem) {
  EXPECT_EQ(open_error("{}", "[]", "c", "local").code(), code::kInvalidNamespace);
  EXPECT_EQ(open_error("{}", "[]", "", "admin").code(), code::kInvalidNamespace);
  EXPECT_EQ(open_error("{}", "[]", "system.views").code(), code::kInvalidNamespace);
  EXPECT_STREQ(open_error("{}", "[]", "c", "config").what(),
               "$changeStream may not be opened on the internal config database");
  // The whole cluster: every database but admin, config and local.
  Document cluster = open(R"({"allChangesForCluster": true})", "[]", "", 101, "admin");
  run("other", J(R"({"insert": "x", "documents": [{"_id": 1}]})"));
  run("config", J(R"({"insert": "x", "documents": [{"_id": 1}]})"));
  bson::Array events = batch(more(cluster, 0, "admin"));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(Same(*events[0].as_document().get("ns"), R"({"db": "other", "coll": "x"})"));
  // A standalone has no change streams.
  customize_ = [](StoreOptions& o) { o.replica_set = [] { return false; }; };
  make_store(60);
  CommandError standalone = open_error("{}");
  EXPECT_EQ(standalone.code(), 40573);
  EXPECT_STREQ(standalone.what(), "The $changeStream stage is only supported on replica sets");
}

TEST_F(ChangeStreamTest, RequiredImagesFailAndWhenAvailableImagesAreNull) {
  Document when_available =
      open(R"({"fullDocument": "whenAvailable", "fullDocumentBeforeChange": "whenAvailable"})");
  Document required = open(R"({"fullDocument": "required"})");
  write(R"({"insert": "c", "documents": [{"_id": 1}]})");
  write(R"({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"v": 1}}}]})");
  bson::Array events = batch(more(when_available));
  ASSERT_EQ(events.size(), 2u);
  for (const char* image : {"fullDocument", "fullDocumentBeforeChange"}) {
    const Value* v = events[1].as_document().get(image);
    ASSERT_NE(v, nullptr) << image;
    EXPECT_TRUE(v->is_null()) << image;
  }
  try {
    more(required);
    FAIL() << "expected NoMatchingDocument";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), code::kNoMatchingDocument);
  }
}

// Random $changeStream stages built from the real field names, good and bad values, and tokens
// (well-formed, truncated, non-hex, of the wrong type): each open either succeeds or fails with a
// CommandError, never anything else.
rc::Gen<Value> option_value_gen() {
  return rc::gen::oneOf(
      rc::gen::element<Value>(bson::V("default"), bson::V("updateLookup"), bson::V("required"),
                              bson::V("whenAvailable"), bson::V("off"), bson::V(""), bson::V(true),
                              bson::V(false), bson::V(int32_t{1}), Value::null(),
                              Value::timestamp(bson::Timestamp{1, 1}), bson::V(Document{}),
                              bson::V(bson::Array{})),
      rc::gen::map(rc::gen::string<std::string>(),
                   [](std::string s) {
                     return bson::V(Document{{"_data", bson::V(std::move(s))}});
                   }),
      rc::gen::map(
          rc::gen::container<std::string>(rc::gen::element('0', '1', '2', '6', '8', 'D', 'F', 'z')),
          [](std::string s) {
            return bson::V(Document{{"_data", bson::V(s)}});
          }),
      rc::gen::map(rc::gen::arbitrary<uint32_t>(), [](uint32_t t) {
        ResumeToken token{bson::Timestamp{t, t % 7}, static_cast<ResumeToken::Kind>(1 + t % 3)};
        return bson::V(token.to_document());
      }));
}

RC_GTEST_PROP(ChangeStreamFuzz, MalformedStagesGetCommandErrorsNeverCrashes, ()) {
  ServerClock clock;
  FailPoints failpoints;
  StoreOptions options;
  options.clock = &clock;
  options.failpoints = &failpoints;
  Store store(options);
  CommandRegistry registry;
  store.register_commands(registry);
  auto fields = *rc::gen::container<std::vector<std::pair<std::string, Value>>>(rc::gen::pair(
      rc::gen::element<std::string>("fullDocument", "fullDocumentBeforeChange", "resumeAfter",
                                    "startAfter", "startAtOperationTime", "allChangesForCluster",
                                    "showExpandedEvents", "bogus"),
      option_value_gen()));
  Document stage;
  for (auto& [k, v] : fields) stage.append(k, v);
  Value stage_value = *rc::gen::oneOf(rc::gen::just(bson::V(stage)),
                                      rc::gen::element<Value>(bson::V(int32_t{1}), bson::V("x")));
  CommandContext ctx;
  ctx.db = *rc::gen::element<std::string>("db", "admin", "local");
  ctx.body = Document{
      {"aggregate", *rc::gen::element<Value>(bson::V("c"), bson::V(int32_t{1}), bson::V(2.5))},
      {"pipeline", bson::V(bson::Array{bson::V(Document{{"$changeStream", stage_value}})})},
      {"cursor", bson::V(Document{})}};
  ctx.name = "aggregate";
  try {
    Document reply = registry.find("aggregate")->handler(ctx);
    RC_ASSERT(reply.has("cursor"));
  } catch (const CommandError& e) {
    RC_ASSERT(e.code() != code::kInternalError);
    RC_ASSERT(std::string(e.what()).size() > 0);
  }
}

}  // namespace
}  // namespace mongosim::data::testing
