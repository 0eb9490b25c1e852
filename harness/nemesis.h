// The nemesis: a plan of fault windows (fixed in the scenario, or drawn from a seeded random
// mix) and the faults themselves. Every fault start is a history event (process "nemesis",
// f = the fault kind, value.window = its id, value.targets) and every heal one too (f "heal",
// the same window id), so the checkers can attribute anomalies to the faults active then.
//
// Adding a fault means: a Fault subclass (nemesis_faults.cpp for worker and process faults,
// nemesis_partitions.cpp for network partitions, nemesis_replset.cpp for step-down, freeze,
// kill-member, clocks and the divergence sequence), its name, target kind and parameter keys in
// scenario_faults.cpp, and, if it needs a new lever on the cluster, a member of FaultContext.
//
// Thread rules: the harness's main thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "history.h"
#include "scenario.h"

namespace locklab {

class Cluster;
class Network;
class WorkerPool;

// The levers faults pull. `network` is null on the loopback backend.
struct FaultContext {
  Cluster& cluster;
  WorkerPool& workers;
  Network* network = nullptr;
};

// One fault: begin() applies it, heal() undoes it. Both throw std::runtime_error naming what
// failed; heal() is called exactly once after a begin() that returned. tick() is called on
// every nemesis tick in between (for faults that act repeatedly, e.g. continuous step-downs);
// what it returns, unless null, is recorded as a history event of the window. detail() is
// added to the window's start event (who the primary was, the sides of a partition...).
class Fault {
 public:
  virtual ~Fault() = default;
  virtual void begin(FaultContext& context) = 0;
  virtual void heal(FaultContext& context) = 0;
  virtual nlohmann::json tick(FaultContext& /*context*/, int64_t /*window_elapsed_ms*/) {
    return nullptr;
  }
  virtual nlohmann::json detail() const { return nullptr; }
};

// Makes the fault for a kind from known_faults(). `target` is already resolved: "w2", one or
// more members "m0" / "m1,m2", or "primary" for the faults that act on the whole set.
// Throws std::invalid_argument for an unknown kind.
std::unique_ptr<Fault> make_fault(const std::string& kind, const std::string& target,
                                  const nlohmann::json& params);

// One window of the plan, relative to the start of the workload.
struct PlannedFault {
  int64_t at_ms = 0;
  int64_t duration_ms = 0;
  std::string fault;
  std::string target;  // "w2", "m0", or "holder" (resolved when the window opens)
  nlohmann::json params = nlohmann::json::object();
};

// The plan: the scenario's fixed windows plus the random mix drawn with `seed`, ordered by
// at_ms. "random" targets are resolved here (so the seed reproduces them). Random windows do
// not overlap each other and end by `run_ms`. Pure function.
std::vector<PlannedFault> plan_faults(const Scenario& scenario, int64_t run_ms, uint64_t seed);

nlohmann::json to_json(const PlannedFault& fault);

class Nemesis {
 public:
  // `holder` returns a worker currently holding a lock, or "" when none is known.
  Nemesis(std::vector<PlannedFault> plan, FaultContext context, HistoryWriter& history,
          std::function<std::string()> holder, uint64_t seed);
  ~Nemesis();

  // Opens the windows due at `elapsed_ms` and heals the ones that have ended.
  void tick(int64_t elapsed_ms);
  // Heals every active fault now (end of the run, or teardown). Never throws.
  void heal_all();
  int active() const { return static_cast<int>(active_.size()); }
  // True when every planned window has opened and been healed.
  bool finished() const { return next_ == plan_.size() && active_.empty(); }

 private:
  struct Window {
    int id = 0;
    PlannedFault planned;
    int64_t start_ms = 0;
    int64_t end_ms = 0;
    std::unique_ptr<Fault> fault;
  };
  std::vector<PlannedFault> plan_;
  FaultContext context_;
  HistoryWriter& history_;
  std::function<std::string()> holder_;
  std::mt19937_64 rng_;
  size_t next_ = 0;
  int next_window_id_ = 1;
  std::vector<Window> active_;

  void open(const PlannedFault& planned, int64_t elapsed_ms);
  void close(Window& window);
  std::string resolve_target(const PlannedFault& planned);
  void tick_window(Window& window, int64_t elapsed_ms);
};

}  // namespace locklab
