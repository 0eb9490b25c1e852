// locklab-synthetic-run DIR EVENTS [WORKERS]: writes DIR/history.jsonl, a valid synthetic
// history (checker/synthetic.h) of about EVENTS events over WORKERS workers (default 32), so
// `locklab check DIR` renders the reports of a run of that size. The report load-time
// measurement (results/report-load.md) uses it for its 100k and 1M-event runs.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>

#include "checker/history.h"
#include "checker/synthetic.h"

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: %s DIR EVENTS [WORKERS]\n", argv[0]);
    return 2;
  }
  try {
    const std::string dir = argv[1];
    const long events = std::stol(argv[2]);
    const int workers = argc == 4 ? std::stoi(argv[3]) : 32;
    if (events < 100 || events > 50'000'000 || workers < 1 || workers > 10'000)
      throw std::invalid_argument("EVENTS must be in [100, 5e7] and WORKERS in [1, 1e4]");
    locklab::SyntheticParams params;
    params.workers = workers;
    params.holds = 20;
    params.faults = 0;
    // Its lost holds heal only at the end, so every one would stay an open window: a run
    // with a few windows, healed in turn, is what a real history looks like.
    params.lost_holds = false;
    // Calibrate events per hold on a small history, then scale.
    const double per_hold =
        static_cast<double>(locklab::make_synthetic_history(params).size()) / 20.0;
    params.holds = static_cast<size_t>(static_cast<double>(events) / per_hold);
    params.faults = static_cast<int>(std::clamp<size_t>(params.holds / 5'000, 2, 100));
    std::filesystem::create_directories(dir);
    std::filesystem::remove(dir + "/history.jsonl");
    locklab::HistoryWriter writer(dir + "/history.jsonl");
    size_t written = 0;
    for (locklab::Event& event : locklab::make_synthetic_history(params)) {
      writer.append(std::move(event));
      ++written;
    }
    std::printf("%s/history.jsonl: %zu events, %zu holds, %d workers\n", dir.c_str(), written,
                params.holds, workers);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "locklab-synthetic-run: %s\n", e.what());
    return 2;
  }
}
