// A replica-set configuration (docs/mongodb-behaviour.md: Member states and configuration; Status
// and initiation): the members, their priorities and votes, and the timing settings every member's
// topology logic runs on.
//
// parse_repl_set_config() is the trust boundary for replSetInitiate / replSetReconfig input: it
// rejects what mongod rejects with InvalidReplicaSetConfig (93) and a message naming the field.
// A ReplSetConfig that exists is valid: 1..kMaxMembers members, 1..kMaxVotingMembers voters,
// unique _id and host, votes in {0, 1}, priority 0 for non-voters, hidden members and arbiters,
// at least one member that can become primary.
//
// Thread rules: a plain value; copy it freely, share it only as const.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bson/value.h"

namespace mongosim::repl {

inline constexpr int kMaxMembers = 50;
inline constexpr int kMaxVotingMembers = 7;
inline constexpr double kMaxPriority = 1000;

struct MemberConfig {
  int id = 0;           // the member's _id, stable across reconfigs (not its index)
  std::string host;     // "host:port"
  double priority = 1;  // 0: never primary
  int votes = 1;
  bool hidden = false;
  bool arbiter_only = false;

  bool is_voter() const { return votes > 0; }
  bool is_data_bearing() const { return !arbiter_only; }
  bool is_electable() const { return priority > 0 && !arbiter_only; }
};

// Defaults are mongod's (docs/mongodb-behaviour.md, Member states and configuration).
struct ConfigSettings {
  int64_t election_timeout_ms = 10000;
  int64_t heartbeat_interval_ms = 2000;
  int64_t heartbeat_timeout_secs = 10;
  int64_t catch_up_timeout_ms = -1;  // -1: no limit; 0: no catch-up
  int64_t catch_up_takeover_delay_ms = 30000;
  bool chaining_allowed = true;
  std::optional<bson::ObjectId> replica_set_id;
};

struct ReplSetConfig {
  std::string set_name;  // _id
  int64_t version = 1;
  int64_t term = -1;  // the term the config was written in; -1 until a primary stamps it
  std::vector<MemberConfig> members;
  ConfigSettings settings;

  int member_count() const { return static_cast<int>(members.size()); }
  int voting_members_count() const;
  int writable_voting_members_count() const;  // voters that hold data
  // Votes needed to win an election: a strict majority of the votes.
  int majority_vote_count() const;
  // Members that must have a write for w:"majority": min(majority, data-bearing voters)
  // (docs/mongodb-behaviour.md, Oplog and rollback).
  int write_majority_count() const;
  // The member's index in `members`, or -1.
  int index_of_host(const std::string& host) const;
  int index_of_id(int id) const;

  // {_id, version, term, protocolVersion: 1, members: [...], settings: {...}} (replSetGetConfig).
  bson::Document to_document() const;
};

// Parses and validates a config document. Throws CommandError: 93 InvalidReplicaSetConfig for a
// config mongod would refuse, naming the member index and field at fault.
ReplSetConfig parse_repl_set_config(const bson::Document& doc);

}  // namespace mongosim::repl
