// Synthetic valid histories (see checker/synthetic.h).
#include "checker/synthetic.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <random>
#include <string>

namespace locklab {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kLivenessBoundNs = 2'000 * kMs;
constexpr int64_t kLostBoundNs = 500 * kMs;

class Generator {
 public:
  explicit Generator(const SyntheticParams& params) : params_(params), rng_(params.seed) {
    assert(params.workers >= 1 && params.locks >= 1);
  }

  std::vector<Event> run() {
    // Not at t = 0: HistoryWriter stamps a zero time with the current time.
    nlohmann::json start = {{"scenario", "synthetic"},
                            {"seed", params_.seed},
                            {"check", synthetic_check_config().to_json()}};
    if (params_.vocabulary >= 2) start["vocabulary"] = 2;
    emit(kMs, "harness", EventType::kInfo, "start", "", std::nullopt, std::move(start));
    now_ = 2 * kMs;
    std::vector<size_t> fault_at = fault_positions();
    for (size_t k = 0; k < params_.holds; ++k) {
      if (std::binary_search(fault_at.begin(), fault_at.end(), k)) fault_window();
      hold(k);
    }
    finish();
    std::stable_sort(events_.begin(), events_.end(),
                     [](const Event& a, const Event& b) { return a.t_ns < b.t_ns; });
    return std::move(events_);
  }

 private:
  int64_t pick(int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(rng_);
  }
  bool chance(int percent) { return pick(0, 99) < percent; }
  std::string worker(int64_t n) const { return "w" + std::to_string(n + 1); }

  void emit(int64_t t, std::string process, EventType type, std::string f, std::string lock,
            std::optional<int64_t> token, nlohmann::json value = nullptr) {
    events_.push_back(
        Event{t, std::move(process), type, std::move(f), std::move(lock), token, std::move(value)});
  }

  std::vector<size_t> fault_positions() {
    std::vector<size_t> at;
    for (int i = 0; i < params_.faults && params_.holds > 0; ++i)
      at.push_back(static_cast<size_t>(pick(0, static_cast<int64_t>(params_.holds) - 1)));
    std::sort(at.begin(), at.end());
    at.erase(std::unique(at.begin(), at.end()), at.end());
    return at;
  }

  // A fault on a worker that holds nothing, healed before the next hold starts.
  void fault_window() {
    static const char* const kFaults[] = {"pause-worker", "isolate-worker", "fail-command",
                                          "pause-member"};
    std::string fault = kFaults[pick(0, 3)];
    nlohmann::json targets = nlohmann::json::array(
        {fault == "pause-member" ? std::string("m1") : worker(pick(0, params_.workers - 1))});
    std::string id = std::to_string(++windows_);
    emit(now_, "nemesis", EventType::kInfo, fault, "", std::nullopt,
         {{"window", id}, {"targets", targets}});
    now_ += pick(1, 300) * kMs;
    emit(now_, "nemesis", EventType::kInfo, "heal", "", std::nullopt,
         {{"window", id}, {"fault", fault}});
    last_heal_t_ = now_;
  }

  void hold(size_t k) {
    const int64_t lock_number = pick(0, params_.locks - 1);
    const std::string lock = "L" + std::to_string(lock_number);
    last_lock_ = lock;
    int64_t holder = pick(0, params_.workers - 1);
    // A waiter invokes while the previous holder still runs (same instant allowed); it
    // cannot be that holder, whose operations are sequential.
    int64_t invoke_t = now_;
    if (holder != previous_holder_ && previous_release_t_ > 0 && chance(60))
      invoke_t = pick(previous_invoke_t_, previous_release_t_);
    // A wait spanning other grants: invoked before the previous grant, by a worker idle since
    // then, after the last heal (a wait across a heal is judged by liveness on its own).
    const int64_t idle_since = std::max(busy_until_[holder], last_heal_t_);
    if (holder != previous_holder_ && previous_grant_t_ > idle_since && chance(25))
      invoke_t = pick(idle_since, previous_grant_t_);
    failed_attempt(lock, holder);
    const int64_t token = ++tokens_[lock];
    const std::string process = worker(holder);
    emit(invoke_t, process, EventType::kInvoke, "acquire", lock, std::nullopt);
    int64_t t = now_ + pick(0, 2) * kMs;  // 0: granted at the instant of the release
    emit(t, process, EventType::kOk, "acquire", lock, token, {{"lease_ms", 1000}});
    previous_grant_t_ = previous_invoke_t_;
    previous_invoke_t_ = t;
    t = ignored_or_late_lost(t, process, lock, token);
    t = critical_section(t, process, lock, token, lock_number == 0);
    if (params_.lost_holds && k % 7 == 3 && params_.workers > 1) {
      t = lost_hold(t, process, lock);
    } else {
      emit(t, process, EventType::kInvoke, "release", lock, token);
      previous_release_t_ = t;
      now_ = t + pick(0, 1) * kMs;  // the next grant may share the release's instant
      emit(now_, process, EventType::kOk, "release", lock, token);
    }
    previous_holder_ = holder;
    busy_until_[holder] = now_;
    held_before_[process + "/" + lock] = token;
  }

  // Shapes a hold may take that end nothing: the worker is told it lost the lock but goes on
  // (v2 `lost-ignored`; v1 `lost` followed by a write with the token, as honour_lost = false
  // recorded it), or a late `lost` for the worker's earlier token of this lock arrives.
  int64_t ignored_or_late_lost(int64_t t, const std::string& process, const std::string& lock,
                               int64_t token) {
    if (chance(10)) {
      t += kMs;
      emit(t, process, EventType::kOk, params_.vocabulary >= 2 ? "lost-ignored" : "lost", lock,
           token);
      if (params_.vocabulary < 2) t = fenced_write(t, process, lock, token);
    }
    auto earlier = held_before_.find(process + "/" + lock);
    if (earlier != held_before_.end() && chance(10)) {
      t += kMs;
      emit(t, process, EventType::kOk, "lost", lock, earlier->second);
    }
    return t;
  }

  // Another worker's attempt that fails or ends unknown before this hold is granted.
  void failed_attempt(const std::string& lock, int64_t holder) {
    if (params_.workers < 2 || !chance(20)) return;
    int64_t other = (holder + 1) % params_.workers;
    if (other == previous_holder_) return;
    bool unknown = chance(30);
    emit(now_, worker(other), EventType::kInvoke, "acquire", lock, std::nullopt);
    emit(now_, worker(other), unknown ? EventType::kInfo : EventType::kFail, "acquire", lock,
         std::nullopt,
         unknown ? nlohmann::json{{"error", "timeout"}} : nlohmann::json{{"reason", "held"}});
    busy_until_[other] = std::max(busy_until_[other], now_);
  }

  int64_t critical_section(int64_t t, const std::string& process, const std::string& lock,
                           int64_t token, bool counter_lock) {
    if (chance(30)) {
      emit(t + kMs, process, EventType::kInvoke, "extend", lock, token);
      emit(t + 2 * kMs, process, EventType::kOk, "extend", lock, token, {{"lease_ms", 1000}});
      t += 2 * kMs;
    }
    if (params_.fenced) t = fenced_write(t, process, lock, token);
    if (params_.counter && counter_lock) {
      emit(t + kMs, process, EventType::kOk, "read", lock, std::nullopt,
           {{"resource", "counter"}, {"count", counter_}});
      nlohmann::json value = {{"resource", "counter"}, {"count", counter_ + 1}};
      if (params_.vocabulary >= 2) value["read"] = counter_;
      emit(t + 2 * kMs, process, EventType::kInvoke, "write", lock, token, value);
      // An indeterminate write applied or not; the next read shows which.
      const bool indeterminate = chance(10);
      if (!indeterminate || chance(50)) ++counter_;
      emit(t + 3 * kMs, process, indeterminate ? EventType::kInfo : EventType::kOk, "write", lock,
           token, value);
      t += 3 * kMs;
    }
    return t + pick(1, 20) * kMs;
  }

  int64_t fenced_write(int64_t t, const std::string& process, const std::string& lock,
                       int64_t token) {
    const std::string resource = "res-" + lock;
    const std::string id = process + "-" + std::to_string(++writes_[process]);
    nlohmann::json value = {{"resource", resource}};
    if (params_.vocabulary >= 2) value["id"] = id;
    emit(t + kMs, process, EventType::kInvoke, "write", lock, token, value);
    EventType outcome = chance(10) ? EventType::kInfo : EventType::kOk;
    emit(t + 2 * kMs, process, outcome, "write", lock, token, {{"resource", resource}});
    Tally& tally = tallies_[resource];
    // An unknown write applied or not, which the final read then shows.
    if (outcome == EventType::kOk || chance(50)) {
      ++tally.count;
      tally.token = std::max(tally.token, token);
      tally.writes.push_back({{"id", id}, {"token", token}});
    }
    return t + 2 * kMs;
  }

  // The holder is isolated, learns it lost the lock, and only then may another worker be
  // granted it (the next hold); the isolation heals after that.
  int64_t lost_hold(int64_t t, const std::string& process, const std::string& lock) {
    std::string id = std::to_string(++windows_);
    emit(t, "nemesis", EventType::kInfo, "isolate-worker", "", std::nullopt,
         {{"window", id}, {"targets", {process}}});
    t += pick(10, 100) * kMs;
    emit(t, process, EventType::kOk, "lost", lock, tokens_[lock]);
    previous_release_t_ = t;
    now_ = t + pick(0, 5) * kMs;
    pending_heals_.push_back(id);
    return t;
  }

  void finish() {
    now_ += kMs;
    for (const std::string& id : pending_heals_) {
      emit(now_, "nemesis", EventType::kInfo, "heal", "", std::nullopt,
           {{"window", id}, {"fault", "isolate-worker"}});
    }
    if (!pending_heals_.empty()) last_heal_t_ = now_;
    // A final hold after the last heal, then the stop (inside the liveness bound or after a
    // quiet period longer than it) with other workers' acquires of that lock pending.
    if (!pending_heals_.empty() || params_.stop_in_bound || params_.holds == 0) hold(0);
    if (!params_.stop_in_bound) now_ += kLivenessBoundNs + kMs;
    stop_workers();
    now_ += kMs;
    if (params_.final_reads) final_reads();
    emit(now_ + kMs, "harness", EventType::kInfo, "end", "", std::nullopt);
  }

  void stop_workers() {
    const std::string lock = last_lock_;
    for (int64_t w = 0; w < params_.workers; ++w) {
      if (w == previous_holder_ || lock.empty()) continue;
      emit(now_, worker(w), EventType::kInvoke, "acquire", lock, std::nullopt);
    }
    emit(now_ + kMs, "harness", EventType::kInfo, "stop", "", std::nullopt,
         {{"reason", "end of run"}});
    now_ += 2 * kMs;
    for (int64_t w = 0; w < params_.workers; ++w) {
      if (w == previous_holder_ || lock.empty()) continue;
      emit(now_, worker(w), EventType::kFail, "acquire", lock, std::nullopt,
           {{"reason", "cancelled"}});
    }
  }

  void final_reads() {
    for (const auto& [resource, tally] : tallies_) {
      nlohmann::json value = {
          {"resource", resource}, {"count", tally.count}, {"token", tally.token}};
      if (params_.vocabulary >= 2) value["writes"] = tally.writes;
      emit(now_, "harness", EventType::kOk, "final", "", std::nullopt, std::move(value));
    }
    if (params_.counter)
      emit(now_, "harness", EventType::kOk, "final", "", std::nullopt,
           {{"resource", "counter"}, {"count", counter_}});
  }

  struct Tally {
    int64_t count = 0;
    int64_t token = 0;
    nlohmann::json writes = nlohmann::json::array();  // applied {id, token}, in apply order
  };

  SyntheticParams params_;
  std::mt19937_64 rng_;
  std::vector<Event> events_;
  std::map<std::string, int64_t> tokens_;
  std::map<std::string, Tally> tallies_;
  std::vector<std::string> pending_heals_;
  int64_t now_ = 0;
  int64_t counter_ = 0;
  int64_t previous_holder_ = -1;
  int64_t previous_invoke_t_ = 0;
  int64_t previous_release_t_ = 0;
  int64_t previous_grant_t_ = 0;  // the grant before the previous one
  int64_t last_heal_t_ = 0;
  std::string last_lock_;
  std::map<int64_t, int64_t> busy_until_;       // worker -> end of its last operation
  std::map<std::string, int64_t> held_before_;  // "process/lock" -> its last token there
  std::map<std::string, int64_t> writes_;       // process -> fenced writes so far
  int windows_ = 0;
};

}  // namespace

CheckConfig synthetic_check_config() {
  CheckConfig config;
  config.liveness_bound_ns = kLivenessBoundNs;
  config.lost_bound_ns = kLostBoundNs;
  return config;
}

std::vector<Event> make_synthetic_history(const SyntheticParams& params) {
  return Generator(params).run();
}

}  // namespace locklab
