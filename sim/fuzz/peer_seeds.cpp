#include "fuzz/peer_seeds.h"

#include "fuzz/peer_target.h"

namespace mongosim::fuzz {
namespace {

using bson::Array;
using bson::Document;
using bson::V;

// The peer's history is far in the member's future (2096), so every entry it sends comes after
// the member's own first entry, whatever the clock says.
constexpr uint32_t kPeerSeconds = 4'000'000'000u;

Document optime(uint32_t increment, int64_t term) {
  return Document{{"ts", bson::Value::timestamp(bson::Timestamp{kPeerSeconds, increment})},
                  {"t", V(term)}};
}

// A heartbeat reply of member 1 (the peer) as `state` (1 primary, 2 secondary) in `term`, its
// newest entry at `applied`.
Document heartbeat(int32_t state, int64_t term, uint32_t applied, uint32_t committed) {
  return Document{{"ok", V(1.0)},
                  {"setName", V("fuzz")},
                  {"term", V(term)},
                  {"state", V(state)},
                  {"appliedOpTime", V(optime(applied, term))},
                  {"durableOpTime", V(optime(applied, term))},
                  {"lastCommittedOpTime", V(optime(committed, term))},
                  {"configVersion", V(int32_t{1})},
                  {"primaryIndex", V(int32_t{state == 1 ? 1 : -1})},
                  {"syncSourceIndex", V(int32_t{-1})},
                  {"priority", V(1.0)}};
}

Document entry(uint32_t increment, int64_t term, const char* op, Document o,
               std::optional<Document> o2 = std::nullopt, const char* ns = "fuzz.c") {
  Document e{{"ts", bson::Value::timestamp(bson::Timestamp{kPeerSeconds, increment})},
             {"t", V(term)},
             {"v", V(int64_t{2})},
             {"op", V(op)},
             {"ns", V(ns)},
             {"o", V(std::move(o))}};
  if (o2) e.append("o2", V(std::move(*o2)));
  if (std::string(op) == "u") e.append("updateKind", V("replacement"));
  e.append("wall", bson::Value::date(int64_t{kPeerSeconds} * 1000));
  return e;
}

Document doc(int32_t id, int32_t x) {
  return Document{{"_id", V(id)}, {"x", V(x)}};
}

Document fetched(Array entries, bool found, uint32_t committed, int64_t term = 1) {
  return Document{{"ok", V(1.0)},
                  {"entries", V(std::move(entries))},
                  {"found", V(found)},
                  {"term", V(term)},
                  {"lastCommittedOpTime", V(optime(committed, term))}};
}

std::string repeat(const std::string& command, const Document& body, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += peer_reply(command, body);
  return out;
}

// Follows the peer as its primary: heartbeats say it leads and is ahead, a fetch brings a batch of
// every kind of entry, position reports are acknowledged.
std::string follow_primary() {
  Array batch{V(entry(1, 1, "c", Document{{"create", V("c")}}, std::nullopt, "fuzz.$cmd")),
              V(entry(2, 1, "i", doc(1, 1))),
              V(entry(3, 1, "u", doc(1, 2), Document{{"_id", V(int32_t{1})}})),
              V(entry(4, 1, "i", doc(2, 1))),
              V(entry(5, 1, "d", Document{{"_id", V(int32_t{2})}})),
              V(entry(6, 1, "c",
                      Document{{"createIndexes", V("c")},
                               {"v", V(int32_t{2})},
                               {"key", V(Document{{"x", V(int32_t{1})}})},
                               {"name", V("x_1")}},
                      std::nullopt, "fuzz.$cmd")),
              V(entry(7, 1, "n", Document{{"msg", V("periodic noop")}}, std::nullopt, ""))};
  return repeat("replSetHeartbeat", heartbeat(1, 1, 7, 7), 6) +
         peer_reply("replSetFetchOplog", fetched(std::move(batch), true, 7)) +
         peer_reply("replSetFetchOplog", fetched(Array{}, true, 7)) +
         repeat("replSetUpdatePosition", Document{{"ok", V(1.0)}}, 3);
}

// A heartbeat reply of a peer that is a secondary in term 0 with nothing applied yet.
Document empty_secondary() {
  const Document null_optime{{"ts", bson::Value::timestamp(bson::Timestamp{0, 0})},
                             {"t", V(int64_t{-1})}};
  return Document{{"ok", V(1.0)},
                  {"setName", V("fuzz")},
                  {"term", V(int64_t{0})},
                  {"state", V(int32_t{2})},
                  {"appliedOpTime", V(null_optime)},
                  {"durableOpTime", V(null_optime)},
                  {"lastCommittedOpTime", V(null_optime)},
                  {"configVersion", V(int32_t{1})},
                  {"primaryIndex", V(int32_t{-1})},
                  {"syncSourceIndex", V(int32_t{-1})},
                  {"priority", V(1.0)}};
}

// Wins an election: the peer, a secondary with nothing applied, grants the dry run's vote (in its
// term 0) and the real one (in the candidate's term 1).
std::string win_election() {
  return peer_reply("replSetRequestVotes", Document{{"ok", V(1.0)},
                                                    {"term", V(int64_t{0})},
                                                    {"voteGranted", V(true)},
                                                    {"reason", V("")}}) +
         peer_reply("replSetRequestVotes", Document{{"ok", V(1.0)},
                                                    {"term", V(int64_t{1})},
                                                    {"voteGranted", V(true)},
                                                    {"reason", V("")}}) +
         repeat("replSetHeartbeat", empty_secondary(), 4);
}

// The peer's answer to the refetch of the document entry 3 changed.
Document refetched() {
  return Document{
      {"ok", V(1.0)},
      {"lastApplied", V(optime(3, 2))},
      {"documents",
       V(Array{V(Document{{"ns", V("fuzz.c")}, {"_id", V(int32_t{3})}, {"doc", V(doc(3, 30))}})})},
      {"namespaces", V(Array{V(Document{{"ns", V("fuzz.c")}, {"exists", V(true)}})})}};
}

}  // namespace

std::string roll_back_script(const bson::Document& refetch_reply, std::optional<Array> optimes) {
  Array batch{V(entry(1, 1, "i", doc(1, 1))), V(entry(2, 1, "i", doc(2, 1))),
              V(entry(3, 1, "i", doc(3, 1)))};
  Array remote =
      optimes ? std::move(*optimes) : Array{V(optime(1, 1)), V(optime(2, 1)), V(optime(3, 2))};
  return repeat("replSetHeartbeat", heartbeat(1, 2, 3, 2), 8) +
         peer_reply("replSetFetchOplog", fetched(std::move(batch), true, 2)) +
         peer_reply("replSetFetchOplog", fetched(Array{}, false, 2, 2)) +
         peer_reply("replSetRollbackOptimes",
                    Document{{"ok", V(1.0)}, {"optimes", V(std::move(remote))}}) +
         peer_reply("replSetRollbackFetch", refetch_reply);
}

std::vector<PeerSeed> peer_seeds() {
  return {{"follow-primary", follow_primary()},
          {"win-election", win_election()},
          {"roll-back", roll_back_script(refetched())}};
}

}  // namespace mongosim::fuzz
