// RapidCheck: generated valid histories check valid on every property; each mutator injects
// one violation class and the named property must come out invalid.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "checker/checker.h"
#include "checker/synthetic.h"

namespace locklab {
namespace {

// The generator's shapes (issue 18): indeterminate writes applied or not, waits spanning other
// grants, missing final reads, workers stopped by the harness with acquires pending,
// `lost-ignored` (v2) and writes after `lost` (v1), late `lost` of an earlier token. What the
// generated histories leave out: concurrency inside a hold, crashes mid-write, clock skew.
rc::Gen<SyntheticParams> params_gen() {
  return rc::gen::build<SyntheticParams>(
      rc::gen::set(&SyntheticParams::seed, rc::gen::arbitrary<uint64_t>()),
      rc::gen::set(&SyntheticParams::workers, rc::gen::inRange(2, 6)),
      rc::gen::set(&SyntheticParams::locks, rc::gen::inRange(1, 4)),
      rc::gen::set(&SyntheticParams::holds, rc::gen::inRange<size_t>(1, 60)),
      rc::gen::set(&SyntheticParams::faults, rc::gen::inRange(0, 5)),
      rc::gen::set(&SyntheticParams::fenced, rc::gen::arbitrary<bool>()),
      rc::gen::set(&SyntheticParams::counter, rc::gen::arbitrary<bool>()),
      rc::gen::set(&SyntheticParams::lost_holds, rc::gen::arbitrary<bool>()),
      rc::gen::set(&SyntheticParams::vocabulary, rc::gen::inRange(1, 3)));
}

std::string describe(const Verdict& verdict) {
  std::string text;
  for (const PropertyResult& result : verdict.properties) {
    text += result.property + "=" + std::string(to_string(result.outcome)) + " ";
    if (!result.violations.empty()) text += "(" + result.violations[0].message + ") ";
    if (result.outcome == Outcome::kUnknown) text += "(" + result.note + ") ";
  }
  return text;
}

void expect_invalid(const std::vector<Event>& history, std::string_view property) {
  Verdict verdict = check(history, synthetic_check_config());
  const PropertyResult* result = verdict.find(property);
  RC_ASSERT(result != nullptr);
  if (result->outcome != Outcome::kInvalid)
    RC_FAIL(std::string(property) + ": " + describe(verdict));
  RC_ASSERT(!result->violations.empty());
  RC_ASSERT(result->violations[0].property == std::string(property));
  RC_ASSERT(!result->violations[0].events.empty());
}

bool is(const Event& e, std::string_view f, EventType type) {
  return e.f == f && e.type == type;
}

// Indices of acquire ok events.
std::vector<size_t> grants(const std::vector<Event>& h) {
  std::vector<size_t> out;
  for (size_t i = 0; i < h.size(); ++i)
    if (is(h[i], "acquire", EventType::kOk)) out.push_back(i);
  return out;
}

// A later grant of the same lock to a different process than an earlier one: (earlier, later).
std::optional<std::pair<size_t, size_t>> handover(const std::vector<Event>& h) {
  std::vector<size_t> g = grants(h);
  for (size_t a = 0; a + 1 < g.size(); ++a) {
    for (size_t b = a + 1; b < g.size(); ++b) {
      if (h[g[b]].lock != h[g[a]].lock) continue;
      if (h[g[b]].process != h[g[a]].process) return std::pair{g[a], g[b]};
      break;
    }
  }
  return std::nullopt;
}

RC_GTEST_PROP(CheckerProperty, GeneratedHistoriesAreValid, ()) {
  SyntheticParams params = *params_gen();
  params.stop_in_bound = *rc::gen::arbitrary<bool>();
  std::vector<Event> history = make_synthetic_history(params);
  Verdict verdict = check(history, synthetic_check_config());
  RC_ASSERT(verdict.find(kTokensUnique) != nullptr);
  if (verdict.overall != Outcome::kValid) RC_FAIL(describe(verdict));
}

RC_GTEST_PROP(CheckerProperty, DuplicateTokenIsCaught, ()) {
  std::vector<Event> h = make_synthetic_history(*params_gen());
  auto pair = handover(h);
  RC_PRE(pair.has_value());
  h[pair->second].token = h[pair->first].token;
  expect_invalid(h, kTokensUnique);
}

RC_GTEST_PROP(CheckerProperty, DecreasingTokenIsCaught, ()) {
  std::vector<Event> h = make_synthetic_history(*params_gen());
  auto pair = handover(h);
  RC_PRE(pair.has_value());
  h[pair->second].token = 0;  // generated tokens start at 1
  expect_invalid(h, kTokensMonotonic);
}

RC_GTEST_PROP(CheckerProperty, OverlappingHoldsAreCaught, ()) {
  std::vector<Event> h = make_synthetic_history(*params_gen());
  auto pair = handover(h);
  RC_PRE(pair.has_value());
  // Remove whatever ended the first hold (its release invoke or lost event) before the second.
  const Event& first = h[pair->first];
  for (size_t i = pair->first + 1; i < pair->second; ++i) {
    if (h[i].process == first.process && h[i].lock == first.lock &&
        (is(h[i], "release", EventType::kInvoke) || is(h[i], "lost", EventType::kOk))) {
      h[i].f = "noop";
    }
  }
  expect_invalid(h, kExclusionStrict);
}

RC_GTEST_PROP(CheckerProperty, StaleFencedWriteIsCaught, ()) {
  SyntheticParams params = *params_gen();
  params.fenced = true;
  std::vector<Event> h = make_synthetic_history(params);
  // The last accepted fenced write, replayed later with a lower token by another process.
  auto last = std::find_if(h.rbegin(), h.rend(), [](const Event& e) {
    return is(e, "write", EventType::kOk) && e.value.value("resource", "") != "counter";
  });
  // RC_PRE captures its expression through overloaded operators, which do not short-circuit:
  // evaluate the guard as a plain bool so `last` is only dereferenced when valid.
  const bool has_write = last != h.rend() && last->token.value_or(0) > 1;
  RC_PRE(has_write);
  Event invoke = *last;
  invoke.type = EventType::kInvoke;
  invoke.process = "w99";
  invoke.token = *last->token - 1;
  invoke.t_ns += 1;
  if (invoke.value.is_object()) invoke.value["id"] = "w99-1";  // v2: every fenced write has one
  Event ok = invoke;
  ok.type = EventType::kOk;
  ok.t_ns += 1;
  auto at = std::find_if(h.begin(), h.end(), [&](const Event& e) { return e.t_ns > invoke.t_ns; });
  at = h.insert(at, ok);
  h.insert(at, invoke);
  expect_invalid(h, kExclusionFenced);
}

RC_GTEST_PROP(CheckerProperty, LostCounterUpdateIsCaught, ()) {
  SyntheticParams params = *params_gen();
  params.counter = true;
  std::vector<Event> h = make_synthetic_history(params);
  auto final_read = std::find_if(h.begin(), h.end(), [](const Event& e) {
    return e.f == "final" && e.value.value("resource", "") == "counter";
  });
  const bool counted = final_read != h.end() && final_read->value["count"].get<int64_t>() > 0;
  RC_PRE(counted);
  // Only an acknowledged write of the final value proves a lower final lost something (an
  // indeterminate last write may not have applied).
  const int64_t final_count = final_read->value["count"].get<int64_t>();
  const bool acknowledged = std::any_of(h.begin(), h.end(), [&](const Event& e) {
    return is(e, "write", EventType::kOk) && e.value.value("resource", "") == "counter" &&
           e.value.value("count", int64_t{-1}) == final_count;
  });
  RC_PRE(acknowledged);
  final_read->value["count"] = final_read->value["count"].get<int64_t>() - 1;
  expect_invalid(h, kCounterNoLostUpdates);
}

RC_GTEST_PROP(CheckerProperty, MissingLostEventIsCaught, ()) {
  SyntheticParams params = *params_gen();
  params.lost_holds = true;
  std::vector<Event> h = make_synthetic_history(params);
  // A `lost` that ended its hold and was followed by another process's grant (not a late
  // `lost` of an earlier token, nor one the worker went on after).
  auto lost = h.end();
  std::set<std::string> told;  // process/token already told once (v1 writes after `lost`)
  std::map<std::string, int64_t> holding;  // process/lock -> token of its latest grant
  for (auto it = h.begin(); it != h.end() && lost == h.end(); ++it) {
    if (is(*it, "acquire", EventType::kOk) && it->token)
      holding[it->process + "/" + it->lock] = *it->token;
    if (it->f != "lost") continue;
    if (!told.insert(it->process + "/" + std::to_string(it->token.value_or(-1))).second) continue;
    if (holding[it->process + "/" + it->lock] != it->token) continue;  // a late `lost`
    auto after = std::find_if(it + 1, h.end(), [&](const Event& e) {
      return (e.process == it->process && e.f != "lost") ||
             (is(e, "acquire", EventType::kOk) && e.lock == it->lock);
    });
    if (after != h.end() && after->process != it->process) lost = it;
  }
  RC_PRE(lost != h.end());
  h.erase(lost);
  expect_invalid(h, kLostSignalled);
}

RC_GTEST_PROP(CheckerProperty, NoAcquisitionAfterHealIsCaught, ()) {
  std::vector<Event> h = make_synthetic_history(*params_gen());
  const int64_t bound = synthetic_check_config().liveness_bound_ns;
  // The last heal (or the start): drop every grant within the bound after it.
  auto heal = std::find_if(h.rbegin(), h.rend(), [](const Event& e) { return e.f == "heal"; });
  const int64_t from = heal == h.rend() ? h.front().t_ns : heal->t_ns;
  size_t dropped = 0;
  for (Event& e : h) {
    if (is(e, "acquire", EventType::kOk) && e.t_ns >= from && e.t_ns <= from + bound) {
      e.f = "noop";
      ++dropped;
    }
  }
  RC_PRE(dropped > 0);
  expect_invalid(h, kLivenessRecovery);
}

// Finding 3: without final reads the fenced resources and the counter are unknown, not valid.
RC_GTEST_PROP(CheckerProperty, MissingFinalReadIsUnknown, ()) {
  SyntheticParams params = *params_gen();
  params.final_reads = false;
  std::vector<Event> h = make_synthetic_history(params);
  Verdict verdict = check(h, synthetic_check_config());
  for (std::string_view property : {kExclusionFenced, kCounterNoLostUpdates}) {
    const PropertyResult* result = verdict.find(property);
    RC_ASSERT(result != nullptr);
    if (result->outcome != Outcome::kUnknown && result->outcome != Outcome::kNotApplicable)
      RC_FAIL(std::string(property) + ": " + describe(verdict));
  }
}

// Finding 2: an accepted fenced write dropped from the final read (v2 list and count) while an
// indeterminate write shows applied: the count bound alone would absorb it.
RC_GTEST_PROP(CheckerProperty, LostFencedWriteBesideAnAppliedIndeterminateIsCaught, ()) {
  SyntheticParams params = *params_gen();
  params.fenced = true;
  params.vocabulary = 2;
  std::vector<Event> h = make_synthetic_history(params);
  auto final_read = std::find_if(h.begin(), h.end(), [](const Event& e) {
    return e.f == "final" && e.value.contains("writes") && !e.value["writes"].empty();
  });
  RC_PRE(final_read != h.end());
  // The id of every acknowledged write (the id is on the invoke).
  std::set<std::string> acknowledged;
  std::map<std::string, std::string> last_id;  // process -> id of its last write invoke
  for (const Event& e : h) {
    if (e.f != "write") continue;
    if (e.type == EventType::kInvoke) last_id[e.process] = e.value.value("id", "");
    if (e.type == EventType::kOk) acknowledged.insert(last_id[e.process]);
  }
  nlohmann::json& writes = final_read->value["writes"];
  auto victim = std::find_if(writes.begin(), writes.end(), [&](const nlohmann::json& w) {
    return acknowledged.count(w["id"].get<std::string>()) > 0;
  });
  RC_PRE(victim != writes.end());
  writes.erase(victim);
  final_read->value["count"] = final_read->value["count"].get<int64_t>() - 1;
  expect_invalid(h, kExclusionFenced);
}

// Finding 1b: two acknowledged counter writes of one value (both read the same version).
RC_GTEST_PROP(CheckerProperty, DuplicateCounterValueIsCaught, ()) {
  SyntheticParams params = *params_gen();
  params.counter = true;
  std::vector<Event> h = make_synthetic_history(params);
  std::vector<size_t> acked;  // counter write ok events
  for (size_t i = 0; i < h.size(); ++i)
    if (is(h[i], "write", EventType::kOk) && h[i].value.value("resource", "") == "counter")
      acked.push_back(i);
  RC_PRE(acked.size() >= 2);
  const int64_t first = h[acked[0]].value["count"].get<int64_t>();
  for (size_t i = acked[0] + 1; i <= acked[1]; ++i) {  // the second write's invoke and ok
    if (h[i].f == "write" && h[i].value.value("resource", "") == "counter") {
      h[i].value["count"] = first;
      if (h[i].value.contains("read")) h[i].value["read"] = first - 1;
    }
  }
  expect_invalid(h, kCounterNoLostUpdates);
}

// Finding 5: a grant whose acquire spanned another process's grant gets a token below that
// grant's (tokens scaled by 10 so the new token is unique and above every earlier grant).
RC_GTEST_PROP(CheckerProperty, LowerTokenAcrossAGrantIsCaught, ()) {
  std::vector<Event> h = make_synthetic_history(*params_gen());
  for (Event& e : h)
    if (e.token) *e.token *= 10;
  // A grant (ok at index g) of process p whose invoke came before another process's grant of
  // the same lock: the latest such grant's token minus 5.
  std::optional<std::pair<size_t, int64_t>> target;
  std::map<std::string, size_t> invoked;  // process -> its pending acquire invoke
  for (size_t i = 0; i < h.size() && !target; ++i) {
    if (is(h[i], "acquire", EventType::kInvoke)) invoked[h[i].process] = i;
    if (!is(h[i], "acquire", EventType::kOk) || !invoked.count(h[i].process)) continue;
    for (size_t j = invoked[h[i].process] + 1; j < i; ++j) {
      if (is(h[j], "acquire", EventType::kOk) && h[j].lock == h[i].lock &&
          h[j].process != h[i].process && h[j].token)
        target = std::pair{i, *h[j].token - 5};
    }
  }
  RC_PRE(target.has_value());
  h[target->first].token = target->second;
  expect_invalid(h, kTokensMonotonic);
}

// Finding 6a (v1): a worker told `lost` goes on writing with its token; another process's
// grant moved to just after the `lost` overlaps those writes.
RC_GTEST_PROP(CheckerProperty, GrantDuringWritesAfterLostIsCaught, ()) {
  SyntheticParams params = *params_gen();
  params.vocabulary = 1;
  params.fenced = true;
  std::vector<Event> h = make_synthetic_history(params);
  for (size_t i = 0; i + 1 < h.size(); ++i) {
    const Event lost = h[i];
    if (lost.f != "lost" || h[i + 1].process != lost.process || h[i + 1].f != "write" ||
        h[i + 1].token != lost.token)
      continue;
    auto grant = std::find_if(h.begin() + static_cast<long>(i), h.end(), [&](const Event& e) {
      return is(e, "acquire", EventType::kOk) && e.lock == lost.lock && e.process != lost.process;
    });
    if (grant == h.end()) continue;
    Event ok = *grant;
    ok.t_ns = lost.t_ns;
    h.erase(grant);
    h.insert(h.begin() + static_cast<long>(i) + 1, ok);
    expect_invalid(h, kExclusionStrict);
    return;
  }
  RC_DISCARD("no write after lost");
}

// Finding 6c: a late `lost` of an earlier token must not end the current hold: with the hold's
// release removed, the next process's grant overlaps it.
RC_GTEST_PROP(CheckerProperty, LateLostDoesNotEndTheHold, ()) {
  std::vector<Event> h = make_synthetic_history(*params_gen());
  std::map<std::string, int64_t> holding;  // process/lock -> token of its current grant
  std::set<std::string> told;              // process/lock told `lost` of the current token
  for (size_t i = 0; i < h.size(); ++i) {
    const std::string key = h[i].process + "/" + h[i].lock;
    if (is(h[i], "acquire", EventType::kOk) && h[i].token) {
      holding[key] = *h[i].token;
      told.erase(key);
    }
    if (h[i].f == "lost" && holding.count(key) && holding[key] == h[i].token) told.insert(key);
    if (h[i].f != "lost" || !holding.count(key) || holding[key] == h[i].token) continue;
    if (told.count(key)) continue;  // the hold already ended at its own `lost`
    const int64_t current = holding[key];
    auto release = std::find_if(h.begin() + static_cast<long>(i), h.end(), [&](const Event& e) {
      return e.process == h[i].process && is(e, "release", EventType::kInvoke) &&
             e.lock == h[i].lock && e.token == current;
    });
    if (release == h.end()) continue;
    auto other = std::find_if(release, h.end(), [&](const Event& e) {
      return is(e, "acquire", EventType::kOk) && e.lock == h[i].lock;
    });
    if (other == h.end() || other->process == h[i].process) continue;
    release->f = "noop";
    expect_invalid(h, kExclusionStrict);
    return;
  }
  RC_DISCARD("no late lost followed by a takeover");
}

// Finding 4d (soundness): the harness stops the workers inside the liveness bound; with the
// last grant removed, the stopped waiters were stopped, not starved: never invalid.
RC_GTEST_PROP(CheckerProperty, StopInsideTheBoundIsNotAStall, ()) {
  SyntheticParams params = *params_gen();
  params.stop_in_bound = true;
  std::vector<Event> h = make_synthetic_history(params);
  auto last_grant = std::find_if(h.rbegin(), h.rend(),
                                 [](const Event& e) { return is(e, "acquire", EventType::kOk); });
  RC_PRE(last_grant != h.rend());
  last_grant->f = "noop";
  Verdict verdict = check(h, synthetic_check_config());
  const PropertyResult* result = verdict.find(kLivenessRecovery);
  RC_ASSERT(result != nullptr);
  if (result->outcome == Outcome::kInvalid) RC_FAIL(describe(verdict));
}

}  // namespace
}  // namespace locklab
