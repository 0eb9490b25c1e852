#include "server/replica_state.h"

#include <algorithm>
#include <cassert>
#include <cctype>

#include "base/error_codes.h"
#include "command/command.h"

namespace mongosim::server {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

[[noreturn]] void bad_config(const std::string& message) {
  throw CommandError(code::kInvalidReplicaSetConfig, message);
}

}  // namespace

bson::ObjectId election_id_for_term(int64_t term) {
  bson::ObjectId oid;
  oid.bytes[0] = 0x7f;
  oid.bytes[1] = oid.bytes[2] = oid.bytes[3] = 0xff;
  auto u = static_cast<uint64_t>(term);
  for (int i = 0; i < 8; ++i) oid.bytes[4 + i] = static_cast<uint8_t>(u >> (56 - 8 * i));
  return oid;
}

repl::ReplSetConfig parse_initiate_config(const bson::Document& doc,
                                          std::string_view expected_set_name,
                                          std::string_view self_host) {
  repl::ReplSetConfig config = repl::parse_repl_set_config(doc);
  // The set's identity is the initiate's to give (below), never the caller's: two sets given one
  // id could not tell each other's members apart.
  if (config.settings.replica_set_id) {
    bad_config(
        "replica set configuration cannot contain 'replicaSetId' field when called from "
        "replSetInitiate");
  }
  if (config.set_name != expected_set_name) {
    bad_config("Attempting to initiate a replica set with name " + config.set_name +
               ", but command line reports " + std::string(expected_set_name) + "; rejecting");
  }
  bool self_found = std::any_of(config.members.begin(), config.members.end(),
                                [&](const auto& m) { return lower(m.host) == lower(self_host); });
  if (!self_found) {
    throw CommandError(code::kNodeNotFound,
                       "No host described in new configuration with {version: " +
                           std::to_string(config.version) + ", term: 0} for replica set " +
                           config.set_name + " maps to this node (" + std::string(self_host) + ")");
  }
  return config;
}

ReplicaState::ReplicaState(std::string set_name, std::string self_host)
    : set_name_(std::move(set_name)), self_host_(std::move(self_host)) {
  if (set_name_.empty()) state_ = MemberState::kPrimary;  // a standalone is always writable
}

ReplicaSnapshot ReplicaState::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  ReplicaSnapshot s;
  s.replication_enabled = !set_name_.empty();
  s.set_name = set_name_;
  s.self_host = self_host_;
  s.config = config_;
  s.state = state_;
  s.term = term_;
  s.initiate_optime = initiate_optime_;
  s.election_date_ms = election_date_ms_;
  s.topology_counter = topology_counter_;
  s.primary_host = primary_host_;
  s.majority_optime = majority_optime_;
  return s;
}

int64_t ReplicaState::term() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return term_;
}

bson::Document ReplicaState::initiate(const bson::Value& config_arg, int64_t now_ms) {
  if (set_name_.empty()) {
    throw CommandError(code::kNoReplicationEnabled,
                       "This node was not started with replication enabled.");
  }
  bson::Document reply;
  repl::ReplSetConfig config;
  if (config_arg.is_document() && !config_arg.as_document().empty()) {
    config = parse_initiate_config(config_arg.as_document(), set_name_, self_host_);
  } else {
    config.set_name = set_name_;
    repl::MemberConfig self;
    self.host = self_host_;
    config.members.push_back(self);
    reply.append("info2",
                 bson::V("no configuration specified. Using a default configuration for the set"));
    reply.append("me", bson::V(self_host_));
  }
  // Members of two sets of one name (a port reused by another set, a host moved between sets)
  // tell each other apart by this id: a member answering for another set is not counted
  // (docs/mongodb-behaviour.md, Member states and configuration).
  config.settings.replica_set_id = bson::ObjectId::generate();
  std::lock_guard<std::mutex> lock(mutex_);
  if (config_) {
    throw CommandError(code::kAlreadyInitialized, "already initialized");
  }
  adopt_locked(std::move(config), now_ms);
  return reply;
}

bool ReplicaState::restore_one_member(repl::ReplSetConfig config, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (set_name_.empty() || config_ || config.members.size() != 1 || !is_mine(config)) {
    return false;
  }
  adopt_locked(std::move(config), now_ms);
  return true;
}

void ReplicaState::adopt_locked(repl::ReplSetConfig config, int64_t now_ms) {
  if (config.members.size() > 1) {
    // Several members: the replication layer elects a primary through the protocol.
    config_ = std::move(config);
    state_ = MemberState::kSecondary;
    ++topology_counter_;
    return;
  }
  // A single voting member elects itself at once in term 1 (docs/mongodb-behaviour.md, Elections).
  term_ = 1;
  config.term = term_;
  config_ = std::move(config);
  state_ = MemberState::kPrimary;
  initiate_optime_ = OpTime{bson::Timestamp{static_cast<uint32_t>(now_ms / 1000), 1}, term_};
  election_date_ms_ = now_ms;
  ++topology_counter_;
}

bool ReplicaState::is_mine(const repl::ReplSetConfig& config) const {
  return config.set_name == set_name_ &&
         std::any_of(config.members.begin(), config.members.end(),
                     [&](const auto& m) { return lower(m.host) == lower(self_host_); });
}

bool ReplicaState::install_config(repl::ReplSetConfig config) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (set_name_.empty() || config_ || !is_mine(config)) return false;
  config_ = std::move(config);
  state_ = MemberState::kSecondary;
  ++topology_counter_;
  return true;
}

void ReplicaState::set_state(MemberState state, int64_t term, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  assert(term >= term_ && "terms never decrease");
  assert((state != MemberState::kPrimary || config_) && "a primary needs a config");
  if (state == MemberState::kPrimary && (state_ != MemberState::kPrimary || term != term_)) {
    election_date_ms_ = now_ms;
  }
  state_ = state;
  term_ = term;
  if (config_) config_->term = term;
  ++topology_counter_;
}

}  // namespace mongosim::server

namespace mongosim::server {

void ReplicaState::set_majority_optime(OpTime optime) {
  std::lock_guard<std::mutex> lock(mutex_);
  majority_optime_ = optime;
}

void ReplicaState::set_primary_host(std::string host) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (primary_host_ == host) return;
  primary_host_ = std::move(host);
  ++topology_counter_;
}

}  // namespace mongosim::server
