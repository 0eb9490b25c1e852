// Integration tests: the real mongosim binary on a free port, spoken to over raw sockets and
// through libmongoc.
#include <gtest/gtest.h>
#include <mongoc/mongoc.h>
#include <rapidcheck/gtest.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>

#include "base/error_codes.h"
#include "bson/codec.h"
#include "bson_owner.h"
#include "server/tests/mongoc_view.h"
#include "server/tests/raw_client.h"
#include "testkit.h"

namespace mongosim::testing {
namespace {

using bson::Document;
using OwnedBson = mongolock::bson::Bson;
using BsonReply = mongolock::bson::BsonReply;
using bson::V;
using locklab::testkit::MongosimNode;
namespace kit = locklab::testkit;

// --- libmongoc helpers ------------------------------------------------------------------

// Runs a command through libmongoc; returns the reply (ok:0 replies included) and the error.
struct MongocReply {
  bool ok = false;
  Document reply;
  std::string error;
  uint32_t code = 0;
};

MongocReply mongoc_command(mongoc_client_t* client, const Document& cmd, const char* db = "admin") {
  std::string raw = bson::encode_document(cmd);
  const OwnedBson command(
      bson_new_from_data(reinterpret_cast<const uint8_t*>(raw.data()), raw.size()));
  BsonReply reply;
  bson_error_t error;
  MongocReply out;
  out.ok = mongoc_client_command_simple(client, db, command.get(), nullptr, reply.out(), &error);
  out.reply = to_document(reply.get());
  out.error = error.message;
  out.code = error.code;
  return out;
}

// --- fixtures ---------------------------------------------------------------------------

class Standalone : public ::testing::Test {
 protected:
  MongosimNode server_;
};

// A one-member set of the kit's (a name of its own), initiated and ready.
class ReplicaSet : public ::testing::Test {
 protected:
  kit::ReplicaSet set_{{.members = 1, .election_timeout_ms = 0, .heartbeat_interval_ms = 0}};
  MongosimNode& server_ = set_.member(0);
};

int64_t command_total(const Document& status, const std::string& name) {
  const bson::Value* cmd =
      status.get("metrics")->as_document().get("commands")->as_document().get(name);
  return cmd == nullptr ? 0 : cmd->as_document().get("total")->as_int64();
}

// --- process and flags ------------------------------------------------------------------

TEST(Process, UnknownFlagExitsWithTwoNamingIt) {
  const locklab::ToolResult r = locklab::run_tool({MONGOSIM_PATH, "--no-such-flag"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("--no-such-flag"), std::string::npos) << r.output;
}

TEST(Process, BadSetParameterExitsWithTwo) {
  const locklab::ToolResult r = locklab::run_tool({MONGOSIM_PATH, "--setParameter", "nonsense=1"});
  EXPECT_EQ(r.code, 2) << r.output;
}

TEST(Process, HelpListsTheFlags) {
  const locklab::ToolResult r = locklab::run_tool({MONGOSIM_PATH, "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("--replSet"), std::string::npos) << r.output;
}

TEST_F(Standalone, LogsAndStopsCleanlyOnSigterm) {
  {
    RawClient raw(server_.port());
    raw.command(Document{{"ping", V(int32_t{1})}});
  }
  const locklab::ExitStatus status = server_.stop();
  ASSERT_EQ(status.signal, 0) << status.describe();
  EXPECT_EQ(status.code, 0);
  std::string log = server_.log_text();
  EXPECT_NE(log.find("\"msg\":\"Waiting for connections\""), std::string::npos) << log;
  EXPECT_NE(log.find("\"msg\":\"Connection accepted\""), std::string::npos) << log;
  EXPECT_NE(log.find("\"msg\":\"Connection ended\""), std::string::npos) << log;
}

TEST_F(Standalone, StopsWhileAClientBlocksInAFailPoint) {
  RawClient admin(server_.port());
  admin.command(Document{{"configureFailPoint", V("failCommand")},
                         {"mode", V("alwaysOn")},
                         {"data", V(Document{{"failCommands", V(bson::Array{V("ping")})},
                                             {"blockConnection", V(true)},
                                             {"blockTimeMS", V(int32_t{600000})}})}});
  RawClient blocked(server_.port());
  ASSERT_TRUE(blocked.send(
      server::encode_op_msg_request(1, 0, Document{{"ping", V(1)}, {"$db", V("admin")}})));
  // stop() would time out (and throw) if the blocked command held shutdown.
  const locklab::ExitStatus status = server_.stop();
  EXPECT_EQ(status.signal, 0) << status.describe();
}

// --- standalone handshake and commands --------------------------------------------------

TEST_F(Standalone, PingAndHelloThroughLibmongoc) {
  Client client = make_client(server_.uri());
  MongocReply ping = mongoc_command(client.get(), Document{{"ping", V(int32_t{1})}});
  ASSERT_TRUE(ping.ok) << ping.error;
  MongocReply hello = mongoc_command(client.get(), Document{{"hello", V(int32_t{1})}});
  ASSERT_TRUE(hello.ok) << hello.error;
  const Document& h = hello.reply;
  EXPECT_TRUE(h.get("isWritablePrimary")->as_bool());
  EXPECT_FALSE(h.has("setName"));
  EXPECT_FALSE(h.has("topologyVersion"));
  EXPECT_FALSE(h.has("$clusterTime"));  // standalones do not gossip cluster time
  for (const char* f : {"maxBsonObjectSize", "maxMessageSizeBytes", "maxWriteBatchSize",
                        "minWireVersion", "maxWireVersion", "logicalSessionTimeoutMinutes"}) {
    ASSERT_TRUE(h.has(f)) << f;
    EXPECT_EQ(h.get(f)->type(), bson::Type::kInt32) << f;
  }
  EXPECT_EQ(h.get("maxWireVersion")->as_int32(), 21);
  EXPECT_EQ(h.get("minWireVersion")->as_int32(), 0);
  EXPECT_EQ(h.get("logicalSessionTimeoutMinutes")->as_int32(), 30);
  EXPECT_EQ(h.get("localTime")->type(), bson::Type::kDateTime);
  EXPECT_FALSE(h.get("readOnly")->as_bool());
}

TEST_F(Standalone, LegacyIsMasterOverOpQueryGetsOpReply) {
  RawClient raw(server_.port());
  Document query{{"isMaster", V(int32_t{1})},
                 {"helloOk", V(true)},
                 {"client", V(Document{{"application", V(Document{{"name", V("t")}})}})}};
  ASSERT_TRUE(raw.send(server::encode_op_query(42, 4, "admin.$cmd", query)));
  auto reply = raw.read_message();
  ASSERT_TRUE(reply);
  const auto* p = reinterpret_cast<const uint8_t*>(reply->data());
  EXPECT_EQ(server::decode_header(p).op_code, server::opcode::kReply);
  EXPECT_EQ(server::decode_header(p).response_to, 42);
  EXPECT_EQ(server::read_i32_le(p + 16), 8);
  EXPECT_EQ(server::read_i32_le(p + 32), 1);
  Document doc = RawClient::op_reply_document(*reply);
  EXPECT_TRUE(doc.get("ismaster")->as_bool());
  EXPECT_FALSE(doc.has("isWritablePrimary"));
  EXPECT_TRUE(doc.get("helloOk")->as_bool());
}

TEST_F(Standalone, OpQueryOtherCommandGets352) {
  RawClient raw(server_.port());
  ASSERT_TRUE(
      raw.send(server::encode_op_query(5, 0, "admin.$cmd", Document{{"ping", V(int32_t{1})}})));
  auto reply = raw.read_message();
  ASSERT_TRUE(reply);
  Document doc = RawClient::op_reply_document(*reply);
  EXPECT_EQ(doc.get("code")->as_int32(), 352);
  EXPECT_EQ(doc.get("codeName")->as_string(), "UnsupportedOpQueryCommand");
  EXPECT_EQ(doc.get("errmsg")->as_string().rfind("Unsupported OP_QUERY command: ping", 0), 0u);
}

TEST_F(Standalone, SecondClientMetadataIsRefused) {
  RawClient raw(server_.port());
  Document hello{{"hello", V(int32_t{1})},
                 {"client", V(Document{{"application", V(Document{{"name", V("a")}})}})}};
  EXPECT_TRUE(raw.command(hello).get("ok")->truthy());
  Document again = raw.command(hello);
  EXPECT_EQ(again.get("code")->as_int32(), code::kClientMetadataCannotBeMutated);
}

TEST_F(Standalone, UnknownCommandGets59) {
  RawClient raw(server_.port());
  Document reply = raw.command(Document{{"frobnicate", V(int32_t{1})}});
  EXPECT_EQ(reply.get("ok")->as_double(), 0.0);
  EXPECT_EQ(reply.get("code")->as_int32(), 59);
  EXPECT_EQ(reply.get("codeName")->as_string(), "CommandNotFound");
  EXPECT_EQ(reply.get("errmsg")->as_string(), "no such command: 'frobnicate'");
  // Names are case-sensitive, like mongod's.
  EXPECT_EQ(raw.command(Document{{"HELLO", V(int32_t{1})}}).get("code")->as_int32(), 59);
}

TEST_F(Standalone, AdminOnlyCommandsRefuseOtherDatabases) {
  RawClient raw(server_.port());
  Document reply = raw.command(Document{{"getParameter", V("*")}}, "test");
  EXPECT_EQ(reply.get("code")->as_int32(), code::kUnauthorized);
}

TEST_F(Standalone, StandaloneRefusesReplicaSetCommandsAndTxnNumbers) {
  RawClient raw(server_.port());
  EXPECT_EQ(raw.command(Document{{"replSetGetStatus", V(int32_t{1})}}).get("code")->as_int32(),
            code::kNoReplicationEnabled);
  Document insert{{"insert", V("c")},
                  {"documents", V(bson::Array{V(Document{{"_id", V(int32_t{1})}})})},
                  {"lsid", V(Document{{"id", bson::Value::binary(4, std::string(16, 'x'))}})},
                  {"txnNumber", V(int64_t{1})}};
  EXPECT_EQ(raw.command(insert, "test").get("code")->as_int32(), code::kIllegalOperation);
}

TEST_F(Standalone, ParametersThroughCommands) {
  RawClient raw(server_.port());
  Document set = raw.command(
      Document{{"setParameter", V(int32_t{1})}, {"ttlMonitorSleepSecs", V(int32_t{7})}});
  ASSERT_TRUE(set.get("ok")->truthy()) << bson::to_json(set);
  EXPECT_EQ(set.get("was")->as_int32(), 60);
  Document get = raw.command(
      Document{{"getParameter", V(int32_t{1})}, {"ttlMonitorSleepSecs", V(int32_t{1})}});
  EXPECT_EQ(get.get("ttlMonitorSleepSecs")->as_int32(), 7);
  EXPECT_EQ(raw.command(Document{{"getParameter", V(int32_t{1})}, {"nope", V(int32_t{1})}})
                .get("code")
                ->as_int32(),
            code::kInvalidOptions);
}

TEST(StartupParameters, SetParameterFlagIsApplied) {
  MongosimNode server({.args = {"--setParameter", "ttlMonitorSleepSecs=3"}});
  RawClient raw(server.port());
  Document get = raw.command(
      Document{{"getParameter", V(int32_t{1})}, {"ttlMonitorSleepSecs", V(int32_t{1})}});
  EXPECT_EQ(get.get("ttlMonitorSleepSecs")->as_int32(), 3);
}

TEST_F(Standalone, FailCommandMatchesTheLegacyHelloNameAndAppName) {
  RawClient admin(server_.port());
  admin.command(Document{{"configureFailPoint", V("failCommand")},
                         {"mode", V(Document{{"times", V(int32_t{1})}})},
                         {"data", V(Document{{"failCommands", V(bson::Array{V("isMaster")})},
                                             {"appName", V("monitor")},
                                             {"errorCode", V(int32_t{91})}})}});
  RawClient other_app(server_.port());
  Document other{
      {"isMaster", V(int32_t{1})},
      {"client", V(Document{{"application", V(Document{{"name", V("someone-else")}})}})}};
  EXPECT_TRUE(other_app.command(other).get("ok")->truthy());
  RawClient monitor(server_.port());
  Document hello{{"isMaster", V(int32_t{1})},
                 {"client", V(Document{{"application", V(Document{{"name", V("monitor")}})}})}};
  Document failed = monitor.command(hello);
  EXPECT_EQ(failed.get("code")->as_int32(), 91);
  EXPECT_EQ(failed.get("codeName")->as_string(), "ShutdownInProgress");
  EXPECT_TRUE(monitor.command(Document{{"isMaster", V(int32_t{1})}})
                  .get("ok")
                  ->truthy());  // times:1 used up
}

// --- framing against the live server ----------------------------------------------------

TEST_F(Standalone, GarbageClosesOnlyThatConnection) {
  RawClient bad(server_.port());
  RawClient good(server_.port());
  std::string garbage = server::frame_message(1, 0, 9999, "xxxx");  // unknown opcode
  ASSERT_TRUE(bad.send(garbage));
  EXPECT_TRUE(bad.closed_by_server());
  EXPECT_TRUE(good.command(Document{{"ping", V(int32_t{1})}}).get("ok")->truthy());
}

TEST_F(Standalone, MalformedFramesClose) {
  std::vector<std::string> frames;
  std::string short_length;
  server::append_i32_le(short_length, 8);
  frames.push_back(short_length + std::string(12, '\0'));
  std::string huge;
  server::append_i32_le(huge, server::kMaxMessageBytes + 1);
  frames.push_back(huge + std::string(12, '\0'));
  std::string bad_body =
      server::encode_op_msg_request(1, 0, Document{{"ping", V(1)}, {"$db", V("admin")}});
  bad_body[21] = static_cast<char>(0x7f);  // the body's length points past the message
  frames.push_back(bad_body);
  std::string bad_crc =
      server::encode_op_msg_request(1, 0, Document{{"ping", V(1)}, {"$db", V("admin")}}, {}, true);
  bad_crc.back() ^= 1;
  frames.push_back(bad_crc);
  frames.push_back(
      server::encode_op_msg_request(1, 1u << 3, Document{{"ping", V(1)}, {"$db", V("admin")}}));
  for (size_t i = 0; i < frames.size(); ++i) {
    RawClient raw(server_.port());
    ASSERT_TRUE(raw.send(frames[i]));
    EXPECT_TRUE(raw.closed_by_server()) << "frame " << i << " did not close the connection";
  }
  RawClient after(server_.port());
  EXPECT_TRUE(after.command(Document{{"ping", V(int32_t{1})}}).get("ok")->truthy());
}

TEST_F(Standalone, StructuralErrorsGetReplies) {
  RawClient raw(server_.port());
  ASSERT_TRUE(raw.send(server::encode_op_msg_request(3, 0, Document{{"ping", V(int32_t{1})}})));
  auto reply = raw.read_message();
  ASSERT_TRUE(reply);
  EXPECT_EQ(RawClient::op_msg_body(*reply).get("code")->as_int32(), 40571);
  // The connection stays usable after an error reply.
  EXPECT_TRUE(raw.command(Document{{"ping", V(int32_t{1})}}).get("ok")->truthy());
}

TEST_F(Standalone, ChecksummedRequestIsAnswered) {
  RawClient raw(server_.port());
  ASSERT_TRUE(raw.send(server::encode_op_msg_request(
      11, 0, Document{{"ping", V(1)}, {"$db", V("admin")}}, {}, true)));
  auto reply = raw.read_message();
  ASSERT_TRUE(reply);
  EXPECT_EQ(server::decode_header(reinterpret_cast<const uint8_t*>(reply->data())).response_to, 11);
}

TEST_F(Standalone, MoreToComeGetsNoReply) {
  RawClient raw(server_.port());
  ASSERT_TRUE(raw.send(server::encode_op_msg_request(
      21, server::op_msg_flag::kMoreToCome, Document{{"ping", V(1)}, {"$db", V("admin")}})));
  ASSERT_TRUE(raw.send(
      server::encode_op_msg_request(22, 0, Document{{"ping", V(1)}, {"$db", V("admin")}})));
  auto reply = raw.read_message();
  ASSERT_TRUE(reply);
  // The first reply on the wire answers the second request: the first got none.
  EXPECT_EQ(server::decode_header(reinterpret_cast<const uint8_t*>(reply->data())).response_to, 22);
}

RC_GTEST_PROP(LiveServer, ArbitraryBytesNeverCrashTheServer, (std::vector<uint8_t> bytes)) {
  static MongosimNode server;  // one server for every case, stopped at exit
  {
    RawClient raw(server.port());
    raw.send(std::string(bytes.begin(), bytes.end()));
  }  // closing our end ends any partial message the server is waiting on
  RC_ASSERT(server.running());
  RawClient probe(server.port());
  RC_ASSERT(probe.command(Document{{"ping", V(int32_t{1})}}).get("ok")->truthy());
}

RC_GTEST_PROP(LiveServer, ArbitraryOpMsgPayloadsNeverCrashTheServer,
              (std::vector<uint8_t> tail, uint32_t flags)) {
  static MongosimNode server;
  {
    RawClient raw(server.port());
    std::string payload;
    server::append_u32_le(payload, flags);
    payload.append(tail.begin(), tail.end());
    raw.send(server::frame_message(1, 0, server::opcode::kMsg, payload));
    // The frame's length is exact, so a ping behind it is read as its own message: once it is
    // answered (or the connection is closed) the server has finished with the random one.
    raw.send(server::encode_op_msg_request(99, 0, Document{{"ping", V(1)}, {"$db", V("admin")}}));
    for (int replies = 0; replies < 2; ++replies) {
      auto reply = raw.read_message();
      if (!reply) break;
      if (server::decode_header(reinterpret_cast<const uint8_t*>(reply->data())).response_to == 99)
        break;
    }
  }
  RC_ASSERT(server.running());
  RawClient probe(server.port());
  RC_ASSERT(probe.command(Document{{"ping", V(int32_t{1})}}).get("ok")->truthy());
}

// --- counters ---------------------------------------------------------------------------

TEST_F(Standalone, ServerStatusCountsExactlyTheCommandsSent) {
  RawClient raw(server_.port());
  Document before = raw.command(Document{{"serverStatus", V(int32_t{1})}});
  constexpr int kPings = 7;
  for (int i = 0; i < kPings; ++i) raw.command(Document{{"ping", V(int32_t{1})}});
  raw.command(Document{{"nosuchcommand", V(int32_t{1})}});
  Document after = raw.command(Document{{"serverStatus", V(int32_t{1})}});
  EXPECT_EQ(command_total(after, "ping") - command_total(before, "ping"), kPings);
  EXPECT_EQ(command_total(after, "serverStatus") - command_total(before, "serverStatus"), 1);
  EXPECT_EQ(command_total(after, "<UNKNOWN>") - command_total(before, "<UNKNOWN>"), 1);
  int64_t cmd_before = before.get("opcounters")->as_document().get("command")->as_int64();
  int64_t cmd_after = after.get("opcounters")->as_document().get("command")->as_int64();
  EXPECT_EQ(cmd_after - cmd_before, kPings + 2);  // pings, the unknown one, one serverStatus
}

// --- concurrency ------------------------------------------------------------------------

TEST_F(Standalone, ManyConcurrentConnectionsAreAllServed) {
  constexpr int kClients = 200;
  std::atomic<int> served{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&] {
      try {
        RawClient raw(server_.port());
        if (raw.command(Document{{"ping", V(int32_t{1})}}).get("ok")->truthy()) ++served;
      } catch (const std::exception&) {
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(served.load(), kClients);
}

TEST_F(Standalone, SlowClientDoesNotBlockOthers) {
  RawClient slow(server_.port());
  std::string ping =
      server::encode_op_msg_request(1, 0, Document{{"ping", V(1)}, {"$db", V("admin")}});
  ASSERT_TRUE(slow.send(ping.substr(0, 10)));  // half a header, then silence
  RawClient other(server_.port());
  EXPECT_TRUE(other.command(Document{{"ping", V(int32_t{1})}}).get("ok")->truthy());
  ASSERT_TRUE(slow.send(ping.substr(10)));
  auto reply = slow.read_message();
  EXPECT_TRUE(reply.has_value());
}

// --- replica set ------------------------------------------------------------------------

TEST(ReplicaSetStartup, UninitiatedMemberIsAGhost) {
  MongosimNode server({.args = {"--replSet", "rs0"}});
  RawClient raw(server.port());
  Document hello = raw.command(Document{{"hello", V(int32_t{1})}});
  EXPECT_TRUE(hello.get("isreplicaset")->as_bool());
  EXPECT_FALSE(hello.get("isWritablePrimary")->as_bool());
  EXPECT_FALSE(hello.has("setName"));
  EXPECT_EQ(raw.command(Document{{"replSetGetStatus", V(int32_t{1})}}).get("code")->as_int32(),
            code::kNotYetInitialized);
  Document insert{{"insert", V("c")},
                  {"documents", V(bson::Array{V(Document{{"_id", V(int32_t{1})}})})}};
  EXPECT_EQ(raw.command(insert, "test").get("code")->as_int32(), code::kNotWritablePrimary);
}

TEST_F(ReplicaSet, DriverConnectsWithReplicaSetUri) {
  Client client =
      make_client(server_.uri("replicaSet=" + set_.set_name() + "&serverSelectionTimeoutMS=5000"));
  MongocReply ping = mongoc_command(client.get(), Document{{"ping", V(int32_t{1})}});
  ASSERT_TRUE(ping.ok) << ping.error;
  EXPECT_TRUE(ping.reply.has("$clusterTime"));
  EXPECT_TRUE(ping.reply.has("operationTime"));
}

TEST_F(ReplicaSet, HelloHasTheReplicaSetFieldsWithMongodsTypes) {
  RawClient raw(server_.port());
  Document h = raw.command(Document{{"hello", V(int32_t{1})}, {"helloOk", V(true)}});
  EXPECT_TRUE(h.get("helloOk")->as_bool());
  EXPECT_EQ(h.get("setName")->as_string(), set_.set_name());
  EXPECT_EQ(h.get("setVersion")->type(), bson::Type::kInt32);
  EXPECT_TRUE(h.get("isWritablePrimary")->as_bool());
  EXPECT_FALSE(h.get("secondary")->as_bool());
  EXPECT_EQ(h.get("me")->as_string(), server_.host());
  EXPECT_EQ(h.get("primary")->as_string(), server_.host());
  ASSERT_EQ(h.get("hosts")->as_array().size(), 1u);
  EXPECT_EQ(h.get("hosts")->as_array()[0].as_string(), server_.host());
  ASSERT_EQ(h.get("electionId")->type(), bson::Type::kObjectId);
  EXPECT_EQ(h.get("electionId")->as_object_id().hex(), "7fffffff0000000000000001");
  const Document& last_write = h.get("lastWrite")->as_document();
  EXPECT_EQ(last_write.get("lastWriteDate")->type(), bson::Type::kDateTime);
  EXPECT_EQ(last_write.get("opTime")->as_document().get("t")->as_int64(), 1);
  EXPECT_EQ(h.get("maxWriteBatchSize")->type(), bson::Type::kInt32);
  EXPECT_FALSE(h.has("topologyVersion"));
  const Document& ct = h.get("$clusterTime")->as_document();
  EXPECT_EQ(ct.get("signature")->as_document().get("hash")->binary_bytes(), std::string(20, '\0'));
}

TEST_F(ReplicaSet, InitiateTwiceFails) {
  RawClient raw(server_.port());
  Document reply = raw.command(Document{{"replSetInitiate", V(Document{})}});
  EXPECT_EQ(reply.get("code")->as_int32(), code::kAlreadyInitialized);
  EXPECT_EQ(reply.get("codeName")->as_string(), "AlreadyInitialized");
}

TEST_F(ReplicaSet, ReplSetGetStatusShowsOnePrimary) {
  RawClient raw(server_.port());
  Document s = raw.command(Document{{"replSetGetStatus", V(int32_t{1})}});
  ASSERT_TRUE(s.get("ok")->truthy()) << bson::to_json(s);
  EXPECT_EQ(s.get("set")->as_string(), set_.set_name());
  EXPECT_EQ(s.get("myState")->as_int32(), 1);
  EXPECT_EQ(s.get("term")->as_int64(), 1);
  const auto& members = s.get("members")->as_array();
  ASSERT_EQ(members.size(), 1u);
  EXPECT_EQ(members[0].as_document().get("stateStr")->as_string(), "PRIMARY");
  EXPECT_EQ(members[0].as_document().get("name")->as_string(), server_.host());
  EXPECT_EQ(members[0].as_document().get("optimeDate")->type(), bson::Type::kDateTime);
}

TEST(DataLayerWiring, TtlMonitorUsesTheStartupSleepParameter) {
  kit::ReplicaSet set({.members = 1,
                       .args = {"--setParameter", "ttlMonitorSleepSecs=1"},
                       .election_timeout_ms = 0,
                       .heartbeat_interval_ms = 0});
  MongosimNode& server = set.member(0);
  RawClient raw(server.port());
  Document index{{"key", V(Document{{"at", V(int32_t{1})}})},
                 {"name", V("at_1")},
                 {"expireAfterSeconds", V(int32_t{0})}};
  Document created = raw.command(
      Document{{"createIndexes", V("ttl")}, {"indexes", V(bson::Array{V(index)})}}, "test");
  ASSERT_TRUE(created.get("ok")->truthy()) << bson::to_json(created);
  int64_t past_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count() -
                    60000;
  Document insert{
      {"insert", V("ttl")},
      {"documents",
       V(bson::Array{V(Document{{"_id", V(int32_t{1})}, {"at", bson::Value::date(past_ms)}})})}};
  ASSERT_TRUE(raw.command(insert, "test").get("ok")->truthy());
  // With the default 60 s sleep this would not happen within the deadline; with 1 s it must.
  int64_t remaining = -1;
  EXPECT_TRUE(kit::poll_until(kit::after(std::chrono::seconds(20)),
                              [&] {
                                Document count = raw.command(Document{{"count", V("ttl")}}, "test");
                                remaining = count.get("n")->number_as_exact_int64().value_or(-1);
                                return remaining == 0;
                              }))
      << "the expired document was not deleted (" << remaining << " left)";
}

Document retryable_insert(int64_t txn, int32_t id) {
  return Document{{"insert", V("c")},
                  {"documents", V(bson::Array{V(Document{{"_id", V(id)}})})},
                  {"lsid", V(Document{{"id", bson::Value::binary(4, std::string(16, '\x01'))}})},
                  {"txnNumber", V(txn)}};
}

// A txnNumber that is not a long is refused (it failed an assertion and ended the member), and
// the member serves the next command.
TEST_F(ReplicaSet, ATxnNumberThatIsNotALongIsRefused) {
  RawClient raw(server_.port());
  Document insert = retryable_insert(1, 1);
  insert.set("txnNumber", V(int32_t{1}));
  Document refused = raw.command(insert, "test");
  EXPECT_EQ(refused.get("code")->as_int32(), code::kTypeMismatch) << bson::to_json(refused);
  EXPECT_EQ(refused.get("errmsg")->as_string(),
            "BSON field 'txnNumber' is the wrong type 'int', expected type 'long'");
  Document accepted = raw.command(retryable_insert(1, 1), "test");
  EXPECT_TRUE(accepted.get("ok")->truthy()) << bson::to_json(accepted);
}

TEST_F(ReplicaSet, FailCommandErrorOnRetryableWriteGetsLabels) {
  RawClient raw(server_.port());
  raw.command(Document{{"configureFailPoint", V("failCommand")},
                       {"mode", V(Document{{"times", V(int32_t{1})}})},
                       {"data", V(Document{{"failCommands", V(bson::Array{V("insert")})},
                                           {"errorCode", V(int32_t{91})}})}});
  Document failed = raw.command(retryable_insert(1, 1), "test");
  EXPECT_EQ(failed.get("code")->as_int32(), 91);
  EXPECT_EQ(failed.get("errmsg")->as_string(), "Failing command via 'failCommand' failpoint");
  ASSERT_TRUE(failed.has("errorLabels")) << bson::to_json(failed);
  const auto& labels = failed.get("errorLabels")->as_array();
  ASSERT_EQ(labels.size(), 2u);
  EXPECT_EQ(labels[0].as_string(), "RetryableWriteError");
  EXPECT_EQ(labels[1].as_string(), "NoWritesPerformed");
  Document retried = raw.command(retryable_insert(1, 1), "test");
  EXPECT_TRUE(retried.get("ok")->truthy()) << bson::to_json(retried);
  EXPECT_FALSE(retried.has("errorLabels"));
}

TEST_F(ReplicaSet, FailCommandWriteConcernErrorIsAppended) {
  RawClient raw(server_.port());
  raw.command(Document{
      {"configureFailPoint", V("failCommand")},
      {"mode", V(Document{{"times", V(int32_t{1})}})},
      {"data", V(Document{{"failCommands", V(bson::Array{V("insert")})},
                          {"writeConcernError",
                           V(Document{{"code", V(int32_t{91})},
                                      {"errmsg", V("Replication is being shut down")}})}})}});
  Document reply = raw.command(retryable_insert(1, 2), "test");
  ASSERT_TRUE(reply.get("ok")->truthy()) << bson::to_json(reply);
  EXPECT_EQ(reply.get("writeConcernError")->as_document().get("code")->as_int32(), 91);
  ASSERT_TRUE(reply.has("errorLabels"));
  EXPECT_EQ(reply.get("errorLabels")->as_array().size(), 1u);  // written, so no NoWritesPerformed
}

TEST_F(ReplicaSet, UnsatisfiableWriteConcernIsReported) {
  RawClient raw(server_.port());
  Document insert{{"insert", V("c")},
                  {"documents", V(bson::Array{V(Document{{"_id", V(int32_t{9})}})})},
                  {"writeConcern", V(Document{{"w", V("nosuchtag")}})}};
  Document reply = raw.command(insert, "test");
  EXPECT_TRUE(reply.get("ok")->truthy());
  EXPECT_EQ(reply.get("writeConcernError")->as_document().get("code")->as_int32(),
            code::kUnknownReplWriteConcern);
  EXPECT_EQ(reply.get("opTime")->as_document().get("t")->as_int64(), 1);
  EXPECT_EQ(reply.get("electionId")->type(), bson::Type::kObjectId);
}

TEST_F(ReplicaSet, CloseConnectionFailPointAndLibmongocRetry) {
  Client client = make_client(server_.uri("replicaSet=" + set_.set_name() +
                                          "&retryWrites=true&serverSelectionTimeoutMS=5000"));
  RawClient raw(server_.port());
  Document before = raw.command(Document{{"serverStatus", V(int32_t{1})}});
  raw.command(Document{{"configureFailPoint", V("failCommand")},
                       {"mode", V(Document{{"times", V(int32_t{1})}})},
                       {"data", V(Document{{"failCommands", V(bson::Array{V("insert")})},
                                           {"closeConnection", V(true)}})}});
  mongoc_collection_t* coll = mongoc_client_get_collection(client.get(), "test", "retry");
  const OwnedBson doc(BCON_NEW("_id", BCON_INT32(77)));
  bson_error_t error;
  bool inserted = mongoc_collection_insert_one(coll, doc.get(), nullptr, nullptr, &error);
  EXPECT_TRUE(inserted) << error.message;
  const OwnedBson filter(bson_new());
  int64_t count =
      mongoc_collection_count_documents(coll, filter.get(), nullptr, nullptr, nullptr, &error);
  EXPECT_EQ(count, 1) << error.message;
  mongoc_collection_destroy(coll);
  Document after = raw.command(Document{{"serverStatus", V(int32_t{1})}});
  EXPECT_EQ(command_total(after, "insert") - command_total(before, "insert"),
            2);  // failed + retried
  Document off =
      raw.command(Document{{"configureFailPoint", V("failCommand")}, {"mode", V("off")}});
  EXPECT_EQ(off.get("count")->as_int64(), 1);
}

}  // namespace
}  // namespace mongosim::testing
