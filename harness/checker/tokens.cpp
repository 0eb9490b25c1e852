// tokens.unique and tokens.monotonic (docs/properties.md): fencing tokens granted per lock are
// unique and grow in the order the lock granted them.
//
// tokens.monotonic is judged against a per-lock model of a lease lock with a token counter:
// each grant takes effect somewhere between its acquire invoke and ok, and a granted lease
// lasts at least value.lease_ms minus the skew allowance from the invoke
// (CheckConfig::lease_skew_ns, widened by twice the member clock moves begun by the grant's ok:
// clock_fault_kinds; an unknown acquire is left pending: it may or may not have taken effect, so it
// constrains nothing). Two checks, both O(n log n):
//   - real time: a grant must carry a higher token than every grant completed before its
//     acquire was invoked;
//   - lease: a grant A that completed after a grant B with a higher token must have taken
//     effect before B (token order), so A's lease must have expired by B's ok. When B's ok
//     is earlier than A's invoke + lease - skew, no order of the two is possible.
//
// Shared (reader) acquisitions may carry the token of a concurrent shared acquisition, so two
// shared grants with one token are not a duplicate, and a shared grant only has to be at least
// (not above) the previous shared token.
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "checker/index.h"

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

struct Leased {
  const Operation* op;
  int64_t token;
  int64_t lease_floor_ns;  // invoke + lease - skew: the lease cannot have expired before
  int64_t skew_ns;         // CheckConfig::lease_skew_ns + 2 × member clock moves by its ok
};

// Index of the highest token in [lo, hi) of grants, answered in O(1) after O(n log n) setup.
class MaxTokenTable {
 public:
  explicit MaxTokenTable(const std::vector<Leased>& grants) : grants_(grants) {
    levels_.push_back(std::vector<size_t>(grants.size()));
    for (size_t k = 0; k < grants.size(); ++k) levels_[0][k] = k;
    for (size_t width = 2; width <= grants.size(); width *= 2) {
      const std::vector<size_t>& below = levels_.back();
      std::vector<size_t> level(grants.size() - width + 1);
      for (size_t k = 0; k < level.size(); ++k) level[k] = higher(below[k], below[k + width / 2]);
      levels_.push_back(std::move(level));
    }
  }
  size_t max_in(size_t lo, size_t hi) const {  // requires lo < hi
    size_t level = 0;
    while ((size_t{2} << level) <= hi - lo) ++level;
    return higher(levels_[level][lo], levels_[level][hi - (size_t{1} << level)]);
  }

 private:
  size_t higher(size_t a, size_t b) const { return grants_[b].token > grants_[a].token ? b : a; }
  const std::vector<Leased>& grants_;
  std::vector<std::vector<size_t>> levels_;
};

size_t check_lock_leases(const std::vector<Event>& history, const HistoryIndex& index,
                         const CheckConfig& config, const std::vector<Leased>& grants,
                         PropertyResult& result) {
  // grants are in ok order; ok_events the same order, for the binary searches.
  std::vector<size_t> ok_events;
  for (const Leased& g : grants) ok_events.push_back(g.op->completion);
  MaxTokenTable table(grants);
  size_t compared = 0;
  for (size_t a = 0; a < grants.size(); ++a) {
    const Leased& later = grants[a];
    // Earlier completions B that came after later's invoke (the real-time check covers the
    // ones before it) and before its lease could have expired.
    size_t lo = static_cast<size_t>(
        std::upper_bound(ok_events.begin(), ok_events.begin() + a, later.op->invoke) -
        ok_events.begin());
    if (lo >= a) continue;
    const size_t hi = static_cast<size_t>(
        std::partition_point(ok_events.begin() + lo, ok_events.begin() + a,
                             [&](size_t e) { return history[e].t_ns < later.lease_floor_ns; }) -
        ok_events.begin());
    ++compared;
    if (lo >= hi) continue;
    const Leased& higher = grants[table.max_in(lo, hi)];
    if (higher.token <= later.token) continue;
    const Event& before = history[higher.op->completion];
    add_violation(result, config,
                  "lock " + later.op->lock + ": " + later.op->process + " was granted token " +
                      token_text(later.token) + " after " + before.process + "'s token " +
                      token_text(higher.token) + ", which was granted while " + later.op->process +
                      "'s acquire was in flight; taking effect first, " + later.op->process +
                      "'s lease (from its invoke, less " + ms_text(later.skew_ns) +
                      " skew) was still live then",
                  index.cause(history[later.op->invoke].t_ns, history[later.op->completion].t_ns,
                              before.process, later.op->process),
                  {later.op->invoke, higher.op->completion, later.op->completion});
  }
  return compared;
}

// The lease check of tokens.monotonic, lock by lock, over exclusive grants with a lease;
// returns how many grants had another grant complete inside their acquire call.
size_t check_lease_order(const std::vector<Event>& history, const HistoryIndex& index,
                         const CheckConfig& config, PropertyResult& result) {
  std::map<std::string, std::vector<Leased>> per_lock;
  const ClockMoves moves(history, index, config);
  for (const Operation& op : index.operations) {
    if (op.f != "acquire" || op.invoke == kNoEvent || op.completion == kNoEvent) continue;
    const Event& ok = history[op.completion];
    if (ok.type != EventType::kOk || !op.token || is_shared(ok)) continue;
    std::optional<int64_t> lease_ms = int_field(ok, "lease_ms");
    if (!lease_ms || *lease_ms <= 0) continue;
    // A grant B with a higher token completed before this one's ok: member clocks moved by
    // then may have ended this lease early (CheckConfig::clock_fault_kinds).
    const int64_t skew_ns = saturating_add(config.lease_skew_ns, 2 * moves.by_ns(ok.t_ns));
    per_lock[op.lock].push_back(
        Leased{&op, *op.token, history[op.invoke].t_ns + *lease_ms * 1'000'000 - skew_ns, skew_ns});
  }
  size_t compared = 0;
  for (auto& [lock, grants] : per_lock) {
    std::sort(grants.begin(), grants.end(),
              [](const Leased& x, const Leased& y) { return x.op->completion < y.op->completion; });
    compared += check_lock_leases(history, index, config, grants, result);
  }
  return compared;
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
  size_t leased = check_lease_order(history, index, config, result);
  result.note = std::to_string(checked) +
                " grants compared with every grant completed before "
                "their invoke; " +
                std::to_string(leased) +
                " compared with the grants completed "
                "during their acquire (lease model)";
  return result;
}

}  // namespace locklab
