// The nemesis: a plan of fault windows (fixed in the scenario, or drawn from a seeded random
// mix) and the faults themselves. Each window is recorded as it happens (process "nemesis",
// value.window = its id; vocabulary in checker/history.h):
//   <fault> invoke  the intent, written before any action (targets, planned duration);
//   <fault> ok      the fault is in force (begin() returned): targets, each target's role seen
//                   just before the action, how the target was selected, detail();
//   <fault> fail    begin() failed and what it had applied was undone (undone: true, no heal
//                   follows) or could not be resolved at all;
//   <fault> info    begin() failed and undoing failed too: the window stays, a heal follows;
//                   also a repeated action inside the window that failed (tick);
//   heal invoke / ok / fail   the heal, ok only once the fault is really over.
// So the checkers can attribute anomalies to the faults active then.
//
// Adding a fault means: its row in the fault-kind table (nemesis/fault_kind.h: name, target,
// members, what it needs of the backend, keys), a Fault subclass (nemesis/faults.cpp for worker
// and process faults, nemesis/partitions.cpp for network partitions, nemesis/replset.cpp for
// step-down, freeze, kill-member, clocks and the divergence sequence) and its case in
// make_fault; and, if it needs a new lever on the database, a method of Db (db/db.h) that each
// backend implements or refuses in supports().
//
// Thread rules: the harness's main thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "checker/history.h"
#include "run/scenario.h"

namespace locklab {

class Db;
class WorkerPool;

// The levers faults pull: the database (members, clocks, db.partitions(), null where the
// backend cannot partition) and the workers.
struct FaultContext {
  Db& db;
  WorkerPool& workers;
};

// One fault: begin() applies it, heal() undoes it. Both throw std::runtime_error naming what
// failed. heal() undoes exactly what begin() applied, even when begin() threw part-way, and
// throws when the fault is not over afterwards; it is called once after a begin() that
// returned, and once after one that threw (to undo), and again later only if that undo threw.
// tick() is called on every nemesis tick in between (for faults that act repeatedly, e.g.
// continuous step-downs); what it returns, unless null, is recorded as a history event of the
// window. detail() is added to the window's start event (who the primary was, the sides of a
// partition...).
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

// Makes the fault of a kind. `target` is already resolved: "w2", one or
// more members "m0" / "m1,m2", or "primary" for the faults that act on the whole set.
std::unique_ptr<Fault> make_fault(FaultKind kind, const std::string& target,
                                  const nlohmann::json& params);

// One window of the plan, relative to the start of the workload.
struct PlannedFault {
  int64_t at_ms = 0;
  int64_t duration_ms = 0;
  FaultKind fault = FaultKind::kPauseWorker;
  std::string target;  // "w2", "m0", or "holder" (resolved when the window opens)
  nlohmann::json params = nlohmann::json::object();
  // How the target is chosen: "fixed" (named in the scenario), "random" (drawn with the seed
  // when planning), "holder", "primary", "secondaries" (resolved when the window opens).
  std::string selection = "fixed";
};

// The plan: the scenario's fixed windows plus the random mix drawn with `seed`, ordered by
// at_ms. "random" targets are resolved here (so the seed reproduces them). Random windows do
// not overlap each other and end by `run_ms`. Pure function.
std::vector<PlannedFault> plan_faults(const Scenario& scenario, int64_t run_ms, uint64_t seed);

nlohmann::json to_json(const PlannedFault& fault);

// What the nemesis asks the run about the workers, from the history as it is now.
struct WorkerView {
  // A worker currently holding a lock, or "" when none is known.
  std::function<std::string()> holder;
  // "holder", "waiting" (an acquire pending) or "idle".
  std::function<std::string(const std::string& worker)> role;
};

class Nemesis {
 public:
  Nemesis(std::vector<PlannedFault> plan, FaultContext context, HistoryWriter& history,
          WorkerView workers, uint64_t seed);
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
  WorkerView view_;
  std::mt19937_64 rng_;
  size_t next_ = 0;
  int next_window_id_ = 1;
  std::vector<Window> active_;

  void open(const PlannedFault& planned, int64_t elapsed_ms);
  // Undoes a begin() that threw; true when nothing of it is left (no heal will follow).
  bool undo(Window& window, nlohmann::json& value);
  void close(Window& window);
  // The resolved target and how it was chosen.
  std::pair<std::string, std::string> resolve_target(const PlannedFault& planned);
  nlohmann::json roles(FaultKind fault, const std::string& target) const;
  void tick_window(Window& window, int64_t elapsed_ms);
  void record(EventType type, std::string_view f, nlohmann::json value);
};

}  // namespace locklab
