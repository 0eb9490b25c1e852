// exclusion.rw and exclusion.rw-fenced (docs/properties.md): the reader/writer workload, whose
// acquire events carry value.mode ("shared" | "exclusive") and value.max_shared.
//
// rw: judged on the workers' beliefs, on the holds of checker/index.h. Per lock, no exclusive
// hold overlaps a hold of another process, and a shared hold never starts while max_shared
// (when > 0) shared holds of other processes are open.
// rw-fenced: judged at the fenced resource, on the design "a shared hold carries its epoch's
// token": a write must be accepted iff its hold's epoch (or exclusive hold) is still current.
//   - stale accepted: a write accepted although it was invoked after the resource accepted a
//     write with a higher token from a conflicting hold (one of the two exclusive);
//   - current refused: a write refused although its hold's lease was surely live when the
//     refusal came back (the acquire or last acknowledged extension was invoked less than
//     lease_ms - lease_skew before) and no write the resource may have applied before (invoked
//     earlier, not refused) came from a conflicting hold with a higher token. A live hold has
//     nothing newer to yield to: only a conflicting holder's higher token may fence it out.
// Both are O(n log n): sweeps in time order and binary searches over per-lock prefix maxima.
#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "checker/index.h"

namespace locklab {
namespace {

// Holds by (process, lock, token), each list in start order.
using HoldsByKey =
    std::map<std::tuple<std::string, std::string, int64_t>, std::vector<const Hold*>>;

int64_t max_shared_of(const Event& acquire_ok) {
  return int_field(acquire_ok, "max_shared").value_or(0);
}

std::string hold_text(const Hold& hold) {
  return hold.process + " (" + (hold.shared ? "shared" : "exclusive") + ", " +
         token_text(hold.token) + ")";
}

// One lock's open holds while its holds are swept in start order. At most one hold per
// worker process is open at once, so the list stays as short as the worker count.
void judge_hold(const Hold& hold, std::vector<const Hold*>& open, const std::vector<Event>& history,
                const HistoryIndex& index, const CheckConfig& config, PropertyResult& result) {
  std::erase_if(open, [&](const Hold* h) { return h->end_ns <= hold.start_ns; });
  int64_t readers = 0;
  const Hold* conflict = nullptr;
  for (const Hold* other : open) {
    if (other->process == hold.process) continue;
    if (hold.shared && other->shared) {
      ++readers;
    } else if (conflict == nullptr) {
      conflict = other;
    }
  }
  if (conflict != nullptr) {
    // From the earlier grant, as in exclusion.strict.
    add_violation(result, config,
                  "lock " + hold.lock + ": " + hold_text(hold) + " acquired while " +
                      hold_text(*conflict) + " still held it (until " +
                      std::string(describe(conflict->end)) + ")",
                  index.cause(conflict->start_ns, std::min(hold.end_ns, conflict->end_ns),
                              hold.process, conflict->process),
                  {conflict->acquire_ok, hold.acquire_ok});
  }
  const int64_t limit = max_shared_of(history[hold.acquire_ok]);
  if (hold.shared && limit > 0 && readers + 1 > limit) {
    add_violation(
        result, config,
        "lock " + hold.lock + ": " + hold_text(hold) + " made " + std::to_string(readers + 1) +
            " shared holds at once, above max_shared " + std::to_string(limit),
        index.cause(hold.start_ns, hold.end_ns, hold.process, hold.process), {hold.acquire_ok});
  }
  open.push_back(&hold);
}

// The hold a write belongs to: the latest hold of its process, lock and token started by the
// write's first event; nullptr when there is none (a write outside any hold).
const Hold* hold_of(const std::vector<Event>& history, const Operation& write,
                    const HoldsByKey& holds) {
  if (!write.token) return nullptr;
  auto it = holds.find({write.process, write.lock, *write.token});
  if (it == holds.end()) return nullptr;
  const Hold* found = nullptr;
  for (const Hold* h : it->second) {
    if (h->start_ns <= history[write.first()].t_ns) found = h;
  }
  return found;
}

// Per resource, the writes it may have applied (every write not refused), in invoke order,
// with the running maximum of their tokens: of all of them, and of those that conflict with a
// shared hold (writes of exclusive holds, and writes outside any known hold).
struct WriteMaxima {
  std::vector<int64_t> invoke_ns;
  std::vector<int64_t> max_any;
  std::vector<int64_t> max_exclusive;

  // The highest token among such writes (exclusive ones only when asked) invoked before t_ns.
  int64_t before(int64_t t_ns, bool exclusive_only) const {
    const auto n = std::lower_bound(invoke_ns.begin(), invoke_ns.end(), t_ns) - invoke_ns.begin();
    if (n == 0) return std::numeric_limits<int64_t>::min();
    return (exclusive_only ? max_exclusive : max_any)[static_cast<size_t>(n - 1)];
  }
};

std::map<std::string, WriteMaxima> write_maxima(const std::vector<Event>& history,
                                                const HistoryIndex& index,
                                                const CheckConfig& config,
                                                const HoldsByKey& holds) {
  std::map<std::string, std::vector<std::tuple<int64_t, int64_t, bool>>> per_resource;
  for (const Operation& op : index.operations) {
    if (op.f != "write" || op.resource == config.counter_resource || !op.token) continue;
    if (op.outcome(history) == EventType::kFail) continue;
    const Hold* hold = hold_of(history, op, holds);
    per_resource[op.resource].emplace_back(history[op.first()].t_ns, *op.token,
                                           hold == nullptr || !hold->shared);
  }
  std::map<std::string, WriteMaxima> maxima;
  for (auto& [resource, writes] : per_resource) {
    std::sort(writes.begin(), writes.end());
    WriteMaxima& m = maxima[resource];
    int64_t any = std::numeric_limits<int64_t>::min(), exclusive = any;
    for (const auto& [t_ns, token, is_exclusive] : writes) {
      any = std::max(any, token);
      if (is_exclusive) exclusive = std::max(exclusive, token);
      m.invoke_ns.push_back(t_ns);
      m.max_any.push_back(any);
      m.max_exclusive.push_back(exclusive);
    }
  }
  return maxima;
}

// The earliest time the hold's lease may have ended on the server: its acquire's or last
// acknowledged extension's invoke (acknowledged before `by_ns`) + lease_ms - skew_ns; min when
// the acquire ok has no lease_ms (nothing is known of the lease).
int64_t lease_floor_ns(const std::vector<Event>& history, const Hold& hold,
                       const std::vector<const Operation*>& extends, size_t acquire_invoke,
                       int64_t by_ns, int64_t skew_ns) {
  std::optional<int64_t> lease_ms = int_field(history[hold.acquire_ok], "lease_ms");
  if (!lease_ms || acquire_invoke == kNoEvent) return std::numeric_limits<int64_t>::min();
  int64_t base_ns = history[acquire_invoke].t_ns;
  for (const Operation* e : extends) {
    if (e->invoke == kNoEvent || e->completion == kNoEvent) continue;
    if (history[e->invoke].t_ns < hold.start_ns || history[e->completion].t_ns > by_ns) continue;
    if (history[e->completion].type == EventType::kOk)
      base_ns = std::max(base_ns, history[e->invoke].t_ns);
  }
  return base_ns + *lease_ms * 1'000'000 - skew_ns;
}

}  // namespace

PropertyResult check_exclusion_rw(const std::vector<Event>& history, const HistoryIndex& index,
                                  const CheckConfig& config) {
  PropertyResult result{std::string(kExclusionRw), Outcome::kValid, "", 0, {}};
  std::map<std::string, std::vector<const Hold*>> open;  // per lock
  size_t shared = 0;
  for (const Hold& hold : index.holds) {  // in start order
    judge_hold(hold, open[hold.lock], history, index, config, result);
    shared += hold.shared ? 1 : 0;
  }
  result.note =
      std::to_string(index.holds.size()) + " holds, " + std::to_string(shared) + " of them shared";
  return result;
}

namespace {

struct RwWrites {
  HoldsByKey holds;
  std::map<size_t, size_t> acquire_invoke_of_ok;  // acquire ok -> its invoke
  std::map<std::tuple<std::string, std::string, int64_t>, std::vector<const Operation*>> extends;
};

RwWrites rw_writes(const HistoryIndex& index) {
  RwWrites w;
  for (const Hold& hold : index.holds) {
    if (hold.token) w.holds[{hold.process, hold.lock, *hold.token}].push_back(&hold);
  }
  for (const Operation& op : index.operations) {
    if (op.f == "acquire" && op.completion != kNoEvent)
      w.acquire_invoke_of_ok[op.completion] = op.invoke;
    if (op.f == "extend" && op.token) w.extends[{op.process, op.lock, *op.token}].push_back(&op);
  }
  return w;
}

// A refused write whose hold was surely live and had no conflicting newer grant to yield to.
void judge_refusal(const std::vector<Event>& history, const HistoryIndex& index,
                   const CheckConfig& config, const ClockMoves& moves, const Operation& write,
                   const Hold& hold, const RwWrites& w,
                   const std::map<std::string, WriteMaxima>& maxima, PropertyResult& result,
                   size_t& judged) {
  const int64_t refused_ns = history[write.completion].t_ns;
  auto invoke = w.acquire_invoke_of_ok.find(hold.acquire_ok);
  auto extends = w.extends.find({hold.process, hold.lock, *write.token});
  // Member clocks moved by the refusal may have ended the lease early (CheckConfig).
  const int64_t skew_ns = saturating_add(config.lease_skew_ns, 2 * moves.by_ns(refused_ns));
  const int64_t floor_ns = lease_floor_ns(
      history, hold, extends == w.extends.end() ? std::vector<const Operation*>{} : extends->second,
      invoke == w.acquire_invoke_of_ok.end() ? kNoEvent : invoke->second,
      history[write.first()].t_ns, skew_ns);
  if (refused_ns >= floor_ns) return;  // the lease may have ended: a refusal is allowed
  ++judged;
  auto m = maxima.find(write.resource);
  const int64_t newer = m == maxima.end() ? std::numeric_limits<int64_t>::min()
                                          : m->second.before(refused_ns, hold.shared);
  if (newer > *write.token) return;  // a conflicting holder's newer write may have been seen
  add_violation(result, config,
                "resource " + write.resource + " refused the write of " + hold_text(hold) +
                    " while its lease was surely live (for " + ms_text(floor_ns - refused_ns) +
                    " more) and no conflicting hold had a higher token: a current holder " +
                    "was fenced out",
                index.cause(hold.start_ns, refused_ns, hold.process, hold.process),
                {hold.acquire_ok, write.first(), write.completion});
}

}  // namespace

PropertyResult check_exclusion_rw_fenced(const std::vector<Event>& history,
                                         const HistoryIndex& index, const CheckConfig& config) {
  PropertyResult result{std::string(kExclusionRwFenced), Outcome::kValid, "", 0, {}};
  const RwWrites w = rw_writes(index);
  const std::map<std::string, WriteMaxima> maxima = write_maxima(history, index, config, w.holds);
  // Accepted writes by event, to sweep in time order: at an invoke, snapshot the highest
  // accepted tokens so far (per resource: of exclusive holds, of any hold).
  struct Accepted {
    const Operation* op;
    bool shared;
  };
  std::vector<std::optional<Accepted>> at(history.size());
  const ClockMoves moves(history, index, config);
  size_t writes = 0, accepted = 0, judged = 0;
  for (const Operation& op : index.operations) {
    if (op.f != "write" || op.resource == config.counter_resource || !op.token) continue;
    const Hold* hold = hold_of(history, op, w.holds);
    if (hold == nullptr) continue;  // a write outside any hold is exclusion.fenced's concern
    ++writes;
    const EventType outcome = op.outcome(history);
    if (outcome == EventType::kFail && op.completion != kNoEvent) {
      judge_refusal(history, index, config, moves, op, *hold, w, maxima, result, judged);
    } else if (outcome == EventType::kOk && op.invoke != kNoEvent) {
      ++accepted;
      at[op.invoke] = Accepted{&op, hold->shared};
      at[op.completion] = Accepted{&op, hold->shared};
    }
  }
  struct Highest {
    int64_t token = std::numeric_limits<int64_t>::min();
    size_t ok = kNoEvent;
  };
  std::map<std::string, std::pair<Highest, Highest>> highest;  // resource -> (exclusive, any)
  for (size_t i = 0; i < history.size(); ++i) {
    if (!at[i]) continue;
    const Operation& op = *at[i]->op;
    auto& [exclusive, any] = highest[op.resource];
    if (i == op.invoke) {
      const Highest& rival = at[i]->shared ? exclusive : any;
      if (rival.ok != kNoEvent && rival.token > *op.token) {
        add_violation(result, config,
                      "resource " + op.resource + " accepted " + op.process + "'s write (token " +
                          std::to_string(*op.token) + ") invoked after it accepted " +
                          history[rival.ok].process + "'s conflicting write with token " +
                          std::to_string(rival.token) + ": a stale holder was not fenced",
                      index.cause(history[rival.ok].t_ns, history[op.completion].t_ns,
                                  history[rival.ok].process, op.process),
                      {rival.ok, op.invoke, op.completion});
      }
      continue;
    }
    if (*op.token > any.token) any = Highest{*op.token, i};
    if (!at[i]->shared && *op.token > exclusive.token) exclusive = Highest{*op.token, i};
  }
  result.note = std::to_string(writes) + " writes inside holds, " + std::to_string(accepted) +
                " accepted, " + std::to_string(judged) + " refusals inside a surely live lease";
  // Only an accepted write can be stale and only a judged refusal can be wrong: with neither,
  // the property held over nothing (writes all refused with no lease to judge them by, say).
  if (accepted == 0 && judged == 0 && result.outcome == Outcome::kValid) {
    result.outcome = Outcome::kUnknown;
    result.note += writes == 0 ? " (unknown: no write was made inside a hold)"
                               : " (unknown: no write inside a hold was accepted or judged)";
  }
  return result;
}

}  // namespace locklab
