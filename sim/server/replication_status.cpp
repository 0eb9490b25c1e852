// replSetGetStatus: the topology's view of every member (docs/mongodb-behaviour.md, Status and
// initiation).
#include <algorithm>
#include <chrono>

#include "base/error_codes.h"
#include "base/log.h"
#include "server/member_client.h"
#include "server/replication.h"
#include "server/replication_fields.h"

namespace mongosim::server {

using namespace replication_fields;

bson::Document ReplicationCoordinator::member_status_locked(int index, int64_t now) const {
  const repl::Topology& t = *topology_;
  const repl::MemberConfig& m = t.config().members[static_cast<size_t>(index)];
  bool self = index == t.self_index();
  bool up = t.member_is_up(now, index);
  MemberState state = self ? t.state() : (up ? t.member(index).state : MemberState::kDown);
  OpTime applied = self ? t.applied() : t.member(index).applied;
  bson::Document out{
      {"_id", bson::V(m.id)},
      {"name", bson::V(m.host)},
      {"health", bson::V(up ? 1.0 : 0.0)},
      {"state", bson::V(static_cast<int32_t>(state))},
      {"stateStr", bson::V(std::string(repl::member_state_name(state)))},
      {"optime", bson::V(applied.to_document())},
      {"optimeDate", bson::Value::date(static_cast<int64_t>(applied.ts.seconds) * 1000)}};
  if (self) {
    out.append("self", bson::V(true));
  } else {
    out.append("lastHeartbeatRecv", bson::Value::date(t.member(index).last_heartbeat_ms));
  }
  return out;
}

std::optional<bson::Document> ReplicationCoordinator::repl_set_status() const {
  std::lock_guard lock(mutex_);
  if (!topology_) return std::nullopt;
  const repl::Topology& t = *topology_;
  int64_t now = now_ms();
  int source = t.sync_source();
  std::string source_host =
      source >= 0 ? t.config().members[static_cast<size_t>(source)].host : std::string();
  bson::Array members;
  for (int i = 0; i < t.config().member_count(); ++i) {
    members.push_back(bson::V(member_status_locked(i, now)));
  }
  bson::Document optimes{{"lastCommittedOpTime", bson::V(t.last_committed().to_document())},
                         {"appliedOpTime", bson::V(t.applied().to_document())},
                         {"durableOpTime", bson::V(t.durable().to_document())}};
  return bson::Document{
      {"set", bson::V(t.config().set_name)},
      {"date", bson::Value::date(now)},
      {"myState", bson::V(static_cast<int32_t>(t.state()))},
      {"term", bson::V(t.term())},
      {"syncSourceHost", bson::V(source_host)},
      {"syncSourceId",
       bson::V(source >= 0 ? t.config().members[static_cast<size_t>(source)].id : -1)},
      {"heartbeatIntervalMillis", bson::V(t.config().settings.heartbeat_interval_ms)},
      {"majorityVoteCount", bson::V(int32_t{t.config().majority_vote_count()})},
      {"writeMajorityCount", bson::V(int32_t{t.config().write_majority_count()})},
      {"votingMembersCount", bson::V(int32_t{t.config().voting_members_count()})},
      {"writableVotingMembersCount", bson::V(int32_t{t.config().writable_voting_members_count()})},
      {"optimes", bson::V(std::move(optimes))},
      {"members", bson::V(std::move(members))}};
}

}  // namespace mongosim::server
