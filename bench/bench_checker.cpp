// Times check() on a synthetic valid history of about 1,000,000 events (issue 4: a history of
// that size must check in seconds). Not a test: run it and read the numbers.
#include <benchmark/benchmark.h>

#include "checker/checker.h"
#include "checker/synthetic.h"

namespace {

constexpr size_t kEventsTarget = 1'000'000;

const std::vector<locklab::Event>& history_of_about(size_t events) {
  static std::vector<locklab::Event> history;
  if (history.size() >= events) return history;
  locklab::SyntheticParams params;
  params.workers = 16;
  params.locks = 8;
  params.faults = 2000;
  params.holds = events / 10;  // about ten events per hold
  history = locklab::make_synthetic_history(params);
  while (history.size() < events) {  // top up if the estimate fell short
    params.holds += params.holds / 10 + 1;
    history = locklab::make_synthetic_history(params);
  }
  return history;
}

void BM_CheckMillionEvents(benchmark::State& state) {
  const auto& history = history_of_about(kEventsTarget);
  locklab::CheckConfig config = locklab::synthetic_check_config();
  for (auto _ : state) {
    locklab::Verdict verdict = locklab::check(history, config);
    if (verdict.overall != locklab::Outcome::kValid) state.SkipWithError("history not valid");
    benchmark::DoNotOptimize(verdict);
  }
  state.counters["events"] = static_cast<double>(history.size());
  state.counters["events_per_s"] = benchmark::Counter(
      static_cast<double>(history.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_CheckMillionEvents)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
