#include "scenario_faults.h"

#include <algorithm>
#include <stdexcept>

namespace locklab {
namespace {

// Partitions, step-downs and the divergence sequence need a set that can lose and regain a
// majority: at least 3 members. The ring needs 5 (with 3, every member sees every other).
int members_needed(std::string_view fault) {
  if (fault == "partition-ring") return 5;
  if (fault.starts_with("partition-") || fault == "isolate-member" || fault == "step-down" ||
      fault == "freeze" || fault == "primary-divergence") {
    return 3;
  }
  return 1;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string list_of(const std::vector<std::string>& allowed) {
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + ("\"" + a + "\"");
  return list;
}

}  // namespace

const std::map<std::string, std::vector<std::string>>& known_faults() {
  static const std::map<std::string, std::vector<std::string>> faults = {
      {"isolate-worker", {"mode"}},
      {"pause-worker", {}},
      {"kill-worker", {"restart"}},
      {"fail-command", {"mode", "commands", "error_code", "block_ms"}},
      {"command-delay", {"delay_ms", "commands"}},
      {"clock-skew-worker", {"offset_ms"}},
      {"clock-jump-worker", {"jump_ms"}},
      {"partition-worker", {"members"}},
      {"pause-member", {}},
      {"kill-member", {"restart"}},
      {"isolate-member", {"from"}},
      {"freeze", {}},
      {"clock-skew", {"offset_ms"}},
      {"clock-jump", {"jump_ms"}},
      {"partition-halves", {}},
      {"partition-ring", {}},
      {"partition-bridge", {}},
      {"step-down", {"step_down_secs", "cadence_ms", "force"}},
      {"primary-divergence", {"clock_ms"}},
  };
  return faults;
}

FaultTarget fault_target(std::string_view fault) {
  static const std::map<std::string, FaultTarget, std::less<>> targets = {
      {"isolate-worker", FaultTarget::kWorker},      {"pause-worker", FaultTarget::kWorker},
      {"kill-worker", FaultTarget::kWorker},         {"fail-command", FaultTarget::kWorker},
      {"command-delay", FaultTarget::kWorker},       {"clock-skew-worker", FaultTarget::kWorker},
      {"clock-jump-worker", FaultTarget::kWorker},   {"partition-worker", FaultTarget::kWorker},
      {"pause-member", FaultTarget::kMember},        {"kill-member", FaultTarget::kMember},
      {"isolate-member", FaultTarget::kMember},      {"freeze", FaultTarget::kMember},
      {"clock-skew", FaultTarget::kMember},          {"clock-jump", FaultTarget::kMember},
      {"partition-halves", FaultTarget::kCluster},   {"partition-ring", FaultTarget::kCluster},
      {"partition-bridge", FaultTarget::kCluster},   {"step-down", FaultTarget::kCluster},
      {"primary-divergence", FaultTarget::kCluster},
  };
  const auto it = targets.find(fault);
  if (it == targets.end()) throw std::out_of_range("unknown fault kind " + std::string(fault));
  return it->second;
}

bool fault_targets_member(std::string_view fault) {
  return fault_target(fault) != FaultTarget::kWorker;
}

bool fault_moves_clock(std::string_view fault) {
  return fault == "clock-skew" || fault == "clock-jump" || fault == "primary-divergence";
}

std::string default_target(std::string_view fault) {
  switch (fault_target(fault)) {
    case FaultTarget::kWorker:
      return "random";
    case FaultTarget::kMember:
      return fault == "freeze" ? "secondaries" : "m0";
    case FaultTarget::kCluster:
      return "primary";
  }
  return "random";
}

std::optional<std::string> target_error(std::string_view fault, const std::string& target,
                                        int members, int workers) {
  const FaultTarget kind = fault_target(fault);
  if (kind == FaultTarget::kCluster) {
    if (target == "primary") return std::nullopt;
    return "\"" + target + "\": " + std::string(fault) +
           " acts on the whole set; its target can only be \"primary\"";
  }
  if (target == "random") return std::nullopt;
  if (kind == FaultTarget::kWorker) {
    if (target == "holder") return std::nullopt;
    if (target.size() >= 2 && target[0] == 'w' && all_digits(target.substr(1)) &&
        std::stoi(target.substr(1)) >= 1 && std::stoi(target.substr(1)) <= workers) {
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

std::optional<FaultParamError> fault_param_error(const std::string& fault, const nlohmann::json& p,
                                                 int members) {
  auto choice = [&](const char* key,
                    const std::vector<std::string>& allowed) -> std::optional<FaultParamError> {
    if (!p.contains(key)) return std::nullopt;
    if (!p[key].is_string() ||
        std::find(allowed.begin(), allowed.end(), p[key].get<std::string>()) == allowed.end()) {
      return FaultParamError{key, "must be one of " + list_of(allowed)};
    }
    return std::nullopt;
  };
  auto integer = [&](const char* key, int64_t min, int64_t max) -> std::optional<FaultParamError> {
    if (!p.contains(key)) return std::nullopt;
    if (!p[key].is_number_integer() || p[key].get<int64_t>() < min || p[key].get<int64_t>() > max) {
      return FaultParamError{
          key, "must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]"};
    }
    return std::nullopt;
  };
  auto boolean = [&](const char* key) -> std::optional<FaultParamError> {
    if (p.contains(key) && !p[key].is_boolean())
      return FaultParamError{key, "expected true or false"};
    return std::nullopt;
  };
  // A day either way: enough for any lease, small enough that date arithmetic stays sane.
  constexpr int64_t kClockMaxMs = 86'400'000;
  std::optional<FaultParamError> e;
  if (members < members_needed(fault)) {
    return FaultParamError{
        "fault", fault + " needs cluster.members >= " + std::to_string(members_needed(fault)) +
                     " (the scenario has " + std::to_string(members) + ")"};
  }
  if (fault == "isolate-worker") e = choice("mode", {"drop", "reject"});
  if (fault == "kill-worker" || fault == "kill-member") e = boolean("restart");
  if (fault == "isolate-member") e = choice("from", {"members", "everyone"});
  if (fault == "partition-worker") e = choice("members", {"primary", "secondaries", "all"});
  if (fault == "step-down") {
    // mongod requires stepDownSecs > secondaryCatchUpPeriodSecs, which the fault sets below it.
    if (!e) e = integer("step_down_secs", 2, 3600);
    if (!e) e = integer("cadence_ms", 0, 600'000);
    if (!e) e = boolean("force");
  }
  if (fault == "clock-skew" || fault == "clock-jump" || fault == "primary-divergence" ||
      fault == "clock-skew-worker" || fault == "clock-jump-worker") {
    const char* key = fault.starts_with("clock-skew")   ? "offset_ms"
                      : fault.starts_with("clock-jump") ? "jump_ms"
                                                        : "clock_ms";
    if (fault != "primary-divergence" && !p.contains(key)) {
      return FaultParamError{key, std::string("required (milliseconds, non-zero, at most ") +
                                      std::to_string(kClockMaxMs) + " either way)"};
    }
    e = integer(key, -kClockMaxMs, kClockMaxMs);
    if (!e && p.contains(key) && p[key].get<int64_t>() == 0)
      e = FaultParamError{key, "must not be 0"};
  }
  if (fault == "command-delay") {
    if (!p.contains("delay_ms"))
      return FaultParamError{"delay_ms", "required (milliseconds, above lock.socket_timeout_ms)"};
    e = integer("delay_ms", 1, 600'000);
    if (!e && p.contains("commands") && (!p["commands"].is_array() || p["commands"].empty())) {
      e = FaultParamError{"commands", "expected a non-empty array of command names"};
    }
  }
  if (fault == "fail-command") {
    e = choice("mode", {"close-connection", "block", "error", "write-concern-error"});
    if (!e) e = integer("error_code", 1, 1'000'000);
    if (!e) e = integer("block_ms", 1, 600'000);
    if (!e && p.contains("commands") && (!p["commands"].is_array() || p["commands"].empty())) {
      e = FaultParamError{"commands", "expected a non-empty array of command names"};
    }
  }
  return e;
}

}  // namespace locklab
