#include "run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "apm_pool.h"
#include "clock.h"
#include "figures.h"
#include "floor.h"
#include "hand_over_floor.h"
#include "holds_file.h"
#include "machine.h"
#include "server.h"
#include "stats.h"

namespace lockbench {
namespace {

using Json = nlohmann::ordered_json;

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return text;
}

std::string minutes(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%dm%02ds", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return text;
}

Json header(const Config& c, const std::vector<CellSpec>& plan) {
  Json strategies = Json::array();
  for (const Strategy& s : lockbench::strategies()) {
    strategies.push_back({{"name", s.name},
                          {"formula", s.formula},
                          {"available", s.backoff.has_value()},
                          {"unavailable", s.unavailable}});
  }
  Json picked = Json::array();
  for (const Strategy* s : c.axes.strategies) picked.push_back(s->name);
  Json modes = Json::array();
  for (Mode m : c.axes.modes) modes.push_back(mode_name(m));
  const RunSettings& s = c.settings;
  return {{"tool", "lockbench"},
          {"format", 1},
          {"command", c.command_line},
          {"machine", machine_info()},
          {"load_average_start", load_average()},
          {"started_at", utc_now()},
          {"done", false},
          {"settings",
           {{"target", c.uri.empty() ? "mongosim" : "--uri"},
            {"database", s.database},
            {"gap_ms", s.gap_ms},
            {"busy_wait_min_ms", s.busy_wait_min_ms},
            {"busy_wait_max_ms", s.busy_wait_max_ms},
            {"expiry_ms", s.expiry_ms},
            {"seconds_per_cell", s.seconds_per_cell},
            {"lock_choice", "round-robin: contender c's j-th acquire goes to lock (c + j) mod K"},
            {"cells_planned", plan.size()}}},
          {"axes",
           {{"strategies", picked},
            {"contention", c.axes.contention},
            {"holds_ms", c.axes.holds_ms},
            {"members", c.axes.members},
            {"modes", modes},
            {"locks", c.axes.locks},
            {"slices", c.axes.slices},
            {"quick", c.axes.quick}}},
          {"strategies", strategies},
          {"floors", Json::array()},
          {"hand_over_floors", Json::array()},
          {"cells", Json::array()}};
}

void write_json(const std::string& dir, const Json& doc) {
  const std::string path = dir + "/lockbench.json";
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial);
    out << doc.dump(1) << '\n';
    if (!out) throw std::runtime_error("cannot write " + partial);
  }
  std::filesystem::rename(partial, path);
}

Json floor_json(const FloorResult& f, int members) {
  return {{"target", f.target}, {"members", members},  {"samples", f.samples},
          {"p50_ms", f.p50_ms}, {"p90_ms", f.p90_ms},  {"p99_ms", f.p99_ms},
          {"max_ms", f.max_ms}, {"mean_ms", f.mean_ms}};
}

Json quantiles_json(std::vector<double> samples, bool p90) {
  std::sort(samples.begin(), samples.end());
  Json j = {{"p50", quantile(samples, 0.50)}};
  if (p90) j["p90"] = quantile(samples, 0.90);
  j["p99"] = quantile(samples, 0.99);
  j["max"] = samples.empty() ? 0.0 : samples.back();
  return j;
}

Json hand_over_floor_json(const HandOverFloor& h, double rtt_ms) {
  const double bound_ms =
      static_cast<double>(h.spec.contenders - 1) * (static_cast<double>(h.spec.hold_ms) + rtt_ms);
  const double longest_ms =
      h.waits_ms.empty() ? 0.0 : *std::max_element(h.waits_ms.begin(), h.waits_ms.end());
  return {{"members", h.spec.members},
          {"contenders", h.spec.contenders},
          {"hold_ms", h.spec.hold_ms},
          {"gap_ms", h.spec.gap_ms},
          {"seconds", h.spec.seconds},
          {"acquisitions", h.acquisitions},
          {"writes_sent", h.writes_sent},
          {"token_counted", h.token_counted},
          {"asks_written", h.spec.asks_written},
          {"asks_sent", h.asks_sent},
          {"asks_counted", h.asks_counted},
          {"add_up", h.add_up},
          {"fifo", h.fifo},
          {"turn_ms", quantiles_json(h.turns_ms, true)},
          {"wait_ms", quantiles_json(h.waits_ms, false)},
          {"fifo_bound_ms", bound_ms},
          {"longest_over_fifo", bound_ms > 0 ? Json(longest_ms / bound_ms) : Json(nullptr)}};
}

// One hand-over floor into doc["hand_over_floors"]; false when it did not add up or failed (a
// floor that could not be measured is reported, not fatal: the cells still run).
bool hand_over_floor(Json& doc, const std::string& uri, const RunSettings& settings,
                     const HandOverFloorSpec& spec, const FloorResult& floor) {
  const char* variant = spec.asks_written ? " (asks written)" : "";
  const std::string name = "lb-" + settings.run_id + "-hand-over-" + std::to_string(spec.members) +
                           "-" + std::to_string(spec.hold_ms) + (spec.asks_written ? "-asks" : "");
  try {
    const HandOverFloor h = measure_hand_over_floor(uri, settings.database, name, spec);
    Json j = hand_over_floor_json(h, floor.p50_ms);
    char ratio[32] = "n/a";
    if (!j["longest_over_fifo"].is_null()) {
      std::snprintf(ratio, sizeof ratio, "%.2f", j["longest_over_fifo"].get<double>());
    }
    std::fprintf(stderr,
                 "lockbench: hand-over floor%s N=%d hold=%lldms: turn p50 %.3f ms, longest wait "
                 "%.1f ms = %s x FIFO%s\n",
                 variant, spec.contenders, static_cast<long long>(spec.hold_ms),
                 j["turn_ms"]["p50"].get<double>(), j["wait_ms"]["max"].get<double>(), ratio,
                 h.add_up && h.fifo ? "" : " (DOES NOT ADD UP)");
    doc["hand_over_floors"].push_back(std::move(j));
    return h.add_up && h.fifo;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lockbench: hand-over floor%s N=%d hold=%lldms: %s\n", variant,
                 spec.contenders, static_cast<long long>(spec.hold_ms), e.what());
    doc["hand_over_floors"].push_back({{"members", spec.members},
                                       {"contenders", spec.contenders},
                                       {"hold_ms", spec.hold_ms},
                                       {"asks_written", spec.asks_written},
                                       {"error", e.what()}});
    return false;
  }
}

// The hand-over floor (hand_over_floor.h) at every hold of this target's main-grid cells, with
// as many contenders as the targets name (fewer when the grid's largest is smaller):
// once as it is and once with each ask written. Returns false when one did not add up.
bool hand_over_floors(Json& doc, const std::string& uri, const RunSettings& settings,
                      const std::vector<CellSpec>& group, const FloorResult& floor) {
  std::set<int64_t> holds;
  int contenders = 1;
  for (const CellSpec& cell : group) {
    if (cell.plan != "main") continue;
    holds.insert(cell.hold_ms);
    contenders = std::max(contenders, cell.contenders);
  }
  bool ok = true;
  for (const int64_t hold_ms : holds) {
    for (const bool asks_written : {false, true}) {
      const HandOverFloorSpec spec{std::min(contenders, kHandOverFloorContenders),
                                   hold_ms,
                                   settings.gap_ms,
                                   settings.seconds_per_cell,
                                   group.front().members,
                                   asks_written};
      ok = hand_over_floor(doc, uri, settings, spec, floor) && ok;
    }
  }
  return ok;
}

void progress(size_t done, size_t total_cells, double elapsed_s, const Json& cell) {
  const double left_s =
      elapsed_s / static_cast<double>(done) * static_cast<double>(total_cells - done);
  const Json& h = cell["handoff_ms"];
  const Json& cpa = cell["server"]["commands_per_acquisition"];
  std::fprintf(
      stderr,
      "lockbench: [%zu/%zu %s, ~%s left] %s %s %s N=%d K=%d hold=%lldms m=%d: "
      "%.1f acq/s, handoff p99 %.1f ms, %.2f cmds/acq, Jain %.2f%s\n",
      done, total_cells, minutes(elapsed_s).c_str(), minutes(left_s).c_str(),
      cell["plan"].get<std::string>().c_str(), cell["strategy"].get<std::string>().c_str(),
      cell["mode"].get<std::string>().c_str(), cell["contenders"].get<int>(),
      cell["locks"].get<int>(), static_cast<long long>(cell["hold_ms"].get<int64_t>()),
      cell["members"].get<int>(), cell["throughput"]["acquisitions_per_s"].get<double>(),
      h["p99"].is_null() ? 0.0 : h["p99"].get<double>(), cpa.is_null() ? 0.0 : cpa.get<double>(),
      cell["fairness"]["jain_index"].get<double>(), cell["errors"].empty() ? "" : " (ERRORS)");
}

}  // namespace

int run(const Config& config) {
  const std::vector<CellSpec> plan = build_plan(config.axes);
  RunSettings settings = config.settings;
  settings.run_id = std::to_string(::getpid()) + "x" + std::to_string(std::time(nullptr));
  settings.self_exe = std::filesystem::read_symlink("/proc/self/exe");
  std::filesystem::create_directories(config.out);
  settings.work_dir = config.out + "/contenders";
  if (config.holds) std::filesystem::remove_all(config.out + "/holds");  // no earlier run's files
  std::filesystem::create_directories(settings.work_dir);
  Json doc = header(config, plan);
  std::fprintf(stderr, "lockbench: %zu cells of %.1f s (about %s of measurement)\n", plan.size(),
               settings.seconds_per_cell,
               minutes(settings.seconds_per_cell * static_cast<double>(plan.size())).c_str());
  const int64_t started_ns = monotonic_now_ns();
  int exit_code = 0;
  size_t next = 0;
  while (next < plan.size()) {
    const int members = plan[next].members;
    std::unique_ptr<Target> target =
        config.uri.empty() ? Target::start_mongosim(members) : Target::connect(config.uri);
    const std::string uri = target->client_uri("lockbench");
    const FloorResult floor = measure_floor(
        uri, settings.database, "lb-" + settings.run_id + "-floor-" + std::to_string(members),
        target->describe());
    doc["floors"].push_back(floor_json(floor, members));
    std::fprintf(stderr, "lockbench: %s: floor findAndModify p50 %.3f ms, p99 %.3f ms (%lld)\n",
                 floor.target.c_str(), floor.p50_ms, floor.p99_ms,
                 static_cast<long long>(floor.samples));
    prepare_server(uri, settings);
    const std::vector<CellSpec> group(
        plan.begin() + static_cast<std::ptrdiff_t>(next),
        std::find_if(plan.begin() + static_cast<std::ptrdiff_t>(next), plan.end(),
                     [members](const CellSpec& c) { return c.members != members; }));
    if (!hand_over_floors(doc, uri, settings, group, floor)) exit_code = 1;
    for (; next < plan.size() && plan[next].members == members; ++next) {
      const CellRaw raw = run_cell(*target, settings, plan[next]);
      Json cell = cell_figures(raw, floor, floor.p50_ms);
      if (config.holds) {
        const std::string failed = write_holds_file(config.out + "/holds", settings.run_id, raw);
        if (!failed.empty()) cell["errors"].push_back("--holds: " + failed);
      }
      if (!cell["errors"].empty() || !cell["counters"]["add_up"].get<bool>()) exit_code = 1;
      doc["cells"].push_back(cell);
      progress(next + 1, plan.size(),
               static_cast<double>(monotonic_now_ns() - started_ns) / kNsPerS, cell);
      write_json(config.out, doc);
    }
  }
  doc["done"] = true;
  doc["wall_s"] = static_cast<double>(monotonic_now_ns() - started_ns) / kNsPerS;
  doc["load_average_end"] = load_average();
  write_json(config.out, doc);
  std::filesystem::remove_all(settings.work_dir);
  std::fprintf(stderr, "lockbench: wrote %s/lockbench.json in %s\n", config.out.c_str(),
               minutes(doc["wall_s"].get<double>()).c_str());
  return exit_code;
}

}  // namespace lockbench
