// Random vs adaptive backoff under contention: N contender threads share one Provider (one
// client pool) and loop acquire → hold → release on one lock against a mongosim one-member
// replica set, for each backoff strategy in turn, in one run so the ratios are comparable.
//
//   bench_backoff [--contenders N] [--hold-ms H] [--gap-ms G] [--seconds S] [--min-ms A]
//                 [--max-ms B] [--out PREFIX]
//
// Reported per strategy: acquisitions/s, acquire wait p50/p99/max, findAndModify attempts per
// acquisition (the server load a waiting client causes, from serverStatus), and fairness (the
// fewest and most acquisitions of one contender). PREFIX.json and PREFIX.md are written when
// --out is given. Not a test: timing belongs here, not in pass/fail checks.
#include <mongolock/mongolock.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "testkit.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Config {
  int contenders = 8;
  int64_t hold_ms = 20;
  int64_t gap_ms = 5;  // work between a release and the next acquire
  int64_t seconds = 10;
  int64_t min_ms = 10;
  int64_t max_ms = 800;
  std::string out;
};

struct Result {
  std::string strategy;
  int64_t acquisitions = 0;
  double seconds = 0;
  double wait_p50_ms = 0, wait_p99_ms = 0, wait_max_ms = 0;
  double attempts_per_acquisition = 0;
  int64_t fewest = 0, most = 0;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "bench_backoff: %s\nusage: bench_backoff [--contenders N] [--hold-ms H] "
               "[--gap-ms G] [--seconds S] [--min-ms A] [--max-ms B] [--out PREFIX]\n",
               why.c_str());
  std::exit(2);
}

int64_t number(const std::string& flag, const char* text, int64_t lo, int64_t hi) {
  char* end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || v < lo || v > hi) {
    usage(flag + ": expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
          "], got '" + text + "'");
  }
  return v;
}

Config parse(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) usage("missing value for " + flag);
    const char* v = argv[++i];
    if (flag == "--contenders")
      c.contenders = static_cast<int>(number(flag, v, 1, 256));
    else if (flag == "--hold-ms")
      c.hold_ms = number(flag, v, 0, 10'000);
    else if (flag == "--gap-ms")
      c.gap_ms = number(flag, v, 0, 10'000);
    else if (flag == "--seconds")
      c.seconds = number(flag, v, 1, 3600);
    else if (flag == "--min-ms")
      c.min_ms = number(flag, v, 1, 60'000);
    else if (flag == "--max-ms")
      c.max_ms = number(flag, v, 1, 60'000);
    else if (flag == "--out")
      c.out = v;
    else
      usage("unknown flag " + flag);
  }
  if (c.min_ms > c.max_ms) usage("--min-ms must not exceed --max-ms");
  return c;
}

double percentile(std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  return sorted[static_cast<size_t>(q * static_cast<double>(sorted.size() - 1))];
}

Result run(const Config& config, mongolock::Backoff backoff, const std::string& uri,
           const locklab::testkit::MongosimNode& server) {
  mongolock::Options options;
  options.backoff = backoff;
  options.busy_wait_min_ms = config.min_ms;
  options.busy_wait_max_ms = config.max_ms;
  options.expiry_ms = 30'000;
  mongolock::Provider provider(uri, "bench", options);
  const std::string name = backoff == mongolock::Backoff::kRandom ? "random" : "adaptive";
  mongolock::Lock lock = provider.create_lock("contended-" + name);

  std::mutex mutex;
  std::vector<double> waits_ms;
  std::vector<int64_t> per_contender(static_cast<size_t>(config.contenders), 0);
  const int64_t attempts_before = server.command_total("findAndModify");
  const auto start = Clock::now();
  const auto stop_at = start + std::chrono::seconds(config.seconds);
  std::vector<std::thread> threads;
  for (int c = 0; c < config.contenders; ++c) {
    threads.emplace_back([&, c] {
      while (Clock::now() < stop_at) {
        auto asked = Clock::now();
        auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(stop_at - asked);
        std::optional<mongolock::Handle> held =
            lock.try_acquire(std::max(remaining, std::chrono::milliseconds(1)));
        if (!held) break;  // the run ended while waiting
        double waited = std::chrono::duration<double, std::milli>(Clock::now() - asked).count();
        std::this_thread::sleep_for(std::chrono::milliseconds(config.hold_ms));  // the work
        held->release();
        {
          std::lock_guard guard(mutex);
          waits_ms.push_back(waited);
          ++per_contender[static_cast<size_t>(c)];
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(config.gap_ms));
      }
    });
  }
  for (auto& t : threads) t.join();
  Result r;
  r.strategy = name;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.acquisitions = static_cast<int64_t>(waits_ms.size());
  std::sort(waits_ms.begin(), waits_ms.end());
  r.wait_p50_ms = percentile(waits_ms, 0.50);
  r.wait_p99_ms = percentile(waits_ms, 0.99);
  r.wait_max_ms = waits_ms.empty() ? 0 : waits_ms.back();
  // Every acquire attempt is one findAndModify; releases are updates and do not count here.
  const int64_t attempts = server.command_total("findAndModify") - attempts_before;
  r.attempts_per_acquisition =
      r.acquisitions > 0 ? static_cast<double>(attempts) / static_cast<double>(r.acquisitions) : 0;
  r.fewest = *std::min_element(per_contender.begin(), per_contender.end());
  r.most = *std::max_element(per_contender.begin(), per_contender.end());
  return r;
}

void write_outputs(const Config& c, const std::vector<Result>& results) {
  std::ofstream json(c.out + ".json");
  json << "{\n  \"contenders\": " << c.contenders << ", \"hold_ms\": " << c.hold_ms
       << ", \"gap_ms\": " << c.gap_ms << ", \"seconds\": " << c.seconds
       << ", \"busy_wait_min_ms\": " << c.min_ms << ", \"busy_wait_max_ms\": " << c.max_ms
       << ",\n  \"results\": [\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    json << "    {\"strategy\": \"" << r.strategy << "\", \"acquisitions\": " << r.acquisitions
         << ", \"acquisitions_per_s\": " << static_cast<double>(r.acquisitions) / r.seconds
         << ", \"wait_p50_ms\": " << r.wait_p50_ms << ", \"wait_p99_ms\": " << r.wait_p99_ms
         << ", \"wait_max_ms\": " << r.wait_max_ms
         << ", \"attempts_per_acquisition\": " << r.attempts_per_acquisition
         << ", \"fewest_per_contender\": " << r.fewest << ", \"most_per_contender\": " << r.most
         << "}" << (i + 1 < results.size() ? "," : "") << "\n";
  }
  json << "  ]\n}\n";
  std::ofstream md(c.out + ".md");
  md << "| strategy | acquisitions/s | wait p50 ms | wait p99 ms | wait max ms | attempts per "
        "acquisition | fewest / most per contender |\n|---|---|---|---|---|---|---|\n";
  for (const Result& r : results) {
    char line[256];
    std::snprintf(line, sizeof line, "| %s | %.1f | %.1f | %.1f | %.1f | %.2f | %lld / %lld |\n",
                  r.strategy.c_str(), static_cast<double>(r.acquisitions) / r.seconds,
                  r.wait_p50_ms, r.wait_p99_ms, r.wait_max_ms, r.attempts_per_acquisition,
                  static_cast<long long>(r.fewest), static_cast<long long>(r.most));
    md << line;
  }
}

// A one-member set rs0 as the lock library's tests start it; nullptr when the build has none.
std::unique_ptr<locklab::testkit::ReplicaSet> one_member_set() {
  if (locklab::testkit::mongosim_program().empty()) return nullptr;
  return std::make_unique<locklab::testkit::ReplicaSet>(locklab::testkit::SetOptions{
      .members = 1,
      .args = {"--bind_ip", "127.0.0.1", "--setParameter", "ttlMonitorSleepSecs=1"},
      .election_timeout_ms = 0,  // the server's own timers
      .heartbeat_interval_ms = 0});
}

}  // namespace

int main(int argc, char** argv) {
  Config config = parse(argc, argv);
  auto server = one_member_set();
  if (!server) {
    std::fprintf(stderr, "bench_backoff: this build has no mongosim\n");
    return 2;
  }
  const std::string uri = server->uri("appname=bench_backoff");
  std::vector<Result> results;
  for (auto backoff : {mongolock::Backoff::kRandom, mongolock::Backoff::kAdaptive}) {
    std::fprintf(stderr, "bench_backoff: %s backoff, %d contenders, %lld s...\n",
                 backoff == mongolock::Backoff::kRandom ? "random" : "adaptive", config.contenders,
                 static_cast<long long>(config.seconds));
    results.push_back(run(config, backoff, uri, server->member(0)));
  }
  std::printf("%-9s %12s %10s %10s %10s %10s %12s\n", "strategy", "acq/s", "p50 ms", "p99 ms",
              "max ms", "att/acq", "min/max");
  for (const Result& r : results) {
    std::printf("%-9s %12.1f %10.1f %10.1f %10.1f %10.2f %6lld/%-6lld\n", r.strategy.c_str(),
                static_cast<double>(r.acquisitions) / r.seconds, r.wait_p50_ms, r.wait_p99_ms,
                r.wait_max_ms, r.attempts_per_acquisition, static_cast<long long>(r.fewest),
                static_cast<long long>(r.most));
  }
  if (!config.out.empty()) write_outputs(config, results);
  return 0;
}
