// Every top-level field of the commands a driver sends for locks (writes, findAndModify, reads,
// cursors, sessions), and every field of a write's statement, given each BSON type in turn, on a
// one-member replica set: the member answers each with a reply that has `ok`, and serves the
// next. On a replica set the session, txnNumber, stmtIds, readConcern and write-concern paths run
// that a standalone refuses first (the wire fuzzer, sim/fuzz, serves a standalone): a txnNumber
// sent as a 32-bit int once failed an assertion there and ended the member.
//
// What this leaves out: fields nested deeper than a statement (a readConcern's level, a
// writeConcern's w: their own tests), right-typed values out of range, several wrong fields at
// once (the fuzzer), and waits (no field here can make a command wait: no afterClusterTime, no
// awaitData cursor).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bson/codec.h"
#include "server/tests/raw_client.h"
#include "testkit.h"

namespace mongosim::testing {
namespace {

using bson::Document;
using bson::V;
using bson::Value;
namespace kit = locklab::testkit;

Value session_id() {
  return V(Document{{"id", Value::binary(4, std::string(16, '\x07'))}});
}

// One command of each kind a lock client sends, every field well-formed.
std::vector<Document> commands() {
  const Value lsid = session_id();
  return {
      Document{{"insert", V("c")},
               {"documents", V(bson::Array{V(Document{{"_id", V(int32_t{1})}})})},
               {"ordered", V(true)},
               {"lsid", lsid},
               {"txnNumber", V(int64_t{1})},
               {"stmtIds", V(bson::Array{V(int32_t{0})})},
               {"writeConcern", V(Document{{"w", V(int32_t{1})}})},
               {"comment", V("c")}},
      Document{
          {"update", V("c")},
          {"updates",
           V(bson::Array{V(Document{{"q", V(Document{{"_id", V(int32_t{1})}})},
                                    {"u", V(Document{{"$set", V(Document{{"a", V(int32_t{1})}})}})},
                                    {"upsert", V(true)},
                                    {"multi", V(false)}})})},
          {"lsid", lsid},
          {"txnNumber", V(int64_t{2})}},
      Document{{"delete", V("c")},
               {"deletes", V(bson::Array{V(Document{{"q", V(Document{{"_id", V(int32_t{2})}})},
                                                    {"limit", V(int32_t{1})}})})},
               {"lsid", lsid},
               {"txnNumber", V(int64_t{3})}},
      Document{{"findAndModify", V("c")},
               {"query", V(Document{{"_id", V(int32_t{1})}})},
               {"update", V(Document{{"$inc", V(Document{{"a", V(int32_t{1})}})}})},
               {"new", V(true)},
               {"upsert", V(true)},
               {"fields", V(Document{{"a", V(int32_t{1})}})},
               {"sort", V(Document{{"_id", V(int32_t{1})}})},
               {"lsid", lsid},
               {"txnNumber", V(int64_t{4})}},
      Document{{"find", V("c")},
               {"filter", V(Document{})},
               {"sort", V(Document{{"_id", V(int32_t{1})}})},
               {"projection", V(Document{{"_id", V(int32_t{1})}})},
               {"limit", V(int64_t{5})},
               {"skip", V(int64_t{0})},
               {"batchSize", V(int32_t{2})},
               {"readConcern", V(Document{{"level", V("majority")}})},
               {"maxTimeMS", V(int32_t{1000})},
               {"lsid", lsid}},
      Document{{"aggregate", V("c")},
               {"pipeline", V(bson::Array{V(Document{{"$match", V(Document{})}})})},
               {"cursor", V(Document{})},
               {"readConcern", V(Document{{"level", V("local")}})},
               {"lsid", lsid}},
      Document{{"count", V("c")}, {"query", V(Document{})}, {"lsid", lsid}},
      Document{
          {"getMore", V(int64_t{12345})}, {"collection", V("c")}, {"batchSize", V(int32_t{1})}},
      Document{{"killCursors", V("c")}, {"cursors", V(bson::Array{V(int64_t{12345})})}},
      Document{{"endSessions", V(bson::Array{lsid})}},
  };
}

// A value of each BSON type.
std::vector<Value> values() {
  const uint8_t decimal_one[16] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x30};
  return {Value::dbl(1.5),
          V("x"),
          V(Document{{"k", V(int32_t{1})}}),
          V(bson::Array{V(int32_t{1})}),
          Value::binary(0, "ab"),
          Value::undefined(),
          Value::object_id(bson::ObjectId{}),
          V(true),
          Value::date(1),
          Value::null(),
          Value::regex("a", ""),
          Value::javascript("1"),
          Value::symbol("s"),
          V(int32_t{1}),
          Value::timestamp(bson::Timestamp{1, 1}),
          V(int64_t{1}),
          Value::decimal128(decimal_one),
          Value::min_key(),
          Value::max_key()};
}

// The command with field `field` (and, when `inner` >= 0, field `inner` of its first statement)
// set to `value`.
Document with_value(Document cmd, size_t field, int inner, const Value& value) {
  if (inner < 0) {
    cmd.at(field).second = value;
    return cmd;
  }
  bson::Array statements = cmd.at(field).second.as_array();
  Document statement = statements[0].as_document();
  statement.at(static_cast<size_t>(inner)).second = value;
  statements[0] = V(std::move(statement));
  cmd.at(field).second = V(std::move(statements));
  return cmd;
}

// The index of an update's or a delete's statement list, or -1 (an insert's statements are
// documents: any field of any type).
int statements_field(const Document& cmd) {
  const std::string& name = cmd.first_key();
  return name == "update" || name == "delete" ? 1 : -1;
}

TEST(FieldTypes, EveryFieldOfEveryTypeGetsAReplyAndTheMemberServesOn) {
  kit::ReplicaSet set({.members = 1, .election_timeout_ms = 0, .heartbeat_interval_ms = 0});
  RawClient raw(set.member(0).port());
  int sent = 0;
  // False when no reply came (the member ended, or closed the connection): the rest would
  // only repeat the failure.
  const auto expect_reply = [&](const Document& cmd, const std::string& what) {
    Document reply;
    try {
      reply = raw.command(cmd, "test");
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << ": " << e.what()
                    << " (the member may have ended): " << bson::to_json(cmd);
      return false;
    }
    ++sent;
    EXPECT_TRUE(reply.has("ok")) << what << ": " << bson::to_json(reply);
    return true;
  };
  // First well-formed: each is answered ok (the list is not a list of refusals).
  for (const Document& cmd : commands()) {
    Document reply = raw.command(cmd, "test");
    const Value* ok = reply.get("ok");
    const Value* code = reply.get("code");
    const bool cursor_not_found = code != nullptr && code->is_number() &&
                                  code->number_as_double() == 43;  // getMore of no cursor
    EXPECT_TRUE((ok != nullptr && ok->truthy()) ||
                (cmd.first_key() == "getMore" && cursor_not_found))
        << bson::to_json(reply);
  }
  for (const Document& cmd : commands()) {
    const int statements = statements_field(cmd);
    for (size_t field = 0; field < cmd.size(); ++field) {
      for (const Value& value : values()) {
        if (!expect_reply(with_value(cmd, field, -1, value),
                          cmd.first_key() + "." + cmd.at(field).first)) {
          return;
        }
        if (static_cast<int>(field) != statements) continue;
        const Document& statement = cmd.at(field).second.as_array()[0].as_document();
        for (size_t inner = 0; inner < statement.size(); ++inner) {
          if (!expect_reply(
                  with_value(cmd, field, static_cast<int>(inner), value),
                  cmd.first_key() + "." + cmd.at(field).first + "." + statement.at(inner).first)) {
            return;
          }
        }
      }
    }
  }
  EXPECT_GT(sent, 1000);
  EXPECT_TRUE(raw.command(Document{{"ping", V(int32_t{1})}}).get("ok")->truthy());
}

}  // namespace
}  // namespace mongosim::testing
