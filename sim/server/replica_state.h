// The replica-set state of this member: whether replication is enabled (--replSet), the
// installed config, the member state, the term and what follows from them (election id,
// writability). hello, replSetGetStatus, the dispatcher's not-primary checks and the data
// layer's term getter all read it here; replSetInitiate (and later the replication layer)
// change it here.
//
// Invariants: state is kPrimary only with a config installed; the term never decreases;
// a standalone (no --replSet) is always writable and has term 0.
//
// Thread-safe: every member takes the internal mutex; readers get consistent snapshots.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/optime.h"
#include "bson/value.h"
#include "repl/config.h"
#include "repl/member_state.h"

namespace mongosim::server {

using MemberState = repl::MemberState;
using repl::member_state_name;

// Parses a replSetInitiate config with the replication layer's parser, then adds what only
// initiate checks: the set name matches --replSet (93) and this member is listed (74 NodeNotFound).
repl::ReplSetConfig parse_initiate_config(const bson::Document& doc,
                                          std::string_view expected_set_name,
                                          std::string_view self_host);

struct ReplicaSnapshot {
  bool replication_enabled = false;
  std::string set_name;
  std::string self_host;
  std::optional<repl::ReplSetConfig> config;
  MemberState state = MemberState::kStartup;
  int64_t term = 0;
  OpTime initiate_optime;  // the optime of the set's first entry (null for a standalone)
  int64_t election_date_ms = 0;
  int64_t topology_counter = 0;           // bumped on every state/config change
  std::string primary_host;               // the primary this member knows of ("" if none)
  std::optional<OpTime> majority_optime;  // the commit point, once a replication layer runs

  bool is_writable_primary() const {
    return !replication_enabled || state == MemberState::kPrimary;
  }
  bool is_secondary() const { return replication_enabled && state == MemberState::kSecondary; }
};

// OID::fromTerm: 7fffffff followed by the term as a big-endian int64 (docs/mongodb-behaviour.md,
// Hello).
bson::ObjectId election_id_for_term(int64_t term);

class ReplicaState {
 public:
  // set_name empty: a standalone. self_host: the "host:port" this member answers as.
  ReplicaState(std::string set_name, std::string self_host);

  ReplicaSnapshot snapshot() const;
  bool replication_enabled() const { return !set_name_.empty(); }
  int64_t term() const;

  // replSetInitiate. A one-member set becomes primary in term 1 at once; a larger set starts as
  // SECONDARY in term 0 and the replication layer elects. config_arg is the command's first value
  // (a config document, or anything else for "build a default config"). Returns the reply fields.
  // Throws CommandError.
  bson::Document initiate(const bson::Value& config_arg, int64_t now_ms);
  // For the replication layer: the one-member config persisted on the dbpath, adopted as the
  // initiate adopts one (primary in term 1) but as it was written, replicaSetId included. Adopts
  // it only when none is installed, the set name matches and this member is listed.
  bool restore_one_member(repl::ReplSetConfig config, int64_t now_ms);

  // For the replication layer: a config learned from another member's heartbeat. Installs it
  // (state SECONDARY) only when none is installed, the set name matches and this member is
  // listed; returns whether it did.
  bool install_config(repl::ReplSetConfig config);

  // For the replication layer: move to a state in a term (term must not decrease).
  void set_state(MemberState state, int64_t term, int64_t now_ms);
  // For the replication layer: the primary this member believes in ("" for none).
  void set_primary_host(std::string host);
  // For the replication layer: the majority commit point hello reports.
  void set_majority_optime(OpTime optime);

 private:
  // Whether config may be this member's: the set name is --replSet's and it lists self_host_.
  bool is_mine(const repl::ReplSetConfig& config) const;
  // A config this member now runs under: several members start SECONDARY in term 0 (the
  // replication layer elects), one becomes primary in term 1 at once. Caller holds mutex_.
  void adopt_locked(repl::ReplSetConfig config, int64_t now_ms);

  const std::string set_name_;
  const std::string self_host_;
  mutable std::mutex mutex_;
  std::optional<repl::ReplSetConfig> config_;
  MemberState state_ = MemberState::kStartup;
  int64_t term_ = 0;
  OpTime initiate_optime_;
  int64_t election_date_ms_ = 0;
  int64_t topology_counter_ = 0;
  std::string primary_host_;
  std::optional<OpTime> majority_optime_;
};

}  // namespace mongosim::server
