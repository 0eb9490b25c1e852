#include "figures.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

#include "apm_pool.h"
#include "clock.h"
#include "stats.h"

namespace lockbench {
namespace {

using Json = nlohmann::ordered_json;

double ms_between(int64_t from_ns, int64_t to_ns) {
  return static_cast<double>(to_ns - from_ns) / static_cast<double>(kNsPerMs);
}

Json summary(std::vector<double> samples, std::initializer_list<double> qs) {
  std::sort(samples.begin(), samples.end());
  Json out;
  out["count"] = samples.size();
  for (double q : qs) {
    out["p" + std::to_string(static_cast<int>(std::lround(q * 100)))] = quantile(samples, q);
  }
  out["max"] = samples.empty() ? 0.0 : samples.back();
  return out;
}

// Nulls instead of inf/nan (JSON has neither).
Json ratio(double num, double den) {
  if (den <= 0) return nullptr;
  return num / den;
}

Json counters(const CellRaw& raw, int64_t& acquisitions) {
  Json per = Json::array();
  bool add_up = true;
  int64_t releases = 0;
  int64_t records = 0;
  acquisitions = 0;
  for (const ContenderReport& c : raw.contenders) {
    const auto holds = static_cast<int64_t>(c.holds.size());
    add_up = add_up && c.acquisitions == c.releases && c.acquisitions == holds;
    per.push_back({{"acquisitions", c.acquisitions}, {"releases", c.releases}, {"holds", holds}});
    acquisitions += c.acquisitions;
    releases += c.releases;
    records += holds;
  }
  return {{"acquisitions", acquisitions},
          {"releases", releases},
          {"hold_records", records},
          {"add_up", add_up && acquisitions == releases && acquisitions == records},
          {"per_contender", per}};
}

// A wait as the cell's window saw it: ask to grant, or ask to the window's end (stop_ns) for one
// the end cut off or one granted after it (open). Every contender still waiting at the end gives
// up together at stop_ns (its try_acquire's timeout), and those withdrawals, N - 1 writes at one
// instant, delay the grants that follow: teardown, which the window leaves out (uncut, the
// withdrawals of 27 waiters added 6-10 ms to the last waits of a 40 ms notify cell).
struct WindowWait {
  double ms = 0;
  bool open = false;
};

WindowWait window_wait(int64_t asked_ns, std::optional<int64_t> granted_ns, int64_t stop_ns) {
  if (granted_ns && *granted_ns <= stop_ns) return {ms_between(asked_ns, *granted_ns), false};
  return {ms_between(asked_ns, std::max(asked_ns, stop_ns)), true};
}

Json waits(const CellRaw& raw, double& longest_ms) {
  std::vector<double> done;
  int64_t open = 0;
  longest_ms = 0;
  // Each contender's first wait (all ask at once, on a Provider whose stream is not open yet),
  // counting one the cell's end cut off.
  double longest_first_ms = 0;
  for (const ContenderReport& c : raw.contenders) {
    std::optional<WindowWait> first;
    for (const Hold& h : c.holds) {
      const WindowWait w = window_wait(h.asked_ns, h.acquired_ns, raw.stop_ns);
      if (!first) first = w;
      if (w.open) {
        ++open;
        longest_ms = std::max(longest_ms, w.ms);
      } else {
        done.push_back(w.ms);
      }
    }
    if (c.open_wait) {
      const WindowWait w = window_wait(c.open_wait->asked_ns, std::nullopt, raw.stop_ns);
      if (!first) first = w;
      ++open;
      longest_ms = std::max(longest_ms, w.ms);
    }
    if (first) longest_first_ms = std::max(longest_first_ms, first->ms);
  }
  Json out = summary(done, {0.50, 0.99});
  longest_ms = std::max(longest_ms, out["max"].get<double>());
  out["open_at_end"] = open;
  out["longest_including_open"] = longest_ms;
  out["longest_first"] = longest_first_ms;
  return out;
}

// How long each hold lasted (acquire returned to release called): the cell's hold_ms, as the
// contenders' sleeps kept it.
Json held_figures(const CellRaw& raw) {
  std::vector<double> ms;
  for (const ContenderReport& c : raw.contenders) {
    for (const Hold& h : c.holds) {
      if (h.release_asked_ns <= raw.stop_ns) {
        ms.push_back(ms_between(h.acquired_ns, h.release_asked_ns));
      }
    }
  }
  return summary(ms, {0.50, 0.99});
}

Json handoff_figures(const CellRaw& raw, double rtt_ms) {
  const std::vector<Handoff> all = handoffs(raw.contenders);
  std::vector<double> ms;
  int64_t same = 0;
  int64_t after_window = 0;
  for (const Handoff& h : all) {
    if (h.granted_ns > raw.stop_ns) ++after_window;
    if (!h.contended || h.granted_ns > raw.stop_ns) continue;
    ms.push_back(h.ms);
    if (h.same_contender) ++same;
  }
  Json out = summary(ms, {0.50, 0.90, 0.99});
  Json over = Json::object();
  for (const char* key : {"p50", "p90", "p99", "max"}) {
    over[key] = ms.empty() ? Json(nullptr) : ratio(out[key].get<double>(), rtt_ms);
  }
  out["over_rtt"] = over;
  out["all_handoffs"] = all.size();
  out["after_window"] = after_window;
  out["same_contender_share"] = ratio(static_cast<double>(same), static_cast<double>(ms.size()));
  if (ms.empty()) {
    for (const char* key : {"p50", "p90", "p99", "max"}) out[key] = nullptr;
  }
  return out;
}

// How long release() took (the release's round trip, with a notify hand-over its update): with
// the handoff it makes up a turn beyond the hold, so the two show where a cycle goes.
Json release_figures(const CellRaw& raw, double rtt_ms) {
  std::vector<double> ms;
  for (const ContenderReport& c : raw.contenders) {
    for (const Hold& h : c.holds) {
      if (h.released_ns <= raw.stop_ns) ms.push_back(ms_between(h.release_asked_ns, h.released_ns));
    }
  }
  Json out = summary(ms, {0.50, 0.90, 0.99});
  out["p50_over_rtt"] = ms.empty() ? Json(nullptr) : ratio(out["p50"].get<double>(), rtt_ms);
  return out;
}

Json server_figures(const CellRaw& raw, int64_t acquisitions, double window_s) {
  const ServerCount& s = raw.server;
  const int64_t sent = total(raw.client_commands);
  Json out = {{"opcounters_sum", s.opcounters_sum},
              {"own_server_status", s.own_status_calls},
              {"monitoring", s.monitoring},
              {"members_internal", s.members_internal},
              {"lock_commands", s.lock_commands},
              {"per_command", s.per_command},
              {"client_sent", sent},
              {"client_per_command", raw.client_commands},
              {"commands_match", s.lock_commands == sent},
              {"commands_per_acquisition",
               ratio(static_cast<double>(s.lock_commands), static_cast<double>(acquisitions))}};
  out["cpu_s"] = raw.server_cpu_s ? Json(*raw.server_cpu_s) : Json(nullptr);
  out["cpu_share"] = raw.server_cpu_s ? ratio(*raw.server_cpu_s, window_s) : Json(nullptr);
  return out;
}

}  // namespace

namespace {

// The waits for one lock as [asked, ended) intervals, sorted by start, with the running maximum
// of their ends: waiting_at(t) asks whether any of them holds t.
class Waits {
 public:
  void add(int64_t asked_ns, int64_t ended_ns) { spans_.push_back({asked_ns, ended_ns}); }
  void seal() {
    std::sort(spans_.begin(), spans_.end());
    int64_t reach = INT64_MIN;
    for (const auto& [asked, ended] : spans_) {
      reach = std::max(reach, ended);
      reach_.push_back(reach);
    }
  }
  bool waiting_at(int64_t t) const {
    // The last wait that began at or before t; any wait up to it still open at t?
    auto it = std::upper_bound(spans_.begin(), spans_.end(), std::pair{t, INT64_MAX});
    if (it == spans_.begin()) return false;
    return reach_[static_cast<size_t>(it - spans_.begin()) - 1] > t;
  }

 private:
  std::vector<std::pair<int64_t, int64_t>> spans_;
  std::vector<int64_t> reach_;
};

struct Entry {
  int64_t token;
  size_t contender;
  const Hold* hold;
};

}  // namespace

std::vector<Handoff> handoffs(const std::vector<ContenderReport>& contenders) {
  std::map<int32_t, std::vector<Entry>> by_lock;
  std::map<int32_t, Waits> waits;
  for (size_t c = 0; c < contenders.size(); ++c) {
    for (const Hold& h : contenders[c].holds) {
      by_lock[h.lock].push_back({h.token, c, &h});
      waits[h.lock].add(h.asked_ns, h.acquired_ns);
    }
    if (const auto& w = contenders[c].open_wait) waits[w->lock].add(w->asked_ns, w->given_up_ns);
  }
  std::vector<Handoff> out;
  for (auto& [lock, entries] : by_lock) {
    Waits& lock_waits = waits[lock];
    lock_waits.seal();
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.token < b.token; });
    for (size_t i = 1; i < entries.size(); ++i) {
      if (entries[i].token == entries[i - 1].token) {
        throw std::runtime_error("lock " + std::to_string(lock) + ": token " +
                                 std::to_string(entries[i].token) + " granted twice");
      }
      const int64_t released_ns = entries[i - 1].hold->released_ns;
      out.push_back({ms_between(released_ns, entries[i].hold->acquired_ns),
                     entries[i].contender == entries[i - 1].contender,
                     lock_waits.waiting_at(released_ns), entries[i].hold->acquired_ns});
    }
  }
  return out;
}

Json cell_figures(const CellRaw& raw, const FloorResult& floor, double rtt_ms) {
  const CellSpec& spec = raw.spec;
  const double window_s = static_cast<double>(raw.stop_ns - raw.start_ns) / kNsPerS;
  Json out = {{"index", spec.index},
              {"plan", spec.plan},
              {"strategy", spec.strategy->name},
              {"mode", mode_name(spec.mode)},
              {"contenders", spec.contenders},
              {"locks", spec.locks},
              {"hold_ms", spec.hold_ms},
              {"members", spec.members},
              {"floor_target", floor.target},
              {"window_s", window_s}};
  int64_t acquisitions = 0;
  out["counters"] = counters(raw, acquisitions);
  const double hold_plus_rtt_ms = static_cast<double>(spec.hold_ms) + rtt_ms;
  const double bound = std::min(spec.locks, spec.contenders) * 1000.0 / hold_plus_rtt_ms;
  const double rate = static_cast<double>(acquisitions) / window_s;
  out["throughput"] = {{"acquisitions_per_s", rate},
                       {"rtt_ms", rtt_ms},
                       {"hold_bound_per_s", bound},
                       {"ratio_to_hold_bound", ratio(rate, bound)}};
  out["handoff_ms"] = handoff_figures(raw, rtt_ms);
  out["release_ms"] = release_figures(raw, rtt_ms);
  out["held_ms"] = held_figures(raw);
  double longest_ms = 0;
  out["wait_ms"] = waits(raw, longest_ms);
  std::vector<int64_t> shares;
  for (const ContenderReport& c : raw.contenders) shares.push_back(c.acquisitions);
  const int per_lock = (spec.contenders + spec.locks - 1) / spec.locks;
  const double fifo_ms = (per_lock - 1) * hold_plus_rtt_ms;
  out["fairness"] = {{"jain_index", shares.empty() ? Json(nullptr) : Json(jain_index(shares))},
                     {"longest_wait_ms", longest_ms},
                     {"fifo_bound_ms", fifo_ms},
                     {"longest_over_fifo", ratio(longest_ms, fifo_ms)}};
  out["server"] = server_figures(raw, acquisitions, window_s);
  Json errors = raw.errors;
  for (const ContenderReport& c : raw.contenders) {
    if (!c.error.empty()) errors.push_back(c.error);
  }
  out["errors"] = errors;
  return out;
}

}  // namespace lockbench
