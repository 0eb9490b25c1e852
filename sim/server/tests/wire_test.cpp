// Framing and parsing: every malformed shape gets the refusal the reference prescribes
// (docs/mongodb-behaviour.md: Framing; OP_MSG; Legacy OP_QUERY), and well-formed messages parse to
// the expected command.
#include "server/wire.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "base/crc32c.h"
#include "base/error_codes.h"
#include "bson/codec.h"
#include "server/op_msg.h"
#include "server/op_query.h"

namespace mongosim::server {
namespace {

using bson::Document;
using bson::V;

const uint8_t* bytes(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

OpMsgParse parse(const std::string& message) {
  return parse_op_msg(bytes(message), message.size());
}

Document ping() {
  return Document{{"ping", V(int32_t{1})}, {"$db", V("admin")}};
}

// Builds an OP_MSG by hand from raw section bytes, for shapes the encoder cannot produce.
std::string raw_op_msg(uint32_t flags, const std::string& sections) {
  std::string payload;
  append_u32_le(payload, flags);
  return frame_message(7, 0, opcode::kMsg, payload + sections);
}

std::string body_section(const Document& doc) {
  return std::string(1, '\0') + bson::encode_document(doc);
}

TEST(Crc32c, MatchesTheStandardCheckValue) {
  std::string check = "123456789";
  EXPECT_EQ(crc32c(bytes(check), check.size()), 0xE3069283u);
  EXPECT_EQ(crc32c(nullptr, 0), 0u);
}

TEST(Wire, MessageLengthLimits) {
  EXPECT_TRUE(check_message_length(15).has_value());
  EXPECT_TRUE(check_message_length(-1).has_value());
  EXPECT_TRUE(check_message_length(kMaxMessageBytes + 1).has_value());
  EXPECT_FALSE(check_message_length(16).has_value());
  EXPECT_FALSE(check_message_length(kMaxMessageBytes).has_value());
}

TEST(OpMsg, ParsesBodyAndMergesSequences) {
  bson::Array docs = {V(Document{{"a", V(int32_t{1})}}), V(Document{{"a", V(int32_t{2})}})};
  std::string msg = encode_op_msg_request(1, 0, Document{{"insert", V("c")}, {"$db", V("test")}},
                                          {{"documents", docs}});
  OpMsgParse p = parse(msg);
  ASSERT_TRUE(p.request) << p.refusal->message;
  EXPECT_EQ(p.request->body.first_key(), "insert");
  ASSERT_TRUE(p.request->body.has("documents"));
  EXPECT_EQ(p.request->body.get("documents")->as_array().size(), 2u);
}

TEST(OpMsg, SequenceMayComeBeforeBody) {
  std::string seq_docs = bson::encode_document(Document{{"x", V(int32_t{1})}});
  std::string seq;
  seq.push_back('\1');
  append_i32_le(seq, static_cast<int32_t>(4 + 10 + seq_docs.size()));
  seq += std::string("documents") + '\0' + seq_docs;
  OpMsgParse p =
      parse(raw_op_msg(0, seq + body_section(Document{{"insert", V("c")}, {"$db", V("t")}})));
  ASSERT_TRUE(p.request);
  EXPECT_EQ(p.request->body.get("documents")->as_array().size(), 1u);
}

TEST(OpMsg, ValidChecksumIsAccepted) {
  OpMsgParse p = parse(encode_op_msg_request(1, 0, ping(), {}, true));
  ASSERT_TRUE(p.request) << p.refusal->message;
  EXPECT_EQ(p.request->body.first_key(), "ping");
}

TEST(OpMsg, BadChecksumCloses) {
  std::string msg = encode_op_msg_request(1, 0, ping(), {}, true);
  msg[msg.size() - 1] ^= 0x01;
  OpMsgParse p = parse(msg);
  ASSERT_TRUE(p.refusal);
  EXPECT_TRUE(p.refusal->close_connection);
  EXPECT_EQ(p.refusal->code, code::kChecksumMismatch);
}

TEST(OpMsg, UnknownRequiredFlagCloses) {
  OpMsgParse p = parse(encode_op_msg_request(1, 1u << 5, ping()));
  ASSERT_TRUE(p.refusal);
  EXPECT_TRUE(p.refusal->close_connection);
  EXPECT_EQ(p.refusal->code, code::kIllegalOpMsgFlag);
}

TEST(OpMsg, UnknownOptionalFlagIsIgnored) {
  OpMsgParse p = parse(encode_op_msg_request(1, 1u << 20, ping()));
  EXPECT_TRUE(p.request);
}

TEST(OpMsg, MoreToComeIsReported) {
  OpMsgParse p = parse(encode_op_msg_request(1, op_msg_flag::kMoreToCome, ping()));
  ASSERT_TRUE(p.request);
  EXPECT_TRUE(p.request->more_to_come());
}

TEST(OpMsg, TwoBodiesGetAnErrorReply) {
  OpMsgParse p = parse(raw_op_msg(0, body_section(ping()) + body_section(ping())));
  ASSERT_TRUE(p.refusal);
  EXPECT_FALSE(p.refusal->close_connection);
  EXPECT_EQ(p.refusal->code, 40430);
}

TEST(OpMsg, MissingBodyGetsAnErrorReply) {
  std::string seq;
  seq.push_back('\1');
  append_i32_le(seq, 4 + 2);
  seq += std::string("d") + '\0';
  OpMsgParse p = parse(raw_op_msg(0, seq));
  ASSERT_TRUE(p.refusal);
  EXPECT_FALSE(p.refusal->close_connection);
  EXPECT_EQ(p.refusal->code, 40587);
}

TEST(OpMsg, MissingDbGetsAnErrorReply) {
  OpMsgParse p = parse(encode_op_msg_request(1, 0, Document{{"ping", V(int32_t{1})}}));
  ASSERT_TRUE(p.refusal);
  EXPECT_FALSE(p.refusal->close_connection);
  EXPECT_EQ(p.refusal->code, 40571);
  EXPECT_NE(p.refusal->message.find("$db"), std::string::npos);
}

TEST(OpMsg, DbOfWrongTypeGetsTypeMismatch) {
  OpMsgParse p =
      parse(encode_op_msg_request(1, 0, Document{{"ping", V(1)}, {"$db", V(int32_t{3})}}));
  ASSERT_TRUE(p.refusal);
  EXPECT_EQ(p.refusal->code, code::kTypeMismatch);
}

TEST(OpMsg, DuplicateSequenceIdentifiers) {
  bson::Array one = {V(Document{{"a", V(int32_t{1})}})};
  OpMsgParse p = parse(encode_op_msg_request(1, 0, Document{{"insert", V("c")}, {"$db", V("t")}},
                                             {{"documents", one}, {"documents", one}}));
  ASSERT_TRUE(p.refusal);
  EXPECT_EQ(p.refusal->code, 40431);
}

TEST(OpMsg, SequenceAlsoInBody) {
  bson::Array one = {V(Document{{"a", V(int32_t{1})}})};
  OpMsgParse p = parse(encode_op_msg_request(
      1, 0, Document{{"insert", V("c")}, {"documents", V(one)}, {"$db", V("t")}},
      {{"documents", one}}));
  ASSERT_TRUE(p.refusal);
  EXPECT_EQ(p.refusal->code, 40433);
}

TEST(OpMsg, TooManySequences) {
  bson::Array one = {V(Document{{"a", V(int32_t{1})}})};
  OpMsgParse p = parse(encode_op_msg_request(1, 0, Document{{"insert", V("c")}, {"$db", V("t")}},
                                             {{"a", one}, {"b", one}, {"c", one}}));
  ASSERT_TRUE(p.refusal);
  EXPECT_EQ(p.refusal->code, code::kTooManyDocumentSequences);
}

TEST(OpMsg, UnknownSectionKindCloses) {
  OpMsgParse p = parse(raw_op_msg(0, body_section(ping()) + std::string(1, '\x07')));
  ASSERT_TRUE(p.refusal);
  EXPECT_TRUE(p.refusal->close_connection);
  EXPECT_EQ(p.refusal->code, 40432);
}

TEST(OpMsg, EveryTruncationIsRefusedWithoutReadingPastTheEnd) {
  std::string msg = encode_op_msg_request(1, 0, Document{{"insert", V("c")}, {"$db", V("t")}},
                                          {{"documents", {V(Document{{"a", V("x")}})}}});
  // Cut the message (keeping the header's own claim consistent with the bytes we pass).
  for (size_t cut = kHeaderBytes; cut < msg.size(); ++cut) {
    std::string truncated = msg.substr(0, cut);
    OpMsgParse p = parse(truncated);
    EXPECT_FALSE(p.request && p.request->body.has("documents") &&
                 p.request->body.get("documents")->as_array().size() == 1 && cut < msg.size())
        << "a message cut at " << cut << " parsed as the full message";
    if (!p.request) {
      EXPECT_FALSE(p.refusal->message.empty());
    }
  }
}

TEST(OpMsg, SectionLengthPastTheEndCloses) {
  std::string body = body_section(ping());
  body[1] = static_cast<char>(0x7f);  // the document's length byte claims far more than exists
  OpMsgParse p = parse(raw_op_msg(0, body));
  ASSERT_TRUE(p.refusal);
  EXPECT_TRUE(p.refusal->close_connection);
}

TEST(OpMsg, ReplyEncodingRoundTrips) {
  std::string reply = encode_op_msg(9, 7, Document{{"ok", V(1.0)}});
  MessageHeader h = decode_header(bytes(reply));
  EXPECT_EQ(h.message_length, static_cast<int32_t>(reply.size()));
  EXPECT_EQ(h.response_to, 7);
  EXPECT_EQ(h.op_code, opcode::kMsg);
  EXPECT_EQ(read_u32_le(bytes(reply) + kHeaderBytes), 0u);
}

RC_GTEST_PROP(OpMsg, ArbitraryBytesNeverCrashTheParser,
              (std::vector<uint8_t> tail, uint32_t flags)) {
  std::string payload;
  append_u32_le(payload, flags);
  payload.append(tail.begin(), tail.end());
  std::string msg = frame_message(1, 0, opcode::kMsg, payload);
  OpMsgParse p = parse(msg);
  RC_ASSERT(p.request.has_value() != p.refusal.has_value());
}

TEST(OpQuery, ParsesAndUnwrapsQuery) {
  Document wrapped{{"$query", V(Document{{"isMaster", V(int32_t{1})}, {"helloOk", V(true)}})},
                   {"$readPreference", V(Document{{"mode", V("secondaryPreferred")}})}};
  std::string msg = encode_op_query(3, kOpQuerySecondaryOkFlag, "admin.$cmd", wrapped);
  OpQueryParse p = parse_op_query(bytes(msg), msg.size());
  ASSERT_TRUE(p.request) << p.error;
  EXPECT_EQ(p.request->db, "admin");
  EXPECT_TRUE(p.request->command_namespace);
  EXPECT_TRUE(p.request->secondary_ok());
  EXPECT_EQ(p.request->command.first_key(), "isMaster");
}

TEST(OpQuery, NonCommandNamespaceIsFlagged) {
  std::string msg = encode_op_query(3, 0, "test.coll", Document{{"a", V(int32_t{1})}});
  OpQueryParse p = parse_op_query(bytes(msg), msg.size());
  ASSERT_TRUE(p.request);
  EXPECT_FALSE(p.request->command_namespace);
}

TEST(OpQuery, TruncationsAreRefused) {
  std::string msg = encode_op_query(3, 0, "admin.$cmd", Document{{"isMaster", V(int32_t{1})}});
  for (size_t cut = kHeaderBytes; cut < msg.size(); ++cut) {
    OpQueryParse p = parse_op_query(bytes(msg), cut);
    EXPECT_FALSE(p.request) << "accepted an OP_QUERY cut at " << cut;
    EXPECT_FALSE(p.error.empty());
  }
}

TEST(OpQuery, AllowedCommandsAndTheRefusal) {
  EXPECT_TRUE(op_query_command_allowed("isMaster"));
  EXPECT_TRUE(op_query_command_allowed("ismaster"));
  EXPECT_TRUE(op_query_command_allowed("hello"));
  EXPECT_FALSE(op_query_command_allowed("find"));
  EXPECT_FALSE(op_query_command_allowed("ISMASTER"));
  Document reply = unsupported_op_query_reply("find");
  EXPECT_EQ(reply.get("code")->as_int32(), 352);
  EXPECT_EQ(reply.get("codeName")->as_string(), "UnsupportedOpQueryCommand");
  EXPECT_EQ(reply.get("ok")->as_double(), 0.0);
  EXPECT_NE(reply.get("errmsg")->as_string().find("Unsupported OP_QUERY command: find"),
            std::string::npos);
}

TEST(OpQuery, ReplyHasMongodsFlagsAndOneDocument) {
  std::string reply = encode_op_reply(5, 3, Document{{"ok", V(1.0)}});
  const uint8_t* p = bytes(reply);
  EXPECT_EQ(decode_header(p).op_code, opcode::kReply);
  EXPECT_EQ(decode_header(p).response_to, 3);
  EXPECT_EQ(read_i32_le(p + kHeaderBytes), 8);       // responseFlags: AwaitCapable
  EXPECT_EQ(read_i32_le(p + kHeaderBytes + 16), 1);  // numberReturned
}

}  // namespace
}  // namespace mongosim::server
