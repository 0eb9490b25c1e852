// Builds small hand-written histories for the checker tests: times in milliseconds, events in
// the order they are added (build() sorts by time and keeps that order for equal times, as
// read_history does).
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checker/checker.h"
#include "checker/history.h"

namespace locklab::testing {

// The crafted-history tests' config: one property, a 1000 ms liveness bound and a 100 ms lost
// bound, so the histories stay short.
inline CheckConfig config_for(std::string_view property) {
  CheckConfig config;
  config.properties = {std::string(property)};
  config.liveness_bound_ns = 1'000'000'000;  // 1000 ms
  config.lost_bound_ns = 100'000'000;        // 100 ms
  return config;
}

class HistoryBuilder {
 public:
  HistoryBuilder& ev(int64_t t_ms, std::string process, EventType type, std::string f,
                     std::string lock = "", std::optional<int64_t> token = std::nullopt,
                     nlohmann::json value = nullptr) {
    events_.push_back(Event{t_ms * 1'000'000, std::move(process), type, std::move(f),
                            std::move(lock), token, std::move(value)});
    return *this;
  }
  HistoryBuilder& acquire(int64_t invoke_ms, int64_t ok_ms, const std::string& p,
                          const std::string& lock, int64_t token, nlohmann::json value = nullptr) {
    ev(invoke_ms, p, EventType::kInvoke, "acquire", lock);
    return ev(ok_ms, p, EventType::kOk, "acquire", lock, token, std::move(value));
  }
  HistoryBuilder& release(int64_t t_ms, const std::string& p, const std::string& lock,
                          int64_t token) {
    ev(t_ms, p, EventType::kInvoke, "release", lock, token);
    return ev(t_ms + 1, p, EventType::kOk, "release", lock, token);
  }
  HistoryBuilder& write(int64_t invoke_ms, int64_t done_ms, const std::string& p,
                        const std::string& resource, int64_t token, EventType outcome) {
    ev(invoke_ms, p, EventType::kInvoke, "write", "L", token, {{"resource", resource}});
    return ev(done_ms, p, outcome, "write", "L", token, {{"resource", resource}});
  }
  HistoryBuilder& fault(int64_t t_ms, const std::string& fault, const std::string& window,
                        const std::string& target) {
    return ev(t_ms, "nemesis", EventType::kInfo, fault, "", std::nullopt,
              {{"window", window}, {"targets", {target}}});
  }
  HistoryBuilder& heal(int64_t t_ms, const std::string& window, const std::string& fault) {
    return ev(t_ms, "nemesis", EventType::kInfo, "heal", "", std::nullopt,
              {{"window", window}, {"fault", fault}});
  }
  HistoryBuilder& final_read(int64_t t_ms, const std::string& resource, nlohmann::json value) {
    value["resource"] = resource;
    return ev(t_ms, "harness", EventType::kOk, "final", "", std::nullopt, std::move(value));
  }

  std::vector<Event> build() const {
    std::vector<Event> sorted = events_;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Event& a, const Event& b) { return a.t_ns < b.t_ns; });
    return sorted;
  }

 private:
  std::vector<Event> events_;
};

}  // namespace locklab::testing
