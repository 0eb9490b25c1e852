// Builds the operations, holds and fault windows the property checkers share.
#include "checker/index.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

namespace locklab {

std::string text_of(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "";
  return value.dump();
}

std::vector<std::string> targets_of(const Event& event) {
  std::vector<std::string> targets;
  if (!event.value.is_object()) return targets;
  auto it = event.value.find("targets");
  if (it == event.value.end()) it = event.value.find("target");
  if (it == event.value.end()) return targets;
  if (it->is_array()) {
    for (const auto& target : *it) targets.push_back(text_of(target));
  } else {
    targets.push_back(text_of(*it));
  }
  return targets;
}

std::string field_text(const Event& event, const char* key) {
  if (!event.value.is_object()) return "";
  auto it = event.value.find(key);
  return it == event.value.end() ? "" : text_of(*it);
}

bool undone(const Event& event) {
  return event.value.is_object() && event.value.value("undone", false) == true;
}

// The window key of a nemesis event: its value.window; without one (v1), a fault is keyed by
// its name and targets, and a heal by the fault its value names and its targets, so two
// windows of one fault on different targets overlap without closing each other's.
constexpr char kKeySeparator = '\x1f';
std::string window_key(const Event& event) {
  std::string id = field_text(event, "window");
  if (!id.empty()) return id;
  std::string key = event.f == "heal" ? field_text(event, "fault") : event.f;
  key += kKeySeparator;
  for (const std::string& target : targets_of(event)) key += target + ",";
  return key;
}

// The open window a heal without a window id closes: the one with its fault and targets, or,
// when the heal names no targets, the oldest open window of its fault.
std::unordered_map<std::string, size_t>::iterator find_healed(
    std::unordered_map<std::string, size_t>& open, const Event& heal, const std::string& key) {
  auto it = open.find(key);
  if (it != open.end() || !field_text(heal, "window").empty() || !targets_of(heal).empty())
    return it;
  const std::string prefix = field_text(heal, "fault") + kKeySeparator;
  for (auto candidate = open.begin(); candidate != open.end(); ++candidate) {
    if (candidate->first.starts_with(prefix) &&
        (it == open.end() || candidate->second < it->second))
      it = candidate;
  }
  return it;
}

std::vector<FaultWindow> collect_windows(const std::vector<Event>& history) {
  std::vector<FaultWindow> windows;
  std::unordered_map<std::string, size_t> open;  // window key -> index in windows
  auto close = [&](std::unordered_map<std::string, size_t>::iterator it, size_t i) {
    windows[it->second].heal_event = i;
    windows[it->second].end_ns = history[i].t_ns;
    open.erase(it);
  };
  for (size_t i = 0; i < history.size(); ++i) {
    const Event& event = history[i];
    if (event.process != "nemesis") continue;
    const std::string key = window_key(event);
    auto it = open.find(key);
    if (event.f == "heal") {
      it = find_healed(open, event, key);
      if (it == open.end()) continue;  // a heal of nothing open: nothing to pair
      windows[it->second].events.push_back(i);
      // v2: the heal's invoke is only an attempt and a failed heal never heals.
      if (event.type != EventType::kInvoke && event.type != EventType::kFail) close(it, i);
      continue;
    }
    // An event naming a window that is already open (its activation, or a fault acting again
    // inside its window, e.g. a step-down at a cadence) is part of that window. A fault event
    // without a window id (v1) starts a window of its own.
    if (it != open.end() && !field_text(event, "window").empty()) {
      windows[it->second].events.push_back(i);
      if (event.type == EventType::kFail && undone(event)) close(it, i);
      continue;
    }
    FaultWindow window;
    window.start_event = i;
    window.fault = event.f;
    window.window = key;
    window.targets = targets_of(event);
    window.start_ns = event.t_ns;
    window.end_ns = history.back().t_ns;
    window.events.push_back(i);
    if (event.type == EventType::kFail && undone(event)) {  // nothing happened
      window.undone = true;
      window.heal_event = i;
      window.end_ns = event.t_ns;
      windows.push_back(std::move(window));
      continue;
    }
    open[key] = windows.size();
    windows.push_back(std::move(window));
  }
  return windows;
}

namespace {

const std::string kNemesis = "nemesis";
const std::string kHarness = "harness";

// Pairs completions with invokes: per (process, f), a stack of pending operations.
std::vector<Operation> pair_operations(const std::vector<Event>& history) {
  std::vector<Operation> operations;
  operations.reserve(history.size() / 2 + 1);  // about one operation per two events
  std::unordered_map<std::string, std::vector<size_t>> pending;  // process + '\0' + f
  for (size_t i = 0; i < history.size(); ++i) {
    const Event& event = history[i];
    std::string key = event.process + '\0' + event.f;
    if (event.type == EventType::kInvoke) {
      Operation op;
      op.invoke = i;
      op.process = event.process;
      op.f = event.f;
      op.lock = event.lock;
      op.token = event.token;
      op.resource = resource_of(event);
      pending[key].push_back(operations.size());
      operations.push_back(std::move(op));
      continue;
    }
    auto it = pending.find(key);
    size_t slot;
    if (it != pending.end() && !it->second.empty()) {
      slot = it->second.back();
      it->second.pop_back();
    } else {
      slot = operations.size();
      operations.push_back(Operation{});
      operations[slot].process = event.process;
      operations[slot].f = event.f;
    }
    Operation& op = operations[slot];
    op.completion = i;
    if (!event.lock.empty()) op.lock = event.lock;
    if (event.token) op.token = event.token;
    if (op.resource.empty()) op.resource = resource_of(event);
  }
  return operations;
}

// Tracks the open holds of every process while sweeping the history.
class HoldTracker {
 public:
  explicit HoldTracker(std::vector<Hold>* holds) : holds_(holds) {}

  void open(const Event& event, const std::string& lock, size_t i) {
    close_matching(event.process, lock, std::nullopt, i, event.t_ns, HoldEnd::kReacquired);
    Hold hold;
    hold.acquire_ok = i;
    hold.process = event.process;
    hold.lock = lock;
    hold.token = event.token;
    hold.shared = event.value.is_object() && event.value.value("mode", "") == "shared";
    hold.start_ns = event.t_ns;
    open_[event.process].push_back(holds_->size());
    holds_->push_back(std::move(hold));
  }

  // Ends the holds of process on lock (every lock when lock is empty) whose token is token
  // (any token when none is given or the hold has none): a `lost` or release for an earlier
  // token must not end the current hold.
  void close_matching(const std::string& process, const std::string& lock,
                      std::optional<int64_t> token, size_t i, int64_t t_ns, HoldEnd why) {
    auto it = open_.find(process);
    if (it == open_.end()) return;
    std::vector<size_t>& mine = it->second;
    std::erase_if(mine, [&](size_t h) {
      Hold& hold = (*holds_)[h];
      bool match =
          (lock.empty() || hold.lock == lock) && (!token || !hold.token || hold.token == token);
      if (match) end(hold, i, t_ns, why);
      return match;
    });
  }

  void close_all(const std::string& process, size_t i, int64_t t_ns, HoldEnd why) {
    close_matching(process, "", std::nullopt, i, t_ns, why);
  }

  void close_everything(int64_t t_ns) {
    for (auto& [process, mine] : open_) {
      for (size_t h : mine) end((*holds_)[h], kNoEvent, t_ns, HoldEnd::kHistoryEnd);
      mine.clear();
    }
  }

 private:
  static void end(Hold& hold, size_t i, int64_t t_ns, HoldEnd why) {
    assert(t_ns >= hold.start_ns);
    hold.end_event = i;
    hold.end_ns = t_ns;
    hold.end = why;
  }

  std::vector<Hold>* holds_;
  std::unordered_map<std::string, std::vector<size_t>> open_;
};

// A hold lasts until the completion of its holder's last write with its token (a pending write
// counts to its invoke: nothing later is known of it), and records its release's ok.
void extend_holds(const std::vector<Event>& history, const std::vector<Operation>& operations,
                  std::vector<Hold>& holds) {
  // token -> holds with that token (one per lock and process, in start order): integer keys,
  // the strings are only compared.
  std::unordered_map<int64_t, std::vector<size_t>> by_token;
  by_token.reserve(holds.size());
  for (size_t h = 0; h < holds.size(); ++h) {
    if (holds[h].token) by_token[*holds[h].token].push_back(h);
  }
  for (const Operation& op : operations) {
    if ((op.f != "write" && op.f != "release") || !op.token) continue;
    auto candidates = by_token.find(*op.token);
    if (candidates == by_token.end()) continue;
    size_t found = kNoEvent;
    for (size_t h : candidates->second) {
      if (holds[h].process == op.process && holds[h].lock == op.lock) found = h;  // the latest
    }
    if (found == kNoEvent) continue;
    Hold& hold = holds[found];
    if (history[op.first()].t_ns < hold.start_ns) continue;
    if (op.f == "release") {
      if (op.completion != kNoEvent && history[op.completion].type == EventType::kOk)
        hold.release_ok_ns = history[op.completion].t_ns;
      continue;
    }
    const size_t last = op.completion != kNoEvent ? op.completion : op.invoke;
    if (history[last].t_ns <= hold.end_ns || hold.end == HoldEnd::kHistoryEnd) continue;
    if (hold.end == HoldEnd::kKilled || hold.end == HoldEnd::kExited) continue;
    hold.end_event = last;
    hold.end_ns = history[last].t_ns;
    hold.end = HoldEnd::kWrite;
  }
}

// A kill that took effect: in v2 the `ok` (an `info` is a begin that failed and could not be
// undone: the worker may well be alive); in v1 the one `info` event written after begin().
bool is_kill(const Event& e, int vocabulary) {
  if (e.process != kNemesis || e.f != "kill-worker") return false;
  return e.type == EventType::kOk || (vocabulary < 2 && e.type == EventType::kInfo);
}

std::vector<Hold> reconstruct_holds(const std::vector<Event>& history,
                                    const std::vector<Operation>& operations, int vocabulary) {
  // A grant that does not repeat its lock takes it from its invoke.
  std::unordered_map<size_t, const std::string*> grant_lock;
  for (const Operation& op : operations) {
    if (op.f == "acquire" && op.completion != kNoEvent && history[op.completion].lock.empty())
      grant_lock[op.completion] = &op.lock;
  }
  std::vector<Hold> holds;
  HoldTracker tracker(&holds);
  for (size_t i = 0; i < history.size(); ++i) {
    const Event& e = history[i];
    if (e.f == "acquire" && e.type == EventType::kOk && e.process != kNemesis) {
      auto lock = grant_lock.find(i);
      tracker.open(e, lock == grant_lock.end() ? e.lock : *lock->second, i);
    } else if (e.f == "release" && e.type == EventType::kInvoke) {
      tracker.close_matching(e.process, e.lock, e.token, i, e.t_ns, HoldEnd::kRelease);
    } else if (e.f == "lost" && e.type != EventType::kInvoke) {
      // `lost-ignored` (v2) is another f: the worker goes on, the hold does not end.
      tracker.close_matching(e.process, e.lock, e.token, i, e.t_ns, HoldEnd::kLost);
    } else if (is_kill(e, vocabulary)) {
      for (const std::string& target : targets_of(e))
        tracker.close_all(target, i, e.t_ns, HoldEnd::kKilled);
    } else if (e.process == kHarness && e.f == "exit") {
      tracker.close_all(field_text(e, "worker"), i, e.t_ns, HoldEnd::kExited);
    }
  }
  if (!history.empty()) tracker.close_everything(history.back().t_ns);
  extend_holds(history, operations, holds);
  return holds;
}

}  // namespace

EventType Operation::outcome(const std::vector<Event>& history) const {
  return completion == kNoEvent ? EventType::kInfo : history[completion].type;
}

std::string_view to_string(HoldEnd end) {
  switch (end) {
    case HoldEnd::kRelease:
      return "release";
    case HoldEnd::kLost:
      return "lost";
    case HoldEnd::kKilled:
      return "killed";
    case HoldEnd::kExited:
      return "exited";
    case HoldEnd::kReacquired:
      return "reacquired";
    case HoldEnd::kHistoryEnd:
      return "history end";
    case HoldEnd::kWrite:
      return "write";
  }
  return "?";
}

std::string_view describe(HoldEnd end) {
  switch (end) {
    case HoldEnd::kRelease:
      return "its release";
    case HoldEnd::kLost:
      return "its lost notification";
    case HoldEnd::kKilled:
      return "it was killed";
    case HoldEnd::kExited:
      return "it exited";
    case HoldEnd::kReacquired:
      return "it acquired the lock again";
    case HoldEnd::kHistoryEnd:
      return "the end of the history";
    case HoldEnd::kWrite:
      return "its last write with that token";
  }
  return "?";
}

bool FaultWindow::targets_any_of(const std::string& a, const std::string& b) const {
  return std::find(targets.begin(), targets.end(), a) != targets.end() ||
         std::find(targets.begin(), targets.end(), b) != targets.end();
}

std::string FaultWindow::describe() const {
  std::string text = fault;
  for (const std::string& target : targets) text += " " + target;
  if (window != fault) text += " (window " + window + ")";
  return text;
}

HistoryIndex HistoryIndex::build(const std::vector<Event>& history) {
  HistoryIndex index;
  if (history.empty()) return index;
  index.first_ns = history.front().t_ns;
  index.last_ns = history.back().t_ns;
  index.operations = pair_operations(history);
  // A fault that failed at once and was undone did nothing: no property blames it.
  for (FaultWindow& window : collect_windows(history)) {
    if (!window.undone) index.windows.push_back(std::move(window));
  }
  for (const Event& event : history) {
    if (event.process != kHarness || event.f != "start" || !event.value.is_object()) continue;
    index.vocabulary = static_cast<int>(int_field(event, "vocabulary").value_or(1));
    index.workload = field_text(event, "workload");
  }
  index.holds = reconstruct_holds(history, index.operations, index.vocabulary);
  std::set<std::string> workers;
  for (const Event& event : history) {
    if (event.process != kNemesis && event.process != kHarness) workers.insert(event.process);
    if (is_kill(event, index.vocabulary)) {
      for (const std::string& target : targets_of(event))
        index.deaths_ns[target].push_back(event.t_ns);
    } else if (event.process == kHarness && event.f == "exit") {
      index.deaths_ns[field_text(event, "worker")].push_back(event.t_ns);
    }
  }
  index.workers.assign(workers.begin(), workers.end());
  index.stop_ns = index.last_ns;
  for (size_t i = 0; i < history.size(); ++i) {
    const Event& event = history[i];
    if (event.process != kHarness) continue;
    if (event.f == "stop" && index.stop_event == kNoEvent) {
      index.stop_event = i;
      index.stop_ns = event.t_ns;
    }
  }
  return index;
}

int64_t HistoryIndex::death_after(const std::string& process, int64_t t_ns) const {
  auto deaths = deaths_ns.find(process);
  if (deaths == deaths_ns.end()) return std::numeric_limits<int64_t>::max();
  auto at = std::lower_bound(deaths->second.begin(), deaths->second.end(), t_ns);
  return at == deaths->second.end() ? std::numeric_limits<int64_t>::max() : *at;
}

bool HistoryIndex::is_worker(const std::string& process) const {
  return std::binary_search(workers.begin(), workers.end(), process);
}

std::string HistoryIndex::cause(int64_t from_ns, int64_t to_ns, const std::string& a,
                                const std::string& b) const {
  std::string text;
  for (const FaultWindow& window : windows) {
    if (window.start_ns > to_ns || window.end_ns < from_ns) continue;
    bool cluster_wide = std::none_of(window.targets.begin(), window.targets.end(),
                                     [this](const std::string& t) { return is_worker(t); });
    if (!cluster_wide && !window.targets_any_of(a, b)) continue;
    if (!text.empty()) text += "; ";
    text += window.describe();
  }
  return text.empty() ? "none" : text;
}

std::string resource_of(const Event& event) {
  if (!event.value.is_object()) return "";
  auto it = event.value.find("resource");
  return it == event.value.end() ? "" : text_of(*it);
}

std::optional<int64_t> int_field(const Event& event, const char* key) {
  if (!event.value.is_object()) return std::nullopt;
  auto it = event.value.find(key);
  if (it == event.value.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

std::string ms_text(int64_t ns) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.1f ms", static_cast<double>(ns) / 1e6);
  return buffer;
}

std::string token_text(const std::optional<int64_t>& token) {
  return token ? "token " + std::to_string(*token) : "no token";
}

namespace {

// A magnitude read from a stored history is capped: a day is far beyond any schedule's.
constexpr int64_t kClockMoveMaxMs = 24LL * 3600 * 1000;
constexpr int64_t kClockMovesMaxMs = 100 * kClockMoveMaxMs;  // their sum: no overflow in ns

// |move| in ms, at most kClockMoveMaxMs; 0 for a value that is not an integer.
int64_t clock_move_ms(const nlohmann::json& move) {
  if (move.is_number_unsigned()) return std::min<uint64_t>(move.get<uint64_t>(), kClockMoveMaxMs);
  if (!move.is_number_integer()) return 0;
  const int64_t ms = move.get<int64_t>();
  return ms >= 0 ? std::min(ms, kClockMoveMaxMs) : ms < -kClockMoveMaxMs ? kClockMoveMaxMs : -ms;
}

}  // namespace

ClockMoves::ClockMoves(const std::vector<Event>& history, const HistoryIndex& index,
                       const CheckConfig& config) {
  const std::vector<std::string>& kinds = config.clock_fault_kinds;
  for (const FaultWindow& window : index.windows) {
    if (std::find(kinds.begin(), kinds.end(), window.fault) == kinds.end()) continue;
    int64_t moved_ms = 0;
    for (size_t e : window.events) {
      const nlohmann::json& value = history[e].value;
      if (!value.is_object() || !value.contains("params") || !value["params"].is_object()) continue;
      for (const char* key : {"offset_ms", "jump_ms", "clock_ms"}) {
        auto it = value["params"].find(key);
        if (it != value["params"].end()) moved_ms += clock_move_ms(*it);
      }
      break;  // one invoke per window carries its params
    }
    total_ms_at_.emplace_back(window.start_ns, moved_ms);
  }
  std::sort(total_ms_at_.begin(), total_ms_at_.end());
  int64_t total_ms = 0;
  for (auto& [start_ns, moves_ms] : total_ms_at_) {
    total_ms = std::min(total_ms + moves_ms, kClockMovesMaxMs);
    moves_ms = total_ms;
  }
}

int64_t ClockMoves::by_ns(int64_t t_ns) const {
  auto after = std::upper_bound(total_ms_at_.begin(), total_ms_at_.end(), t_ns,
                                [](int64_t t, const auto& entry) { return t < entry.first; });
  return after == total_ms_at_.begin() ? 0 : std::prev(after)->second * 1'000'000;
}

int64_t saturating_add(int64_t a, int64_t b) {
  assert(b >= 0);
  return a > std::numeric_limits<int64_t>::max() - b ? std::numeric_limits<int64_t>::max() : a + b;
}

void add_violation(PropertyResult& result, const CheckConfig& config, std::string message,
                   std::string cause, std::vector<size_t> events) {
  result.outcome = Outcome::kInvalid;
  ++result.violation_count;
  if (result.violations.size() >= config.violations_kept_max) return;
  std::erase(events, kNoEvent);
  std::sort(events.begin(), events.end());
  events.erase(std::unique(events.begin(), events.end()), events.end());
  result.violations.push_back(
      Violation{result.property, std::move(message), std::move(cause), std::move(events)});
}

}  // namespace locklab
