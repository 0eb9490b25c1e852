// fuzz_seed_corpus WIRE_DIR [PEER_DIR]: writes the wire fuzz target's seed corpus, one file per
// client session
// (a handshake followed by the commands of one command family), so mutation starts from
// well-formed traffic that reaches deep into dispatch and the data commands rather than from
// random bytes that the framing check rejects. Cursor ids are the ones the target's members hand
// out (fuzz::cursor_id), so a getMore reaches its cursor. PEER_DIR gets the peer target's seed
// scripts (peer_seeds.h).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bson/codec.h"
#include "bson/value.h"
#include "fuzz/peer_seeds.h"
#include "fuzz/wire_target.h"
#include "server/op_msg.h"
#include "server/wire.h"

namespace {

using mongosim::bson::Array;
using mongosim::bson::Document;
using mongosim::bson::V;
namespace server = mongosim::server;

Document cmd(Document body, const char* db = "fuzz") {
  body.append("$db", V(db));
  return body;
}

std::string op_msg(int32_t request_id, const Document& body, bool checksum = false,
                   const std::vector<server::DocumentSequence>& sequences = {}) {
  uint32_t flags = checksum ? 1u : 0u;
  return server::encode_op_msg_request(request_id, flags, body, sequences, checksum);
}

// A legacy OP_QUERY handshake as old drivers send it (only hello/isMaster;
// docs/mongodb-behaviour.md, Legacy OP_QUERY).
std::string op_query_hello(int32_t request_id) {
  std::string payload;
  server::append_i32_le(payload, 0);  // flags
  payload += std::string("admin.$cmd") + '\0';
  server::append_i32_le(payload, 0);   // numberToSkip
  server::append_i32_le(payload, -1);  // numberToReturn
  payload += mongosim::bson::encode_document(Document{{"isMaster", V(int32_t{1})}});
  return server::frame_message(request_id, 0, server::opcode::kQuery, payload);
}

std::string hello(int32_t id) {
  return op_msg(id, cmd(Document{{"hello", V(int32_t{1})}, {"helloOk", V(true)}}, "admin"));
}

struct Session {
  std::string name;
  std::string bytes;
};

Document doc_xy(int32_t x) {
  return Document{{"_id", V(x)}, {"x", V(x)}, {"tags", V(Array{V("a"), V("b")})}};
}

mongosim::bson::Value optime(uint32_t seconds, int64_t term) {
  return V(Document{{"ts", mongosim::bson::Value::timestamp({seconds, 1})}, {"t", V(term)}});
}

Document session_fields(Document body, int64_t txn_number) {
  body.append("lsid",
              V(Document{{"id", mongosim::bson::Value::binary(4, std::string(16, '\x01'))}}));
  body.append("txnNumber", V(txn_number));
  return body;
}

// What a lock client sends a replica set: retryable writes (lsid, txnNumber, stmtIds), majority
// and causal reads, a change stream and its getMore, and the session's end. A standalone refuses
// most of it; the one-member set (wire_target.h) serves it.
std::string set_lock_client_session() {
  Document fam{{"findAndModify", V("locks")},
               {"query", V(Document{{"_id", V("L")}})},
               {"update", V(Document{{"$inc", V(Document{{"token", V(int64_t{1})}})}})},
               {"upsert", V(true)},
               {"new", V(true)},
               {"writeConcern", V(Document{{"w", V("majority")}, {"j", V(true)}})}};
  Document update{
      {"update", V("locks")},
      {"updates",
       V(Array{V(Document{{"q", V(Document{{"_id", V("L")}})},
                          {"u", V(Document{{"$unset", V(Document{{"holder", V("")}})}})}})})},
      {"stmtIds", V(Array{V(int32_t{0})})}};
  Document read{
      {"find", V("locks")},
      {"filter", V(Document{{"_id", V("L")}})},
      {"readConcern", V(Document{{"level", V("majority")},
                                 {"afterClusterTime", mongosim::bson::Value::timestamp({1, 1})}})},
      {"maxTimeMS", V(int32_t{50})}};
  Document stream{{"aggregate", V("locks")},
                  {"pipeline", V(Array{V(Document{{"$changeStream", V(Document{})}})})},
                  {"cursor", V(Document{})}};
  Document more{{"getMore", V(mongosim::fuzz::cursor_id(1))},
                {"collection", V("locks")},
                {"maxTimeMS", V(int32_t{5})}};
  return hello(1) + op_msg(2, cmd(session_fields(fam, 1))) +
         op_msg(3, cmd(session_fields(update, 2))) + op_msg(4, cmd(read)) + op_msg(5, cmd(stream)) +
         op_msg(6, cmd(more)) +
         op_msg(7, cmd(Document{{"endSessions", V(Array{V(Document{{"id", V(int32_t{1})}})})}},
                       "admin"));
}

// The member-to-member commands, as the other member of a two-member set sends them
// (sim/server/replication*.cpp), and the operator's step-down and freeze: the fuzz target's
// secondary (wire_target.h) serves them.
std::string set_member_session() {
  std::vector<Document> cmds = {
      Document{{"replSetGetStatus", V(int32_t{1})}},
      Document{{"replSetHeartbeat", V("fuzz")},
               {"fromIndex", V(int32_t{1})},
               {"term", V(int64_t{1})},
               {"configVersion", V(int64_t{1})}},
      Document{{"replSetUpdatePosition", V(int32_t{1})},
               {"fromIndex", V(int32_t{1})},
               {"term", V(int64_t{1})},
               {"appliedOpTime", optime(1, 1)},
               {"durableOpTime", optime(1, 1)}},
      Document{{"replSetFetchOplog", V(int32_t{1})},
               {"after", optime(0, -1)},
               {"limit", V(int64_t{10})},
               {"maxAwaitMs", V(int64_t{0})},
               {"lastKnownCommittedOpTime", optime(0, -1)}},
      Document{{"replSetRequestVotes", V(int32_t{1})},
               {"setName", V("fuzz")},
               {"dryRun", V(true)},
               {"term", V(int64_t{2})},
               {"candidateIndex", V(int32_t{1})},
               {"configVersion", V(int64_t{1})},
               {"configTerm", V(int64_t{1})},
               {"lastWrittenOpTime", optime(1, 1)}},
      Document{{"replSetRollbackOptimes", V(int32_t{1})},
               {"from", optime(0, -1)},
               {"upTo", optime(1, 1)},
               {"limit", V(int64_t{10})}},
      Document{{"replSetRollbackFetch", V(int32_t{1})},
               {"documents", V(Array{V(Document{{"ns", V("fuzz.c")}, {"_id", V(int32_t{1})}})})},
               {"namespaces", V(Array{V("fuzz.c")})}},
      Document{{"replSetStepDown", V(int32_t{1})}, {"stepDownSecs", V(int32_t{1})}},
      Document{{"replSetFreeze", V(int32_t{0})}},
  };
  std::string bytes;
  int32_t id = 1;
  for (Document& c : cmds) bytes += op_msg(id++, cmd(std::move(c), "admin"));
  return bytes;
}

void add_set_sessions(std::vector<Session>& out) {
  out.push_back({"set-lock-client", set_lock_client_session()});
  out.push_back({"set-member-commands", set_member_session()});
}

std::vector<Session> sessions() {
  std::vector<Session> out;
  out.push_back({"handshake-op-query", op_query_hello(1) + hello(2)});
  out.push_back(
      {"insert-find",
       hello(1) +
           op_msg(2, cmd(Document{{"insert", V("c")},
                                  {"documents", V(Array{V(doc_xy(1)), V(doc_xy(2))})}})) +
           op_msg(3,
                  cmd(Document{{"find", V("c")},
                               {"filter", V(Document{{"x", V(Document{{"$gte", V(int32_t{1})}})}})},
                               {"sort", V(Document{{"x", V(int32_t{-1})}})},
                               {"batchSize", V(int32_t{1})}})) +
           op_msg(4, cmd(Document{{"getMore", V(mongosim::fuzz::cursor_id(1))},
                                  {"collection", V("c")}}))});
  out.push_back(
      {"insert-sequence-checksum", op_msg(1, cmd(Document{{"insert", V("c")}}), true,
                                          {{"documents", Array{V(doc_xy(3)), V(doc_xy(4))}}})});
  out.push_back(
      {"update-upsert-array-filters",
       op_msg(1, cmd(Document{{"update", V("c")},
                              {"updates",
                               V(Array{V(Document{
                                   {"q", V(Document{{"_id", V(int32_t{7})}})},
                                   {"u", V(Document{{"$set", V(Document{{"tags.$[t]", V("z")}})},
                                                    {"$inc", V(Document{{"n", V(int32_t{1})}})}})},
                                   {"upsert", V(true)},
                                   {"arrayFilters", V(Array{V(Document{{"t", V("a")}})})}})})}}))});
  out.push_back(
      {"find-and-modify-pipeline",
       op_msg(
           1,
           cmd(Document{
               {"findAndModify", V("locks")},
               {"query", V(Document{{"_id", V("L")}})},
               {"update",
                V(Array{V(Document{
                    {"$set", V(Document{{"until",
                                         V(Document{{"$add", V(Array{V("$$NOW"),
                                                                     V(int32_t{1000})})}})}})}})})},
               {"upsert", V(true)},
               {"new", V(true)},
               {"writeConcern",
                V(Document{{"w", V("majority")}, {"wtimeout", V(int32_t{100})}})}}))});
  out.push_back(
      {"aggregate-count",
       op_msg(1, cmd(Document{{"aggregate", V("c")},
                              {"pipeline",
                               V(Array{V(Document{{"$match", V(Document{{"x", V(int32_t{1})}})}}),
                                       V(Document{{"$count", V("n")}})})},
                              {"cursor", V(Document{})}}))});
  out.push_back(
      {"change-stream",
       op_msg(
           1,
           cmd(Document{
               {"aggregate", V("c")},
               {"pipeline",
                V(Array{V(Document{
                            {"$changeStream",
                             V(Document{{"fullDocument", V("updateLookup")},
                                        {"resumeAfter",
                                         V(Document{{"_data", V("8200000001000000016D01")}})}})}}),
                        V(Document{{"$match", V(Document{{"operationType", V("insert")}})}})})},
               {"cursor", V(Document{{"batchSize", V(int32_t{1})}})}}))});
  out.push_back(
      {"indexes-delete-drop",
       op_msg(1, cmd(Document{
                     {"createIndexes", V("c")},
                     {"indexes", V(Array{V(Document{{"key", V(Document{{"x", V(int32_t{1})}})},
                                                    {"name", V("x_1")},
                                                    {"unique", V(true)}})})}})) +
           op_msg(2, cmd(Document{{"delete", V("c")},
                                  {"deletes", V(Array{V(Document{{"q", V(Document{})},
                                                                 {"limit", V(int32_t{0})}})})}})) +
           op_msg(3, cmd(Document{{"listIndexes", V("c")}})) +
           op_msg(4, cmd(Document{{"drop", V("c")}}))});
  out.push_back(
      {"retryable-write", op_msg(1, cmd(Document{{"insert", V("c")},
                                                 {"documents", V(Array{V(doc_xy(9))})},
                                                 {"lsid", V(Document{{"id", V(int32_t{1})}})},
                                                 {"txnNumber", V(int64_t{1})}}))});
  out.push_back(
      {"admin", op_msg(1, cmd(Document{{"serverStatus", V(int32_t{1})}}, "admin")) +
                    op_msg(2, cmd(Document{{"buildInfo", V(int32_t{1})}}, "admin")) +
                    op_msg(3, cmd(Document{{"replSetGetStatus", V(int32_t{1})}}, "admin"))});
  add_set_sessions(out);
  return out;
}

// Writes each (name, bytes) as DIR/name; false (with a message) on the first failure.
template <typename Seeds>
bool write_all(const char* dir, const Seeds& seeds) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "fuzz_seed_corpus: cannot create %s: %s\n", dir, ec.message().c_str());
    return false;
  }
  for (const auto& [name, bytes] : seeds) {
    std::string path = std::string(dir) + "/" + name;
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!file) {
      std::fprintf(stderr, "fuzz_seed_corpus: cannot write %s\n", path.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: fuzz_seed_corpus WIRE_DIR [PEER_DIR]\n");
    return 2;
  }
  std::vector<std::pair<std::string, std::string>> wire;
  for (Session& s : sessions()) wire.emplace_back(std::move(s.name), std::move(s.bytes));
  if (!write_all(argv[1], wire)) return 1;
  if (argc == 3) {
    std::vector<std::pair<std::string, std::string>> peer;
    for (auto& s : mongosim::fuzz::peer_seeds())
      peer.emplace_back(std::move(s.name), std::move(s.script));
    if (!write_all(argv[2], peer)) return 1;
  }
  return 0;
}
