#include "data/tests/store_fixture.h"

namespace mongosim::data::testing {
namespace {

constexpr const char* kLsid =
    R"("lsid": {"id": {"$binary": {"base64": "AAAAAAAAQACAAAAAAAAAAQ==", "subType": "04"}}})";

std::string with_session(std::string cmd, int64_t txn) {
  cmd.pop_back();  // the closing brace
  return cmd + ", " + kLsid + ", \"txnNumber\": {\"$numberLong\": \"" + std::to_string(txn) +
         "\"}}";
}

using RetryableWriteTest = StoreFixture;

TEST_F(RetryableWriteTest, RetriedInsertIsNotAppliedTwice) {
  std::string cmd = with_session(R"({"insert": "c", "documents": [{"_id": 1}, {"_id": 2}]})", 1);
  EXPECT_TRUE(Same(run(cmd), R"({"n": 2})"));
  EXPECT_TRUE(Same(run(cmd), R"({"n": 2, "retriedStmtIds": [0, 1]})"));
  EXPECT_EQ(all("c").size(), 2u);
}

// stmtIds are checked whole before any statement runs (one number per statement): a list that
// was found short at its second statement had already written the first.
TEST_F(RetryableWriteTest, StmtIdsOfTheWrongLengthWriteNothing) {
  // A wrong count is InvalidLength (16); an id that is no int is TypeMismatch (14) (1e20 once
  // went through an undefined cast).
  for (const auto& [ids, code] : std::vector<std::pair<std::string, int>>{{"[0]", 16},
                                                                          {"[0, 1, 2]", 16},
                                                                          {"[0, \"x\"]", 14},
                                                                          {"[0, 1e20]", 14},
                                                                          {"[0, 1.5]", 14}}) {
    const std::string cmd = with_session(
        std::string(R"({"insert": "c", "documents": [{"_id": 30}, {"_id": 31}], "stmtIds": )") +
            ids + "}",
        1);
    const CommandError e = fail(cmd);
    EXPECT_EQ(e.code(), code) << ids << ": " << e.what();
    EXPECT_TRUE(all("c").empty()) << ids << " wrote before it was refused";
  }
}

TEST_F(RetryableWriteTest, RetriedUpdateReturnsStoredResultIncludingUpsert) {
  run(R"({"insert": "c", "documents": [{"_id": 1, "x": 1}]})");
  std::string cmd = with_session(R"({"update": "c", "updates": [
      {"q": {"_id": 1}, "u": {"$inc": {"x": 1}}},
      {"q": {"_id": 2}, "u": {"$inc": {"x": 1}}, "upsert": true}]})",
                                 5);
  EXPECT_TRUE(Same(run(cmd), R"({"n": 2, "nModified": 1, "upserted": [{"index": 1, "_id": 2}]})"));
  EXPECT_TRUE(Same(run(cmd), R"({"n": 2, "nModified": 1, "upserted": [{"index": 1, "_id": 2}],
                                  "retriedStmtIds": [0, 1]})"));
  EXPECT_TRUE(Same(all("c")[0], R"({"_id": 1, "x": 2})"));
}

TEST_F(RetryableWriteTest, StatementThatWroteNothingReExecutes) {
  std::string cmd =
      with_session(R"({"delete": "c", "deletes": [{"q": {"_id": 1}, "limit": 1}]})", 1);
  EXPECT_TRUE(Same(run(cmd), R"({"n": 0})"));
  run(R"({"insert": "c", "documents": [{"_id": 1}]})");
  EXPECT_TRUE(Same(run(cmd), R"({"n": 1})"));
  EXPECT_TRUE(all("c").empty());
}

TEST_F(RetryableWriteTest, RetriedFindAndModifyReturnsStoredImages) {
  run(R"({"insert": "c", "documents": [{"_id": 1, "x": 1}]})");
  std::string pre = with_session(
      R"({"findAndModify": "c", "query": {"_id": 1}, "update": {"$inc": {"x": 1}}})", 1);
  EXPECT_TRUE(Same(
      run(pre),
      R"({"lastErrorObject": {"n": 1, "updatedExisting": true}, "value": {"_id": 1, "x": 1}})"));
  EXPECT_TRUE(Same(run(pre), R"({"lastErrorObject": {"n": 1, "updatedExisting": true},
                                  "value": {"_id": 1, "x": 1}, "retriedStmtId": 0})"));
  std::string post = with_session(
      R"({"findAndModify": "c", "query": {"_id": 1}, "update": {"$inc": {"x": 1}}, "new": true})",
      1);
  EXPECT_TRUE(Same(run(post), R"({"lastErrorObject": {"n": 1, "updatedExisting": true},
                                   "value": {"_id": 1, "x": 2}, "retriedStmtId": 0})"));
  EXPECT_TRUE(Same(all("c")[0], R"({"_id": 1, "x": 2})"));
}

TEST_F(RetryableWriteTest, RetriedUpsertAndRemoveFindAndModify) {
  std::string up = with_session(
      R"({"findAndModify": "c", "query": {"_id": 7}, "update": {"$set": {"a": 1}}, "upsert": true, "new": true})",
      1);
  run(up);
  EXPECT_TRUE(
      Same(run(up), R"({"lastErrorObject": {"n": 1, "updatedExisting": false, "upserted": 7},
                                 "value": {"_id": 7, "a": 1}, "retriedStmtId": 0})"));
  std::string rm =
      with_session(R"({"findAndModify": "c", "query": {"_id": 7}, "remove": true})", 2);
  run(rm);
  EXPECT_TRUE(Same(run(rm), R"({"lastErrorObject": {"n": 1}, "value": {"_id": 7, "a": 1},
                                 "retriedStmtId": 0})"));
}

TEST_F(RetryableWriteTest, MismatchedRetryShapesFail) {
  run(R"({"insert": "c", "documents": [{"_id": 1}, {"_id": 2}]})");
  run(with_session(R"({"findAndModify": "c", "query": {"_id": 1}, "remove": true})", 1));
  EXPECT_EQ(
      fail(with_session(
               R"({"findAndModify": "c", "query": {"_id": 1}, "update": {"$set": {"a": 1}}})", 1))
          .code(),
      40606);
  run(with_session(R"({"findAndModify": "c", "query": {"_id": 2}, "update": {"$set": {"a": 1}}})",
                   2));
  EXPECT_EQ(fail(with_session(R"({"findAndModify": "c", "query": {"_id": 2}, "remove": true})", 2))
                .code(),
            40609);
  run(with_session(
      R"({"findAndModify": "c", "query": {"_id": 3}, "update": {"$set": {"a": 1}}, "upsert": true})",
      3));
  EXPECT_EQ(
      fail(with_session(
               R"({"findAndModify": "c", "query": {"_id": 3}, "update": {"$set": {"a": 1}}})", 3))
          .code(),
      40608);
}

TEST_F(RetryableWriteTest, OlderTxnNumberIsTransactionTooOld) {
  run(with_session(R"({"insert": "c", "documents": [{"_id": 1}]})", 5));
  CommandError e = fail(with_session(R"({"insert": "c", "documents": [{"_id": 2}]})", 4));
  EXPECT_EQ(e.code(), code::kTransactionTooOld);
  EXPECT_NE(std::string(e.what()).find("Cannot start transaction 4"), std::string::npos);
  EXPECT_EQ(all("c").size(), 1u);
}

TEST_F(RetryableWriteTest, NewerTxnNumberForgetsOldStatements) {
  run(with_session(R"({"delete": "c", "deletes": [{"q": {}, "limit": 1}]})", 1));
  run(R"({"insert": "c", "documents": [{"_id": 1}]})");
  run(with_session(R"({"insert": "c", "documents": [{"_id": 2}]})", 1));
  run(R"({"delete": "c", "deletes": [{"q": {"_id": 2}, "limit": 1}]})");
  // txnNumber 2, stmt 0 never ran: it executes.
  EXPECT_TRUE(
      Same(run(with_session(R"({"insert": "c", "documents": [{"_id": 2}]})", 2)), R"({"n": 1})"));
  EXPECT_EQ(all("c").size(), 2u);
}

TEST_F(RetryableWriteTest, CloseConnectionFaultKeepsTheWriteAndDeduplicatesTheRetry) {
  failpoints_.configure(
      J(R"({"configureFailPoint": "onPrimaryTransactionalWrite", "mode": {"times": 1},
                              "data": {"closeConnection": true}})"));
  std::string cmd = with_session(R"({"insert": "c", "documents": [{"_id": 3}]})", 1);
  EXPECT_THROW(run(cmd), CloseConnection);
  EXPECT_TRUE(Same(run(cmd), R"({"n": 1, "retriedStmtIds": [0]})"));
  EXPECT_EQ(all("c").size(), 1u);
}

TEST_F(RetryableWriteTest, FailBeforeCommitDoesNotApply) {
  failpoints_.configure(
      J(R"({"configureFailPoint": "onPrimaryTransactionalWrite", "mode": {"times": 1},
                              "data": {"closeConnection": false, "failBeforeCommitExceptionCode": 1}})"));
  std::string cmd = with_session(
      R"({"findAndModify": "c", "query": {"_id": 3}, "update": {"$set": {"a": 1}}, "upsert": true})",
      1);
  CommandError e = fail(cmd);
  EXPECT_EQ(e.code(), 1);
  EXPECT_TRUE(all("c").empty());
  EXPECT_EQ(run(cmd).get("lastErrorObject")->as_document().get("n")->as_int32(), 1);
  EXPECT_EQ(all("c").size(), 1u);
}

// A code that is not an int32 (1e300 would be an undefined cast) is no code: the write applies.
TEST_F(RetryableWriteTest, FailBeforeCommitWithACodeThatIsNotAnInt32FailsNothing) {
  failpoints_.configure(
      J(R"({"configureFailPoint": "onPrimaryTransactionalWrite", "mode": {"times": 1},
            "data": {"closeConnection": false, "failBeforeCommitExceptionCode": 1e300}})"));
  std::string cmd = with_session(
      R"({"findAndModify": "c", "query": {"_id": 3}, "update": {"$set": {"a": 1}}, "upsert": true})",
      1);
  EXPECT_EQ(run(cmd).get("lastErrorObject")->as_document().get("n")->as_int32(), 1);
  EXPECT_EQ(all("c").size(), 1u);
}

TEST_F(RetryableWriteTest, FaultIsNotConsultedWithoutTxnNumber) {
  failpoints_.configure(
      J(R"({"configureFailPoint": "onPrimaryTransactionalWrite", "mode": "alwaysOn",
                              "data": {"closeConnection": true}})"));
  EXPECT_TRUE(Same(run(R"({"insert": "c", "documents": [{"_id": 1}]})"), R"({"n": 1})"));
  failpoints_.configure(
      J(R"({"configureFailPoint": "onPrimaryTransactionalWrite", "mode": "off"})"));
}

TEST_F(RetryableWriteTest, MalformedLsidIsRefused) {
  Document cmd = J(R"({"insert": "c", "documents": [{"_id": 1}], "lsid": {"id": 5},
                       "txnNumber": {"$numberLong": "1"}})");
  try {
    run(cmd);
    FAIL();
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), code::kTypeMismatch);
  }
}

}  // namespace
}  // namespace mongosim::data::testing
