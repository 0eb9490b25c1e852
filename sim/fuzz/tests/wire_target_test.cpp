// The wire fuzz target's fixtures (sim/fuzz/wire_target.h) serve what they claim to: the
// one-member set is a writable primary that serves the seed corpus's lock-client session (so
// mutations of it reach the set's session, read- and write-concern and change-stream paths), the
// two-member set's secondary serves the member-to-member commands past their topology check, a
// standalone refuses what only a set serves, and a wait past the serve budget ends at shutdown
// with a reply and no later command served.
//
// What this leaves out: whether mutations find anything (fuzz.wire.mutations runs them) and
// timing (the budget bounds a run; no assertion here depends on how long anything took).
#include "fuzz/wire_target.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/error_codes.h"
#include "bson/codec.h"
#include "server/op_msg.h"
#include "server/wire.h"

namespace mongosim::fuzz {
namespace {

using bson::Document;
using bson::V;

std::string corpus_file(const std::string& name) {
  std::ifstream file(std::string(LOCKLAB_FUZZ_CORPUS) + "/" + name, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (bytes.empty()) ADD_FAILURE() << "no corpus file " << name << " in " << LOCKLAB_FUZZ_CORPUS;
  return bytes;
}

// Each OP_MSG reply's body, in order; fails the test on bytes that are not whole replies.
std::vector<Document> reply_bodies(const std::string& bytes) {
  std::vector<Document> out;
  size_t at = 0;
  while (at < bytes.size()) {
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data()) + at;
    if (bytes.size() - at < server::kHeaderBytes + 5) {
      ADD_FAILURE() << "a partial reply at byte " << at;
      break;
    }
    server::MessageHeader h = server::decode_header(p);
    const size_t body_at = server::kHeaderBytes + 4 + 1;  // flag bits, section kind 0
    if (h.op_code != server::opcode::kMsg || h.message_length < static_cast<int32_t>(body_at) ||
        static_cast<size_t>(h.message_length) > bytes.size() - at) {
      ADD_FAILURE() << "not a whole OP_MSG reply at byte " << at;
      break;
    }
    bson::DecodeResult body =
        bson::decode_document(p + body_at, static_cast<size_t>(h.message_length) - body_at);
    if (!body.doc) {
      ADD_FAILURE() << "reply at byte " << at << ": " << body.error;
      break;
    }
    out.push_back(std::move(*body.doc));
    at += static_cast<size_t>(h.message_length);
  }
  return out;
}

std::vector<Document> serve(const std::string& input, Topology topology) {
  return reply_bodies(
      serve_wire_input(reinterpret_cast<const uint8_t*>(input.data()), input.size(), topology));
}

double ok(const Document& reply) {
  const bson::Value* v = reply.get("ok");
  return v != nullptr && v->is_number() ? v->number_as_double() : -1;
}

int32_t code(const Document& reply) {
  const bson::Value* v = reply.get("code");
  return v != nullptr && v->is_number() ? static_cast<int32_t>(v->number_as_double()) : 0;
}

std::string request(int32_t id, Document body) {
  body.append("$db", V("fuzz"));
  return server::encode_op_msg_request(id, 0, body);
}

TEST(WireTarget, TheSetServesALockClientsSession) {
  std::vector<Document> replies = serve(corpus_file("set-lock-client"), Topology::kOneMemberSet);
  // initiate, hello, findAndModify, update, find, aggregate, getMore, endSessions
  ASSERT_EQ(replies.size(), 8u);
  for (size_t i = 0; i < replies.size(); ++i) {
    EXPECT_EQ(ok(replies[i]), 1.0) << "reply " << i << ": " << bson::to_json(replies[i]);
  }
  const bson::Value* writable = replies[1].get("isWritablePrimary");
  ASSERT_NE(writable, nullptr);
  EXPECT_TRUE(writable->type() == bson::Type::kBool && writable->as_bool())
      << "the set's hello: not a primary";
  EXPECT_EQ(replies[3].get("n")->number_as_double(), 1.0) << "the retryable update matched nothing";
}

TEST(WireTarget, TheSecondaryServesTheMemberToMemberCommands) {
  std::vector<Document> replies =
      serve(corpus_file("set-member-commands"), Topology::kSecondaryOfTwo);
  // initiate, replSetGetStatus, then heartbeat, updatePosition, fetchOplog, requestVotes,
  // rollbackOptimes, rollbackFetch, stepDown, freeze
  ASSERT_EQ(replies.size(), 10u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(ok(replies[i]), 1.0) << "reply " << i << ": " << bson::to_json(replies[i]);
  }
  EXPECT_EQ(replies[1].get("myState")->number_as_double(), 2.0) << "not a secondary";
  // On the one-member set the same commands stop at the topology check.
  std::vector<Document> alone = serve(corpus_file("set-member-commands"), Topology::kOneMemberSet);
  ASSERT_EQ(alone.size(), 10u);
  EXPECT_EQ(code(alone[2]), code::kNotYetInitialized) << bson::to_json(alone[2]);
}

TEST(WireTarget, AStandaloneRefusesWhatOnlyASetServes) {
  std::vector<Document> replies = serve(corpus_file("set-lock-client"), Topology::kStandalone);
  ASSERT_EQ(replies.size(), 7u);  // no initiate ahead of the input
  EXPECT_EQ(ok(replies[1]), 0.0) << "a txnNumber on a standalone: " << bson::to_json(replies[1]);
  EXPECT_EQ(code(replies[4]), 40573)
      << "a change stream on a standalone: " << bson::to_json(replies[4]);
}

TEST(WireTarget, AWaitPastTheBudgetEndsAtShutdownAndNothingAfterItIsServed) {
  // A change stream, its getMore that would wait ten minutes for an event, then a ping.
  const std::string waits =
      request(1,
              Document{{"aggregate", V("c")},
                       {"pipeline", V(bson::Array{V(Document{{"$changeStream", V(Document{})}})})},
                       {"cursor", V(Document{})}}) +
      request(2, Document{{"getMore", V(cursor_id(1))},
                          {"collection", V("c")},
                          {"maxTimeMS", V(int32_t{600000})}}) +
      request(3, Document{{"ping", V(int32_t{1})}});
  std::vector<Document> replies = serve(waits, Topology::kOneMemberSet);
  ASSERT_EQ(replies.size(), 3u) << "initiate, aggregate, the interrupted getMore; no ping";
  EXPECT_EQ(code(replies[2]), code::kInterruptedAtShutdown) << bson::to_json(replies[2]);

  // A write paused by a fail point before its oplog append, then a ping.
  Document configure{{"configureFailPoint", V("hangBeforeOplogAppend")}, {"mode", V("alwaysOn")}};
  configure.append("$db", V("admin"));
  const std::string paused =
      server::encode_op_msg_request(1, 0, configure) +
      request(2, Document{{"insert", V("c")}, {"documents", V(bson::Array{V(Document{})})}}) +
      request(3, Document{{"ping", V(int32_t{1})}});
  for (Topology topology : kTopologies) {
    if (topology == Topology::kSecondaryOfTwo) continue;  // a secondary refuses the write first
    std::vector<Document> r = serve(paused, topology);
    const size_t insert = topology == Topology::kStandalone ? 1 : 2;
    ASSERT_EQ(r.size(), insert + 1) << "the paused insert ends the input; no ping";
    const bson::Value* errors = r[insert].get("writeErrors");
    ASSERT_TRUE(errors != nullptr && errors->is_array() && errors->as_array().size() == 1)
        << bson::to_json(r[insert]);
    EXPECT_EQ(code(errors->as_array()[0].as_document()), code::kInterruptedAtShutdown);
  }
}

}  // namespace
}  // namespace mongosim::fuzz
