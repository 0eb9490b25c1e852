#include "repl/config.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "base/command_error.h"
#include "base/error_codes.h"

namespace mongosim::repl {

namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw CommandError(code::kInvalidReplicaSetConfig, message);
}

// Reads a whole number from any numeric BSON type, as mongod's config parser accepts.
int64_t whole_number(const bson::Value& v, const std::string& where) {
  if (!v.is_number()) {
    invalid(where + " field must be a number, not " + std::string(bson::type_name(v.type())));
  }
  auto exact = v.number_as_exact_int64();
  if (!exact)
    invalid(where + " field must be a whole number, got " + std::to_string(v.number_as_double()));
  return *exact;
}

// A whole number the config document stores as an int (version, the settings' periods): one past
// 32 bits is refused rather than written back cut (2^31 ms would come back negative and the
// member could not restart from its own dbpath).
int64_t int32_number(const bson::Value& v, const std::string& where) {
  const int64_t n = whole_number(v, where);
  if (n < INT32_MIN || n > INT32_MAX)
    invalid(where + " value of " + std::to_string(n) + " is out of range.");
  return n;
}

double number(const bson::Value& v, const std::string& where) {
  if (!v.is_number()) {
    invalid(where + " field must be a number, not " + std::string(bson::type_name(v.type())));
  }
  double d = v.number_as_double();
  if (!std::isfinite(d)) invalid(where + " field must be a finite number");
  return d;
}

bool boolean(const bson::Value& v, const std::string& where) {
  if (v.type() == bson::Type::kBool) return v.as_bool();
  if (v.is_number()) return v.number_as_double() != 0;
  invalid(where + " field must be a boolean, not " + std::string(bson::type_name(v.type())));
}

const std::string& string_field(const bson::Value& v, const std::string& where) {
  if (!v.is_string()) {
    invalid(where + " field must be a string, not " + std::string(bson::type_name(v.type())));
  }
  return v.as_string();
}

MemberConfig parse_member(const bson::Value& v, size_t index) {
  std::string at = "members." + std::to_string(index);
  if (!v.is_document()) invalid(at + " must be an object");
  MemberConfig m;
  bool has_id = false, has_host = false, has_priority = false;
  for (const auto& [key, value] : v.as_document()) {
    std::string where = at + "." + key;
    if (key == "_id") {
      int64_t id = whole_number(value, where);
      if (id < 0 || id > 255)
        invalid(where + " value of " + std::to_string(id) + " is out of range.");
      m.id = static_cast<int>(id);
      has_id = true;
    } else if (key == "host") {
      m.host = string_field(value, where);
      if (m.host.empty()) invalid(where + " must not be empty");
      has_host = true;
    } else if (key == "priority") {
      m.priority = number(value, where);
      has_priority = true;
    } else if (key == "votes") {
      int64_t votes = whole_number(value, where);
      if (votes != 0 && votes != 1) {
        invalid("votes field value is " + std::to_string(votes) + " but must be 0 or 1 (" + where +
                ")");
      }
      m.votes = static_cast<int>(votes);
    } else if (key == "hidden") {
      m.hidden = boolean(value, where);
    } else if (key == "arbiterOnly") {
      m.arbiter_only = boolean(value, where);
    } else if (key == "buildIndexes" || key == "tags" || key == "secondaryDelaySecs") {
      // Accepted for compatibility; mongosim has no use for them yet.
    } else {
      invalid("BSON field 'MemberConfig." + key + "' is an unknown field (" + at + ")");
    }
  }
  if (!has_id) invalid(at + "._id field is missing");
  if (!has_host) invalid(at + ".host field is missing");
  if (m.arbiter_only && !has_priority) m.priority = 0;
  if (m.priority < 0 || m.priority > kMaxPriority) {
    invalid(at + ".priority field value of " + std::to_string(m.priority) +
            " is out of range; it must be between 0 and 1000");
  }
  if (m.votes == 0 && m.priority != 0) {
    invalid(at + ": priority must be 0 when non-voting (votes:0)");
  }
  if (m.hidden && m.priority != 0) invalid(at + ": priority must be 0 when hidden=true");
  if (m.arbiter_only && m.priority != 0) invalid(at + ": arbiters must have priority 0");
  if (m.arbiter_only && m.votes == 0) invalid(at + ": Arbiter must vote (cannot have 0 votes)");
  return m;
}

ConfigSettings parse_settings(const bson::Value& v) {
  if (!v.is_document()) invalid("settings field must be an object");
  ConfigSettings s;
  for (const auto& [key, value] : v.as_document()) {
    std::string where = "settings." + key;
    if (key == "electionTimeoutMillis") {
      s.election_timeout_ms = int32_number(value, where);
      if (s.election_timeout_ms <= 0) invalid("election timeout must be greater than 0");
    } else if (key == "heartbeatIntervalMillis") {
      s.heartbeat_interval_ms = int32_number(value, where);
      if (s.heartbeat_interval_ms <= 0) invalid("heartbeat interval must be greater than 0");
    } else if (key == "heartbeatTimeoutSecs") {
      s.heartbeat_timeout_secs = int32_number(value, where);
      if (s.heartbeat_timeout_secs <= 0) invalid("heartbeat timeout must be greater than 0");
    } else if (key == "catchUpTimeoutMillis") {
      s.catch_up_timeout_ms = int32_number(value, where);
      if (s.catch_up_timeout_ms < -1) {
        invalid("catch-up timeout must be positive, 0 (no catch-up) or -1 (infinite catch-up).");
      }
    } else if (key == "catchUpTakeoverDelayMillis") {
      s.catch_up_takeover_delay_ms = int32_number(value, where);
      if (s.catch_up_takeover_delay_ms < -1) {
        invalid(
            "catch-up takeover delay must be -1 (no catch-up takeover) or greater than or equal to "
            "0.");
      }
    } else if (key == "chainingAllowed") {
      s.chaining_allowed = boolean(value, where);
    } else if (key == "replicaSetId") {
      if (value.type() != bson::Type::kObjectId) invalid(where + " field must be an ObjectId");
      s.replica_set_id = value.as_object_id();
    } else if (key == "getLastErrorModes" || key == "getLastErrorDefaults") {
      // Accepted for compatibility; write-concern tags are not supported.
    } else {
      invalid("BSON field 'ReplSetConfigSettings." + key + "' is an unknown field.");
    }
  }
  return s;
}

void validate_members(const ReplSetConfig& c) {
  if (c.members.empty() || c.member_count() > kMaxMembers) {
    invalid("Replica set configuration contains " + std::to_string(c.members.size()) +
            " members, but must have at least 1 and no more than " + std::to_string(kMaxMembers));
  }
  int voters = c.voting_members_count();
  if (voters < 1 || voters > kMaxVotingMembers) {
    invalid("Replica set configuration contains " + std::to_string(voters) +
            " voting members, but must be at least 1 and no more than " +
            std::to_string(kMaxVotingMembers));
  }
  for (size_t i = 0; i < c.members.size(); ++i) {
    for (size_t j = i + 1; j < c.members.size(); ++j) {
      if (c.members[i].id == c.members[j].id) {
        invalid("Found two member configurations with same _id field, members." +
                std::to_string(i) + "._id == members." + std::to_string(j) +
                "._id == " + std::to_string(c.members[i].id));
      }
      if (c.members[i].host == c.members[j].host) {
        invalid("Found two member configurations with same host field, members." +
                std::to_string(i) + ".host == members." + std::to_string(j) +
                ".host == " + c.members[i].host);
      }
    }
  }
  bool any_electable = std::any_of(c.members.begin(), c.members.end(),
                                   [](const MemberConfig& m) { return m.is_electable(); });
  if (!any_electable) {
    invalid(
        "Replica set configuration must contain at least one non-arbiter member with "
        "priority > 0");
  }
}

}  // namespace

int ReplSetConfig::voting_members_count() const {
  return static_cast<int>(std::count_if(members.begin(), members.end(),
                                        [](const MemberConfig& m) { return m.is_voter(); }));
}

int ReplSetConfig::writable_voting_members_count() const {
  return static_cast<int>(std::count_if(members.begin(), members.end(), [](const MemberConfig& m) {
    return m.is_voter() && m.is_data_bearing();
  }));
}

int ReplSetConfig::majority_vote_count() const {
  return voting_members_count() / 2 + 1;
}

int ReplSetConfig::write_majority_count() const {
  return std::min(majority_vote_count(), writable_voting_members_count());
}

int ReplSetConfig::index_of_host(const std::string& host) const {
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i].host == host) return static_cast<int>(i);
  }
  return -1;
}

int ReplSetConfig::index_of_id(int id) const {
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

bson::Document ReplSetConfig::to_document() const {
  using bson::V;
  bson::Array member_docs;
  for (const auto& m : members) {
    member_docs.push_back(V(bson::Document{
        {"_id", V(int32_t{m.id})},
        {"host", V(m.host)},
        {"arbiterOnly", V(m.arbiter_only)},
        {"buildIndexes", V(true)},
        {"hidden", V(m.hidden)},
        {"priority", V(m.priority)},
        {"tags", V(bson::Document{})},
        {"secondaryDelaySecs", V(int64_t{0})},
        {"votes", V(int32_t{m.votes})},
    }));
  }
  bson::Document s{
      {"chainingAllowed", V(settings.chaining_allowed)},
      {"heartbeatIntervalMillis", V(int32_t(settings.heartbeat_interval_ms))},
      {"heartbeatTimeoutSecs", V(int32_t(settings.heartbeat_timeout_secs))},
      {"electionTimeoutMillis", V(int32_t(settings.election_timeout_ms))},
      {"catchUpTimeoutMillis", V(int32_t(settings.catch_up_timeout_ms))},
      {"catchUpTakeoverDelayMillis", V(int32_t(settings.catch_up_takeover_delay_ms))},
      {"getLastErrorModes", V(bson::Document{})},
      {"getLastErrorDefaults",
       V(bson::Document{{"w", V(int32_t{1})}, {"wtimeout", V(int32_t{0})}})},
  };
  if (settings.replica_set_id) {
    s.append("replicaSetId", bson::Value::object_id(*settings.replica_set_id));
  }
  return bson::Document{
      {"_id", V(set_name)},
      {"version", V(int32_t(version))},
      {"term", V(int64_t{term})},
      {"protocolVersion", V(int64_t{1})},
      {"writeConcernMajorityJournalDefault", V(true)},
      {"members", V(std::move(member_docs))},
      {"settings", V(std::move(s))},
  };
}

ReplSetConfig parse_repl_set_config(const bson::Document& doc) {
  ReplSetConfig c;
  bool has_name = false, has_members = false;
  for (const auto& [key, value] : doc) {
    if (key == "_id") {
      c.set_name = string_field(value, "_id");
      if (c.set_name.empty()) invalid("_id field must be a non-empty replica set name");
      has_name = true;
    } else if (key == "version") {
      c.version = int32_number(value, "version");
      if (c.version < 1)
        invalid("version field value of " + std::to_string(c.version) + " is out of range");
    } else if (key == "term") {
      c.term = whole_number(value, "term");
    } else if (key == "protocolVersion") {
      if (whole_number(value, "protocolVersion") != 1) {
        invalid("Only protocolVersion 1 is supported; protocolVersion field value of " +
                std::to_string(whole_number(value, "protocolVersion")) + " is not");
      }
    } else if (key == "members") {
      if (!value.is_array()) invalid("members field must be an array");
      for (size_t i = 0; i < value.as_array().size(); ++i) {
        c.members.push_back(parse_member(value.as_array()[i], i));
      }
      has_members = true;
    } else if (key == "settings") {
      c.settings = parse_settings(value);
    } else if (key == "writeConcernMajorityJournalDefault") {
      boolean(value, key);
    } else {
      invalid("BSON field 'ReplSetConfig." + key + "' is an unknown field.");
    }
  }
  if (!has_name) invalid("Missing expected field \"_id\"");
  if (!has_members) invalid("Missing expected field \"members\"");
  validate_members(c);
  return c;
}

}  // namespace mongosim::repl
