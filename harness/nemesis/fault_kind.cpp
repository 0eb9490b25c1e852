#include "nemesis/fault_kind.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>

namespace locklab {
namespace {

// A day either way: enough for any lease, small enough that date arithmetic stays sane.
constexpr int64_t kClockMaxMs = 86'400'000;

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string list_of(const std::vector<std::string>& allowed) {
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + ("\"" + a + "\"");
  return list;
}

// The checks the rows' validators are made of; each returns the first problem with one key.
std::optional<FaultParamError> choice(const nlohmann::json& p, const char* key,
                                      const std::vector<std::string>& allowed) {
  if (!p.contains(key)) return std::nullopt;
  if (!p[key].is_string() ||
      std::find(allowed.begin(), allowed.end(), p[key].get<std::string>()) == allowed.end()) {
    return FaultParamError{key, "must be one of " + list_of(allowed)};
  }
  return std::nullopt;
}

std::optional<FaultParamError> integer(const nlohmann::json& p, const char* key, int64_t min,
                                       int64_t max) {
  if (!p.contains(key)) return std::nullopt;
  if (!p[key].is_number_integer() || p[key].get<int64_t>() < min || p[key].get<int64_t>() > max) {
    return FaultParamError{
        key, "must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]"};
  }
  return std::nullopt;
}

std::optional<FaultParamError> boolean(const nlohmann::json& p, const char* key) {
  if (p.contains(key) && !p[key].is_boolean())
    return FaultParamError{key, "expected true or false"};
  return std::nullopt;
}

std::optional<FaultParamError> command_names(const nlohmann::json& p) {
  if (p.contains("commands") && (!p["commands"].is_array() || p["commands"].empty())) {
    return FaultParamError{"commands", "expected a non-empty array of command names"};
  }
  return std::nullopt;
}

// A clock offset or jump: non-zero, within a day; `required` unless the fault has a default.
std::optional<FaultParamError> clock_ms(const nlohmann::json& p, const char* key, bool required) {
  if (required && !p.contains(key)) {
    return FaultParamError{key, std::string("required (milliseconds, non-zero, at most ") +
                                    std::to_string(kClockMaxMs) + " either way)"};
  }
  if (auto e = integer(p, key, -kClockMaxMs, kClockMaxMs)) return e;
  if (p.contains(key) && p[key].get<int64_t>() == 0) return FaultParamError{key, "must not be 0"};
  return std::nullopt;
}

std::optional<FaultParamError> check_restart(const nlohmann::json& p) {
  return boolean(p, "restart");
}
std::optional<FaultParamError> check_isolate_worker(const nlohmann::json& p) {
  return choice(p, "mode", {"drop", "reject"});
}
std::optional<FaultParamError> check_isolate_member(const nlohmann::json& p) {
  return choice(p, "from", {"members", "everyone"});
}
std::optional<FaultParamError> check_partition_worker(const nlohmann::json& p) {
  return choice(p, "members", {"primary", "secondaries", "all"});
}
std::optional<FaultParamError> check_offset(const nlohmann::json& p) {
  return clock_ms(p, "offset_ms", true);
}
std::optional<FaultParamError> check_jump(const nlohmann::json& p) {
  return clock_ms(p, "jump_ms", true);
}
std::optional<FaultParamError> check_divergence(const nlohmann::json& p) {
  return clock_ms(p, "clock_ms", false);
}

std::optional<FaultParamError> check_step_down(const nlohmann::json& p) {
  // mongod requires stepDownSecs > secondaryCatchUpPeriodSecs, which the fault sets below it.
  if (auto e = integer(p, "step_down_secs", 2, 3600)) return e;
  if (auto e = integer(p, "cadence_ms", 0, 600'000)) return e;
  return boolean(p, "force");
}

std::optional<FaultParamError> check_command_delay(const nlohmann::json& p) {
  if (!p.contains("delay_ms")) {
    return FaultParamError{"delay_ms", "required (milliseconds, above lock.socket_timeout_ms)"};
  }
  if (auto e = integer(p, "delay_ms", 1, 600'000)) return e;
  return command_names(p);
}

std::optional<FaultParamError> check_reply_delay(const nlohmann::json& p) {
  if (!p.contains("delay_ms")) {
    return FaultParamError{"delay_ms", "required (milliseconds each reply to the worker is held)"};
  }
  return integer(p, "delay_ms", 1, 600'000);
}

std::optional<FaultParamError> check_fail_command(const nlohmann::json& p) {
  if (auto e = choice(p, "mode", {"close-connection", "block", "error", "write-concern-error"}))
    return e;
  if (auto e = integer(p, "error_code", 1, 1'000'000)) return e;
  if (auto e = integer(p, "block_ms", 1, 600'000)) return e;
  return command_names(p);
}

std::vector<FaultKindRow> build_table() {
  using K = FaultKind;
  using T = FaultTarget;
  using C = ClockMoved;
  // Columns: kind, name, target, default target, members needed, needs network (partition
  // hooks), signals member processes, clock moved, own keys, their check.
  // clang-format off
  std::vector<FaultKindRow> rows = {
      {K::kIsolateWorker, "isolate-worker", T::kWorker, "random", 1, true, false, C::kNone,
       {"mode"}, check_isolate_worker},
      {K::kPauseWorker, "pause-worker", T::kWorker, "random", 1, false, false, C::kNone,
       {}, nullptr},
      {K::kKillWorker, "kill-worker", T::kWorker, "random", 1, false, false, C::kNone,
       {"restart"}, check_restart},
      {K::kFailCommand, "fail-command", T::kWorker, "random", 1, false, false, C::kNone,
       {"mode", "commands", "error_code", "block_ms"}, check_fail_command},
      {K::kCommandDelay, "command-delay", T::kWorker, "random", 1, false, false, C::kNone,
       {"delay_ms", "commands"}, check_command_delay},
      {K::kClockSkewWorker, "clock-skew-worker", T::kWorker, "random", 1, false, false, C::kWorker,
       {"offset_ms"}, check_offset},
      {K::kClockJumpWorker, "clock-jump-worker", T::kWorker, "random", 1, false, false, C::kWorker,
       {"jump_ms"}, check_jump},
      {K::kPartitionWorker, "partition-worker", T::kWorker, "random", 3, true, false, C::kNone,
       {"members"}, check_partition_worker},
      {K::kPauseMember, "pause-member", T::kMember, "m0", 1, false, true, C::kNone,
       {}, nullptr},
      {K::kKillMember, "kill-member", T::kMember, "m0", 1, false, true, C::kNone,
       {"restart"}, check_restart},
      {K::kIsolateMember, "isolate-member", T::kMember, "m0", 3, true, false, C::kNone,
       {"from"}, check_isolate_member},
      {K::kFreeze, "freeze", T::kMember, "secondaries", 3, false, false, C::kNone,
       {}, nullptr},
      {K::kClockSkew, "clock-skew", T::kMember, "m0", 1, false, false, C::kMember,
       {"offset_ms"}, check_offset},
      {K::kClockJump, "clock-jump", T::kMember, "m0", 1, false, false, C::kMember,
       {"jump_ms"}, check_jump},
      {K::kPartitionHalves, "partition-halves", T::kCluster, "primary", 3, true, false, C::kNone,
       {}, nullptr},
      {K::kPartitionRing, "partition-ring", T::kCluster, "primary", 5, true, false, C::kNone,
       {}, nullptr},
      {K::kPartitionBridge, "partition-bridge", T::kCluster, "primary", 3, true, false, C::kNone,
       {}, nullptr},
      {K::kStepDown, "step-down", T::kCluster, "primary", 3, false, false, C::kNone,
       {"step_down_secs", "cadence_ms", "force"}, check_step_down},
      // Cuts the primary off, moves its clock, kills the new primary and restarts it.
      {K::kPrimaryDivergence, "primary-divergence", T::kCluster, "primary", 3, true, true,
       C::kMember, {"clock_ms"}, check_divergence},
      // The members' replies to one worker held delay_ms after they arrive (its requests are
      // not): a relay in the worker's namespace (db/reply_relays.h), hence "needs network".
      {K::kReplyDelay, "reply-delay", T::kWorker, "random", 1, true, false, C::kNone,
       {"delay_ms"}, check_reply_delay},
  };
  // clang-format on
  for (size_t i = 0; i < rows.size(); ++i) {
    if (static_cast<size_t>(rows[i].kind) != i) {
      throw std::logic_error("fault kind table: row " + std::to_string(i) + " out of order");
    }
  }
  return rows;
}

}  // namespace

const std::vector<FaultKindRow>& fault_kinds() {
  static const std::vector<FaultKindRow> rows = build_table();
  return rows;
}

const FaultKindRow& fault_row(FaultKind kind) {
  const auto& rows = fault_kinds();
  const size_t i = static_cast<size_t>(kind);
  assert(i < rows.size() && rows[i].kind == kind);
  return rows.at(i);
}

std::string_view to_string(FaultKind kind) {
  return fault_row(kind).name;
}

std::optional<FaultKind> fault_kind_named(std::string_view name) {
  for (const FaultKindRow& row : fault_kinds()) {
    if (row.name == name) return row.kind;
  }
  return std::nullopt;
}

std::string fault_kind_names() {
  std::vector<std::string_view> names;
  for (const FaultKindRow& row : fault_kinds()) names.push_back(row.name);
  std::sort(names.begin(), names.end());
  std::string list;
  for (std::string_view n : names) list += (list.empty() ? "" : ", ") + std::string(n);
  return list;
}

std::optional<std::string> target_error(FaultKind kind, const std::string& target, int members,
                                        int workers) {
  const FaultKindRow& row = fault_row(kind);
  if (row.target == FaultTarget::kCluster) {
    if (target == "primary") return std::nullopt;
    return "\"" + target + "\": " + std::string(row.name) +
           " acts on the whole set; its target can only be \"primary\"";
  }
  if (target == "random") return std::nullopt;
  if (row.target == FaultTarget::kWorker) {
    if (target == "holder") return std::nullopt;
    if (target.size() >= 2 && target[0] == 'w' && all_digits(target.substr(1)) &&
        target.size() < 8 && std::stoi(target.substr(1)) >= 1 &&
        std::stoi(target.substr(1)) <= workers) {
      return std::nullopt;
    }
    return "\"" + target + "\" is not a worker (w1.., holder) of this scenario, nor \"random\"";
  }
  if (target == "primary" || target == "secondaries") return std::nullopt;
  if (target.size() >= 2 && target[0] == 'm' && all_digits(target.substr(1)) && target.size() < 4 &&
      std::stoi(target.substr(1)) < members) {
    return std::nullopt;
  }
  return "\"" + target +
         "\" is not a member (m0..) of this scenario, nor \"random\", \"primary\" or "
         "\"secondaries\"";
}

std::optional<FaultParamError> fault_param_error(FaultKind kind, const nlohmann::json& params,
                                                 int members) {
  const FaultKindRow& row = fault_row(kind);
  if (members < row.members_min) {
    return FaultParamError{"fault", std::string(row.name) + " needs cluster.members >= " +
                                        std::to_string(row.members_min) + " (the scenario has " +
                                        std::to_string(members) + ")"};
  }
  return row.check ? row.check(params) : std::nullopt;
}

}  // namespace locklab
