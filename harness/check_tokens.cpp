// tokens.unique and tokens.monotonic: fencing tokens granted per lock are unique and grow in
// the real-time order of acquisitions (ARCHITECTURE.md "Properties").
//
// Shared (reader) acquisitions may carry the token of a concurrent shared acquisition, so two
// shared grants with one token are not a duplicate, and a shared grant only has to be at least
// (not above) the previous shared token.
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "checker_index.h"

namespace locklab {
namespace {

bool is_shared(const Event& event) {
  return event.value.is_object() && event.value.value("mode", "") == "shared";
}

struct Grant {
  std::string lock;
  int64_t token;
  size_t ok;  // index of the acquire ok
};

std::string token_text(int64_t token) {
  return std::to_string(token);
}

}  // namespace

PropertyResult check_tokens_unique(const std::vector<Event>& history, const HistoryIndex& index,
                                   const CheckConfig& config) {
  PropertyResult result{std::string(kTokensUnique), Outcome::kValid, "", 0, {}};
  std::vector<Grant> grants;
  for (const Operation& op : index.operations) {
    if (op.f != "acquire" || op.completion == kNoEvent) continue;
    if (history[op.completion].type != EventType::kOk || !op.token) continue;
    grants.push_back(Grant{op.lock, *op.token, op.completion});
  }
  std::sort(grants.begin(), grants.end(), [](const Grant& a, const Grant& b) {
    return std::tie(a.lock, a.token, a.ok) < std::tie(b.lock, b.token, b.ok);
  });
  for (size_t i = 1; i < grants.size(); ++i) {
    const Grant& a = grants[i - 1];
    const Grant& b = grants[i];
    if (a.lock != b.lock || a.token != b.token) continue;
    if (is_shared(history[a.ok]) && is_shared(history[b.ok])) continue;
    add_violation(result, config,
                  "lock " + a.lock + ": token " + token_text(a.token) + " granted to " +
                      history[a.ok].process + " and again to " + history[b.ok].process,
                  index.cause(history[a.ok].t_ns, history[b.ok].t_ns, history[a.ok].process,
                              history[b.ok].process),
                  {a.ok, b.ok});
  }
  result.note = std::to_string(grants.size()) + " granted tokens";
  return result;
}

PropertyResult check_tokens_monotonic(const std::vector<Event>& history, const HistoryIndex& index,
                                      const CheckConfig& config) {
  PropertyResult result{std::string(kTokensMonotonic), Outcome::kValid, "", 0, {}};
  // The highest token among acquisitions completed so far, per lock and mode, with its event.
  struct Highest {
    int64_t token = 0;
    size_t ok = kNoEvent;
  };
  std::unordered_map<std::string, Highest> exclusive_max;
  std::unordered_map<std::string, Highest> shared_max;
  // For each granted acquisition, what was highest when it was invoked.
  struct Pending {
    const Operation* op;
    Highest exclusive;
    Highest shared;
  };
  std::unordered_map<size_t, Pending> at_invoke;  // keyed by the completion's index
  std::vector<const Operation*> by_event(history.size(), nullptr);
  for (const Operation& op : index.operations) {
    if (op.f != "acquire" || op.completion == kNoEvent || !op.token) continue;
    if (history[op.completion].type != EventType::kOk) continue;
    if (op.invoke != kNoEvent) by_event[op.invoke] = &op;
    by_event[op.completion] = &op;
  }
  size_t checked = 0;
  for (size_t i = 0; i < history.size(); ++i) {
    const Operation* op = by_event[i];
    if (op == nullptr) continue;
    if (i == op->invoke) {
      at_invoke[op->completion] = Pending{op, exclusive_max[op->lock], shared_max[op->lock]};
      continue;
    }
    int64_t token = *op->token;
    auto pending = at_invoke.find(i);
    if (pending != at_invoke.end()) {
      ++checked;
      const Highest& ex = pending->second.exclusive;
      const Highest& sh = pending->second.shared;
      bool shared = is_shared(history[i]);
      const Highest* beaten = nullptr;
      if (ex.ok != kNoEvent && token <= ex.token) beaten = &ex;
      if (sh.ok != kNoEvent && (shared ? token < sh.token : token <= sh.token)) beaten = &sh;
      if (beaten != nullptr) {
        const Event& before = history[beaten->ok];
        add_violation(result, config,
                      "lock " + op->lock + ": " + op->process + " was granted token " +
                          token_text(token) + " after " + before.process + "'s token " +
                          token_text(beaten->token) + " had been granted before it asked",
                      index.cause(before.t_ns, history[i].t_ns, before.process, op->process),
                      {beaten->ok, op->invoke, i});
      }
      at_invoke.erase(pending);
    }
    Highest& slot = is_shared(history[i]) ? shared_max[op->lock] : exclusive_max[op->lock];
    if (slot.ok == kNoEvent || token > slot.token) slot = Highest{token, i};
  }
  result.note = std::to_string(checked) + " acquisitions compared with earlier grants";
  return result;
}

}  // namespace locklab
