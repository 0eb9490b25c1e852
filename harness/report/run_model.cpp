// Builds the run model the reports draw (see report/run_model.h).
#include "report/run_model.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <regex>
#include <set>

#include "checker/index.h"

namespace locklab {
namespace {

constexpr size_t kChartBucketsWanted = 60;
// Limit on chart buckets: the bucket width is at least span / 60, so only rounding adds any;
// the cap keeps a saturated span from ever sizing the series beyond it.
constexpr size_t kChartBucketsMax = 128;
constexpr size_t kWindowErrorsKept = 8;

const nlohmann::json* field(const Event& event, const char* key) {
  if (!event.value.is_object()) return nullptr;
  auto it = event.value.find(key);
  return it == event.value.end() ? nullptr : &*it;
}

bool is_member_name(const std::string& name) {
  static const std::regex member("m[0-9]+");
  return std::regex_match(name, member);
}

// 1, 2 or 5 times a power of ten (in ns), at least `at_least_ns`.
int64_t nice_ns(int64_t at_least_ns) {
  int64_t power = 1;
  while (true) {
    for (int64_t step : {1, 2, 5}) {
      if (step * power >= at_least_ns) return step * power;
    }
    assert(power < INT64_MAX / 10);
    power *= 10;
  }
}

// A report window from the checkers' pairing (collect_windows): what the report adds is when
// the fault was in force, the errors its events carried and a status in words.
ReportWindow report_window(const FaultWindow& w, const std::vector<Event>& history) {
  ReportWindow window;
  window.fault = w.fault;
  window.window = w.window;
  window.targets = w.targets;
  window.start_ns = window.in_force_ns = w.start_ns;
  window.end_ns = w.end_ns;
  window.events = w.events;
  bool in_force_seen = false;
  std::string heal_failure;
  for (size_t i : w.events) {
    const Event& event = history[i];
    const std::string error = field_text(event, "error");
    if (event.f == "heal") {
      if (event.type == EventType::kFail) {
        heal_failure = "heal failed" + (error.empty() ? std::string() : ": " + error);
      } else if (event.type != EventType::kInvoke && !error.empty()) {
        window.errors.push_back(error);
      }
      continue;
    }
    if (!error.empty() && window.errors.size() < kWindowErrorsKept) window.errors.push_back(error);
    if (event.type == EventType::kOk && !in_force_seen) {
      in_force_seen = true;
      window.in_force_ns = event.t_ns;
      if (window.targets.empty()) window.targets = targets_of(event);
    }
  }
  // A v2 fault is in force from its `ok`; one that never answered ok never was (a v1 fault's
  // single `info` event is its start and its activation).
  const bool never_in_force = !in_force_seen && history[w.start_event].type == EventType::kInvoke;
  if (never_in_force) window.in_force_ns = window.end_ns;
  if (w.heal_event == kNoEvent) {
    window.status = heal_failure.empty() ? "never healed" : heal_failure;
  } else if (history[w.heal_event].f == "heal") {
    window.status = "healed";
  } else {
    window.status = "failed, undone";
  }
  if (never_in_force && window.status != "failed, undone")
    window.status = "never in force; " + window.status;
  return window;
}

void observe_primaries(RunModel& model, const Event& event, size_t i) {
  auto add = [&](const std::string& member, const std::string& source) {
    if (!is_member_name(member)) return;
    const bool seen = !model.primaries.empty() && model.primaries.back().event == i &&
                      model.primaries.back().member == member;
    if (!seen) model.primaries.push_back({event.t_ns, member, source, i});  // once per event
  };
  if (const nlohmann::json* roles = field(event, "roles"); roles && roles->is_object()) {
    for (const auto& [member, role] : roles->items()) {
      if (role == "primary") add(member, "roles of " + event.f);
    }
  }
  if (const nlohmann::json* primary = field(event, "primary"))
    add(text_of(*primary), event.f + " saw it primary");
  if (const nlohmann::json* detail = field(event, "detail"); detail && detail->is_object()) {
    if (detail->contains("primary"))  // a step-down records the primary it stepped down here
      add(text_of((*detail)["primary"]), event.f + " saw it primary");
    if (detail->contains("old_primary"))
      add(text_of((*detail)["old_primary"]), event.f + ": old primary");
    if (detail->contains("new_primary"))
      add(text_of((*detail)["new_primary"]), event.f + ": new primary");
  }
  const nlohmann::json* selection = field(event, "selection");
  if (selection && *selection == "primary") {
    for (const std::string& target : targets_of(event)) add(target, event.f + " chose the primary");
  }
}

void build_rows(RunModel& model, const std::vector<Event>& history) {
  std::set<std::string> workers, members;
  bool nemesis = false, harness = false;
  for (const Event& event : history) {
    if (event.process == "nemesis") {
      nemesis = true;
      for (const std::string& target : targets_of(event)) {
        if (is_member_name(target)) members.insert(target);
      }
    } else if (event.process == "harness") {
      harness = true;
    } else {
      workers.insert(event.process);
    }
  }
  for (const PrimaryObservation& p : model.primaries) members.insert(p.member);
  auto add_group = [&](const std::set<std::string>& names, const std::string& group) {
    std::vector<std::string> sorted(names.begin(), names.end());
    std::sort(sorted.begin(), sorted.end(), natural_less);
    for (const std::string& name : sorted) {
      if (model.row_of.emplace(name, model.rows.size()).second) model.rows.push_back({name, group});
    }
  };
  add_group(workers, "workers");
  add_group(members, "members");
  if (nemesis) add_group({"nemesis"}, "nemesis");
  if (harness) add_group({"harness"}, "harness");
}

void build_series(RunModel& model, const std::vector<Event>& history) {
  ChartSeries& s = model.series;
  s.bucket_ns = nice_ns(std::max<int64_t>(1'000'000, model.span_ns() / kChartBucketsWanted));
  const size_t buckets =
      std::min(kChartBucketsMax, static_cast<size_t>(model.span_ns() / s.bucket_ns) + 1);
  auto bucket_of = [&](int64_t t_ns) {
    return std::min(buckets - 1, static_cast<size_t>(model.offset_ns(t_ns) / s.bucket_ns));
  };
  s.acquisitions_per_s.assign(buckets, 0);
  s.waiting_workers.assign(buckets, 0);
  std::map<std::string, int64_t> pending;  // worker -> acquires invoked, not completed
  int64_t waiting = 0;
  int64_t last_offset_ns = 0;
  auto accumulate_until = [&](int64_t t_ns) {  // waiting * time, spread over the buckets
    const int64_t offset_ns = model.offset_ns(t_ns);
    while (last_offset_ns < offset_ns) {
      const size_t b = std::min(buckets - 1, static_cast<size_t>(last_offset_ns / s.bucket_ns));
      const int64_t bucket_end =
          b + 1 == buckets ? INT64_MAX : static_cast<int64_t>(b + 1) * s.bucket_ns;
      const int64_t until = std::min(offset_ns, bucket_end);
      s.waiting_workers[b] +=
          static_cast<double>(waiting) * static_cast<double>(until - last_offset_ns);
      last_offset_ns = until;
    }
  };
  for (const Event& event : history) {
    accumulate_until(event.t_ns);
    const size_t b = bucket_of(event.t_ns);
    if (event.f == "acquire" && event.process != "harness" && event.process != "nemesis") {
      int64_t& mine = pending[event.process];
      if (event.type == EventType::kInvoke) {
        ++mine, ++waiting;
      } else if (mine > 0) {
        --mine, --waiting;
      }
      if (event.type == EventType::kOk) s.acquisitions_per_s[b] += 1;
    } else if (event.process == "harness" && event.f == "exit") {
      const nlohmann::json* worker = field(event, "worker");
      auto it = worker ? pending.find(text_of(*worker)) : pending.end();
      if (it != pending.end()) waiting -= std::exchange(it->second, 0);
    }
  }
  const double bucket_s = static_cast<double>(s.bucket_ns) / 1e9;
  for (size_t b = 0; b < buckets; ++b) {
    s.acquisitions_per_s[b] /= bucket_s;
    s.waiting_workers[b] /= static_cast<double>(s.bucket_ns);
  }
}

}  // namespace

bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) &&
        std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t i_end = i, j_end = j;
      while (i_end < a.size() && std::isdigit(static_cast<unsigned char>(a[i_end]))) ++i_end;
      while (j_end < b.size() && std::isdigit(static_cast<unsigned char>(b[j_end]))) ++j_end;
      std::string x = a.substr(i, i_end - i), y = b.substr(j, j_end - j);
      x.erase(0, std::min(x.find_first_not_of('0'), x.size()));
      y.erase(0, std::min(y.find_first_not_of('0'), y.size()));
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = i_end, j = j_end;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i, ++j;
  }
  if ((a.size() - i) != (b.size() - j)) return a.size() - i < b.size() - j;
  return a < b;  // equal up to zero padding: any strict order
}

std::string ReportWindow::label() const {
  std::string text = fault;
  for (const std::string& target : targets) text += " " + target;
  return text;
}

RunModel RunModel::build(const std::vector<Event>& history) {
  RunModel model;
  if (!history.empty()) {
    model.first_ns = history.front().t_ns;
    model.last_ns = history.back().t_ns;
  }
  for (const FaultWindow& w : collect_windows(history))
    model.windows.push_back(report_window(w, history));
  for (size_t i = 0; i < history.size(); ++i) {
    if (history[i].process == "nemesis") observe_primaries(model, history[i], i);
  }
  build_rows(model, history);
  build_series(model, history);
  return model;
}

}  // namespace locklab
