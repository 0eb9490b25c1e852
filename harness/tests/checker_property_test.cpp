// RapidCheck: generated valid histories check valid on every property; each mutator injects
// one violation class and the named property must come out invalid.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "checker.h"
#include "checker_synthetic.h"

namespace locklab {
namespace {

rc::Gen<SyntheticParams> params_gen() {
  return rc::gen::build<SyntheticParams>(
      rc::gen::set(&SyntheticParams::seed, rc::gen::arbitrary<uint64_t>()),
      rc::gen::set(&SyntheticParams::workers, rc::gen::inRange(2, 6)),
      rc::gen::set(&SyntheticParams::locks, rc::gen::inRange(1, 4)),
      rc::gen::set(&SyntheticParams::holds, rc::gen::inRange<size_t>(1, 60)),
      rc::gen::set(&SyntheticParams::faults, rc::gen::inRange(0, 5)),
      rc::gen::set(&SyntheticParams::fenced, rc::gen::arbitrary<bool>()),
      rc::gen::set(&SyntheticParams::counter, rc::gen::arbitrary<bool>()),
      rc::gen::set(&SyntheticParams::lost_holds, rc::gen::arbitrary<bool>()));
}

std::string describe(const Verdict& verdict) {
  std::string text;
  for (const PropertyResult& result : verdict.properties) {
    text += result.property + "=" + std::string(to_string(result.outcome)) + " ";
    if (!result.violations.empty()) text += "(" + result.violations[0].message + ") ";
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
  final_read->value["count"] = final_read->value["count"].get<int64_t>() - 1;
  expect_invalid(h, kCounterNoLostUpdates);
}

RC_GTEST_PROP(CheckerProperty, MissingLostEventIsCaught, ()) {
  SyntheticParams params = *params_gen();
  params.lost_holds = true;
  std::vector<Event> h = make_synthetic_history(params);
  auto lost = std::find_if(h.begin(), h.end(), [](const Event& e) { return e.f == "lost"; });
  RC_PRE(lost != h.end());
  // Was another process granted the lock afterwards? Only then is the loss observable.
  auto next = std::find_if(lost, h.end(), [&](const Event& e) {
    return is(e, "acquire", EventType::kOk) && e.lock == lost->lock;
  });
  const bool taken_over = next != h.end() && next->process != lost->process;
  RC_PRE(taken_over);
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

}  // namespace
}  // namespace locklab
