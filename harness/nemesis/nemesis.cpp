#include "nemesis/nemesis.h"

#include <algorithm>
#include <cassert>
#include <iostream>
#include <tuple>

#include "db/db.h"
#include "nemesis/kinds.h"
#include "run/workers.h"

namespace locklab {
namespace {

// Bound on generated windows, whatever the rates and durations.
constexpr size_t kRandomWindowsMax = 10'000;

int64_t uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  assert(lo <= hi);
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

std::string random_target(std::mt19937_64& rng, FaultKind fault, const Scenario& s) {
  const FaultTarget target = fault_row(fault).target;
  if (target == FaultTarget::kCluster) return "primary";
  if (target == FaultTarget::kMember) {
    return "m" + std::to_string(uniform(rng, 0, s.cluster.members - 1));
  }
  return "w" + std::to_string(uniform(rng, 1, s.workload.workers));
}

FaultKind pick_weighted(std::mt19937_64& rng,
                        const std::map<FaultKind, double, FaultKindByName>& weights) {
  double total = 0;
  for (const auto& [kind, w] : weights) total += w;
  double x = std::uniform_real_distribution<double>(0, total)(rng);
  for (const auto& [kind, w] : weights) {
    if (x < w) return kind;
    x -= w;
  }
  return weights.rbegin()->first;
}

void add_random_windows(std::vector<PlannedFault>& plan, const RandomMixSpec& m, const Scenario& s,
                        int64_t run_ms, std::mt19937_64& rng) {
  const int64_t end = m.end_ms > 0 ? std::min(m.end_ms, run_ms) : run_ms;
  int64_t t = m.start_ms;
  for (size_t n = 0; n < kRandomWindowsMax; ++n) {
    PlannedFault f;
    f.fault = pick_weighted(rng, m.weights);
    f.duration_ms = uniform(rng, m.duration_min_ms, m.duration_max_ms);
    f.at_ms = t;
    if (f.at_ms + f.duration_ms > end) break;
    f.target = m.target == "holder" && fault_row(f.fault).target == FaultTarget::kWorker
                   ? "holder"
                   : random_target(rng, f.fault, s);
    f.selection = f.target == "holder" || f.target == "primary" ? f.target : "random";
    plan.push_back(f);
    t = f.at_ms + f.duration_ms + uniform(rng, m.gap_min_ms, m.gap_max_ms);
  }
}

// "m1,m2" -> ["m1", "m2"]: the history lists each target.
nlohmann::json split_targets(const std::string& target) {
  nlohmann::json out = nlohmann::json::array();
  size_t start = 0;
  for (;;) {
    const size_t comma = target.find(',', start);
    out.push_back(target.substr(start, comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace

std::vector<PlannedFault> plan_faults(const Scenario& s, int64_t run_ms, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<PlannedFault> plan;
  for (const FaultSpec& spec : s.nemesis.schedule) {
    PlannedFault f{spec.at_ms, spec.duration_ms, spec.fault, spec.target, spec.params};
    if (f.target == "holder" || f.target == "primary" || f.target == "secondaries")
      f.selection = f.target;
    if (f.target == "random") {
      f.target = random_target(rng, f.fault, s);
      f.selection = f.target == "primary" ? "primary" : "random";
    }
    plan.push_back(f);
  }
  if (s.nemesis.random) add_random_windows(plan, *s.nemesis.random, s, run_ms, rng);
  std::stable_sort(plan.begin(), plan.end(),
                   [](const PlannedFault& a, const PlannedFault& b) { return a.at_ms < b.at_ms; });
  return plan;
}

nlohmann::json to_json(const PlannedFault& f) {
  return {{"at_ms", f.at_ms},
          {"duration_ms", f.duration_ms},
          {"fault", to_string(f.fault)},
          {"target", f.target},
          {"params", f.params}};
}

Nemesis::Nemesis(std::vector<PlannedFault> plan, FaultContext context, HistoryWriter& history,
                 WorkerView workers, uint64_t seed)
    : plan_(std::move(plan)),
      context_(context),
      history_(history),
      view_(std::move(workers)),
      rng_(seed ^ 0x9e3779b97f4a7c15ULL) {}

Nemesis::~Nemesis() {
  heal_all();
}

void Nemesis::record(EventType type, std::string_view f, nlohmann::json value) {
  history_.append({0, "nemesis", type, std::string(f), "", std::nullopt, std::move(value)});
}

std::pair<std::string, std::string> Nemesis::resolve_target(const PlannedFault& planned) {
  if (fault_row(planned.fault).target == FaultTarget::kMember) {
    if (planned.target == "primary") {
      const int p = context_.db.primary();
      if (p < 0) throw std::runtime_error("no primary to target");
      return {"m" + std::to_string(p), "primary"};
    }
    if (planned.target == "secondaries") {
      const int p = context_.db.primary();
      std::string list;
      for (int m = 0; m < context_.db.size(); ++m) {
        if (m != p) list += (list.empty() ? "m" : ",m") + std::to_string(m);
      }
      return {list, "secondaries"};
    }
  }
  if (planned.target != "holder") return {planned.target, planned.selection};
  std::string holder = view_.holder ? view_.holder() : "";
  if (!holder.empty()) return {holder, "holder"};
  // Nobody holds a lock right now: any worker is as good a target as another.
  const auto& ids = context_.workers.ids();
  return {ids.at(static_cast<size_t>(uniform(rng_, 0, static_cast<int64_t>(ids.size()) - 1))),
          "random-fallback"};
}

// Each target's role now: workers from the history, members from their hello. A fault on the
// whole set ("primary") names the member that is primary now.
nlohmann::json Nemesis::roles(FaultKind fault, const std::string& target) const {
  nlohmann::json out = nlohmann::json::object();
  const FaultTarget kind = fault_row(fault).target;
  if (kind == FaultTarget::kCluster) {
    const int p = context_.db.primary();
    if (p >= 0) out[member_role(p)] = "primary";
    return out;
  }
  for (const auto& one : split_targets(target)) {
    const std::string name = one.get<std::string>();
    if (kind == FaultTarget::kMember) {
      out[name] = context_.db.member_state(member_indices(name).at(0));
    } else {
      out[name] = view_.role ? view_.role(name) : "idle";
    }
  }
  return out;
}

void Nemesis::open(const PlannedFault& planned, int64_t elapsed_ms) {
  Window w;
  w.id = next_window_id_++;
  w.planned = planned;
  w.start_ms = elapsed_ms;
  w.end_ms = elapsed_ms + planned.duration_ms;
  nlohmann::json intent = {
      {"window", w.id}, {"planned_ms", planned.duration_ms}, {"planned_at_ms", planned.at_ms}};
  if (!planned.params.empty()) intent["params"] = planned.params;
  std::string selection = planned.selection;
  try {
    std::tie(w.planned.target, selection) = resolve_target(planned);
  } catch (const std::exception& e) {
    intent["targets"] = split_targets(planned.target);
    record(EventType::kInvoke, to_string(planned.fault), intent);
    record(EventType::kFail, to_string(planned.fault),
           {{"window", w.id}, {"error", e.what()}, {"undone", true}});
    return;
  }
  intent["targets"] = split_targets(w.planned.target);
  intent["selection"] = selection;
  record(EventType::kInvoke, to_string(planned.fault), intent);
  nlohmann::json done = {
      {"window", w.id}, {"targets", intent["targets"]}, {"selection", selection}};
  try {
    done["roles"] = roles(planned.fault, w.planned.target);
    w.fault = make_fault(planned.fault, w.planned.target, planned.params);
    w.fault->begin(context_);
  } catch (const std::exception& e) {
    std::cerr << "locklab: " << to_string(planned.fault) << " " << w.planned.target << ": "
              << e.what() << std::endl;
    nlohmann::json failed = {{"window", w.id}, {"error", e.what()}};
    if (undo(w, failed)) {
      record(EventType::kFail, to_string(planned.fault), failed);
      return;
    }
    record(EventType::kInfo, to_string(planned.fault),
           failed);  // the heal at the window's end retries
    active_.push_back(std::move(w));
    return;
  }
  const nlohmann::json detail = w.fault->detail();
  if (!detail.is_null()) done["detail"] = detail;
  record(EventType::kOk, to_string(planned.fault), done);
  active_.push_back(std::move(w));
}

bool Nemesis::undo(Window& w, nlohmann::json& value) {
  if (!w.fault) {
    value["undone"] = true;  // nothing was made, nothing applied
    return true;
  }
  try {
    w.fault->heal(context_);
  } catch (const std::exception& e) {
    value["undone"] = false;
    value["undo_error"] = e.what();
    return false;
  }
  value["undone"] = true;
  w.fault.reset();
  return true;
}

void Nemesis::close(Window& w) {
  const nlohmann::json value = {{"window", w.id},
                                {"fault", to_string(w.planned.fault)},
                                {"targets", split_targets(w.planned.target)}};
  record(EventType::kInvoke, "heal", value);
  if (w.fault) {
    try {
      w.fault->heal(context_);
    } catch (const std::exception& e) {
      nlohmann::json failed = value;
      failed["error"] = e.what();
      record(EventType::kFail, "heal", failed);
      std::cerr << "locklab: heal " << to_string(w.planned.fault) << " " << w.planned.target << ": "
                << e.what() << std::endl;
      return;
    }
  }
  record(EventType::kOk, "heal", value);
}

// A repeated action inside the window: ok when it was applied again, info when it failed.
void Nemesis::tick_window(Window& w, int64_t elapsed_ms) {
  if (!w.fault) return;
  nlohmann::json event;
  try {
    event = w.fault->tick(context_, elapsed_ms - w.start_ms);
  } catch (const std::exception& e) {
    event = {{"error", e.what()}};
  }
  if (event.is_null()) return;
  event["window"] = w.id;
  event["targets"] = split_targets(w.planned.target);
  record(event.contains("error") ? EventType::kInfo : EventType::kOk, to_string(w.planned.fault),
         event);
}

void Nemesis::tick(int64_t elapsed_ms) {
  for (Window& w : active_) {
    if (w.end_ms > elapsed_ms) tick_window(w, elapsed_ms);
  }
  for (auto it = active_.begin(); it != active_.end();) {
    if (it->end_ms <= elapsed_ms) {
      close(*it);
      it = active_.erase(it);
    } else {
      ++it;
    }
  }
  while (next_ < plan_.size() && plan_[next_].at_ms <= elapsed_ms) open(plan_[next_++], elapsed_ms);
}

void Nemesis::heal_all() {
  for (Window& w : active_) close(w);
  active_.clear();
  next_ = plan_.size();
}

}  // namespace locklab
