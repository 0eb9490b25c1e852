// Replica-set faults that act through the members themselves: step-down (once, or again at a
// cadence), freeze, kill and restart, clock skew and jumps, and the primary-divergence sequence.
// Commands are mongod's own (replSetStepDown, replSetFreeze: docs/mongodb-behaviour.md, Step-down
// commands), except the clock, which goes through Db::set_clock_offset (mongosimSetClockOffset, or
// faketime with --mongod).
#include <algorithm>
#include <stdexcept>
#include <utility>

#include "db/admin.h"
#include "db/db.h"
#include "nemesis/kinds.h"

namespace locklab {
namespace {

// Bound on waiting for the majority side to elect a new primary in primary-divergence.
constexpr int64_t kNewPrimaryWaitMs = 20'000;
// Bound on waiting for a restarted member to answer before its heal is called failed.
constexpr int64_t kMemberBackWaitMs = 20'000;
// mongod's default secondaryCatchUpPeriodSecs; it must stay below stepDownSecs.
constexpr int64_t kCatchUpSecsMax = 10;

// Lets every member stand for election again: replSetFreeze 0 also ends the wait a
// replSetStepDown imposed on the member it stepped down. A primary refuses it; that is fine.
// Restarts a killed member and waits until it answers: the kill is over only then.
void restart_and_wait(Db& db, int member) {
  db.restart_member(member);
  if (!db.wait_answering(member, kMemberBackWaitMs)) {
    throw std::runtime_error(member_role(member) + " restarted but did not answer within " +
                             std::to_string(kMemberBackWaitMs) + " ms");
  }
}

// Runs each step of a heal even when an earlier one failed; throws every failure together.
class HealErrors {
 public:
  template <typename Step>
  void attempt(Step step) {
    try {
      step();
    } catch (const std::exception& e) {
      text_ += (text_.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  void throw_if_any() const {
    if (!text_.empty()) throw std::runtime_error(text_);
  }

 private:
  std::string text_;
};

void unfreeze_all(Db& db) {
  for (int m = 0; m < db.size(); ++m) {
    if (db.running(m)) db.try_command(m, "admin", {{"replSetFreeze", 0}});
  }
}

class StepDown : public Fault {
 public:
  explicit StepDown(const nlohmann::json& params)
      : secs_(params.value("step_down_secs", int64_t{5})),
        cadence_ms_(params.value("cadence_ms", int64_t{0})),
        force_(params.value("force", false)) {}
  void begin(FaultContext& c) override {
    const nlohmann::json event = step_down(c);
    if (event.contains("error")) throw std::runtime_error(event["error"].get<std::string>());
    detail_ = event;
    next_ms_ = cadence_ms_;
  }
  nlohmann::json tick(FaultContext& c, int64_t window_elapsed_ms) override {
    if (cadence_ms_ == 0 || window_elapsed_ms < next_ms_) return nullptr;
    next_ms_ = window_elapsed_ms + cadence_ms_;
    return step_down(c);
  }
  void heal(FaultContext& c) override { unfreeze_all(c.db); }
  nlohmann::json detail() const override { return detail_; }

 private:
  int64_t secs_;
  int64_t cadence_ms_;
  bool force_;
  int64_t next_ms_ = 0;
  nlohmann::json detail_;

  nlohmann::json step_down(FaultContext& c) {
    const int p = c.db.primary();
    if (p < 0) return {{"action", "step-down"}, {"error", "no primary to step down"}};
    const nlohmann::ordered_json command = {
        {"replSetStepDown", secs_},
        {"secondaryCatchUpPeriodSecs", std::min(secs_ - 1, kCatchUpSecsMax)},
        {"force", force_}};
    const nlohmann::json reply = c.db.try_command(p, "admin", command);
    nlohmann::json event = {{"action", "step-down"}, {"primary", member_role(p)}};
    if (!reply_ok(reply)) event["error"] = reply.value("errmsg", reply.dump());
    return event;
  }
};

// replSetFreeze on secondaries for the window (they will not stand for election); 0 on heal.
class Freeze : public Fault {
 public:
  explicit Freeze(const std::string& target) : members_(member_indices(target)) {}
  void begin(FaultContext& c) override {
    for (int m : members_) {
      c.db.command(m, "admin", {{"replSetFreeze", freeze_secs_}});
      frozen_.push_back(m);
    }
  }
  void heal(FaultContext& c) override {
    HealErrors errors;
    for (int m : frozen_) {
      if (c.db.running(m)) {
        errors.attempt([&] { c.db.command(m, "admin", {{"replSetFreeze", 0}}); });
      }
    }
    frozen_.clear();
    errors.throw_if_any();
  }

 private:
  std::vector<int> members_;
  std::vector<int> frozen_;
  int64_t freeze_secs_ = 3600;  // longer than any window; heal lifts it
};

// SIGKILL (no shutdown, nothing flushed); heal restarts it on the same dbpath (with restart
// false, never: the members stay down). All or none: a begin that fails part-way restarts the
// members it killed before the failure is reported, since a failed begin is recorded as undone,
// whatever `restart` says (the undo is a heal, which for restart false restarts nothing).
class KillMember : public Fault {
 public:
  KillMember(const std::string& target, bool restart)
      : members_(member_indices(target)), restart_(restart) {}
  void begin(FaultContext& c) override {
    try {
      for (int m : members_) {
        c.db.kill_member(m);
        killed_.push_back(m);
      }
    } catch (const std::exception& e) {
      restart_all_ = true;  // the undo (heal) restarts them whatever `restart` says
      try {
        heal(c);
      } catch (const std::exception& back) {
        throw std::runtime_error(std::string(e.what()) + "; and could not restart: " + back.what());
      }
      throw;
    }
  }
  void heal(FaultContext& c) override {
    if (!restart_ && !restart_all_) return;
    HealErrors errors;
    std::vector<int> still;
    for (int m : killed_) {
      bool done = false;
      errors.attempt([&] {
        restart_and_wait(c.db, m);
        done = true;
      });
      if (!done) still.push_back(m);
    }
    killed_ = std::move(still);  // a failed undo is tried again by the nemesis's heal
    errors.throw_if_any();
  }

 private:
  std::vector<int> members_;
  bool restart_;
  bool restart_all_ = false;  // set by a failed begin
  std::vector<int> killed_;
};

// A member's wall clock off by offset_ms for the window (skew), or moved by jump_ms and left
// there (jump: the clock does not come back on heal; a later jump moves it again).
class Clock : public Fault {
 public:
  Clock(const std::string& target, int64_t delta_ms, bool jump)
      : members_(member_indices(target)), delta_ms_(delta_ms), jump_(jump) {}
  // All members or none: a member that cannot take the offset (killed, unreachable) puts back
  // the ones already moved before the failure is reported, since a failed begin is recorded
  // as undone (and a jump's heal moves nothing back). One that cannot be put back stays in
  // stranded_, which the undo (heal) tries again and reports.
  void begin(FaultContext& c) override {
    try {
      for (int m : members_) {
        const int64_t base = jump_ ? c.db.clock_offset(m) : 0;
        previous_.push_back({m, c.db.set_clock_offset(m, base + delta_ms_)});
        detail_[member_role(m)] = base + delta_ms_;
      }
    } catch (const std::exception& e) {
      stranded_ = std::move(previous_);
      previous_.clear();
      try {
        put_back_stranded(c);
      } catch (const std::exception& back) {
        throw std::runtime_error(std::string(e.what()) +
                                 "; and could not put back: " + back.what());
      }
      throw;
    }
  }
  void heal(FaultContext& c) override {
    HealErrors errors;
    errors.attempt([&] { put_back_stranded(c); });
    if (!jump_) {
      for (const auto& [m, offset_ms] : previous_) {
        if (c.db.running(m)) errors.attempt([&] { c.db.set_clock_offset(m, offset_ms); });
      }
      previous_.clear();
    }
    errors.throw_if_any();
  }
  nlohmann::json detail() const override { return {{"offset_ms", detail_}}; }

 private:
  std::vector<int> members_;
  int64_t delta_ms_;
  bool jump_;
  std::vector<std::pair<int, int64_t>> previous_;
  std::vector<std::pair<int, int64_t>> stranded_;  // moved by a failed begin, not yet put back
  nlohmann::json detail_ = nlohmann::json::object();

  // Puts back what a failed begin moved; what cannot be stays, and the error names it.
  void put_back_stranded(FaultContext& c) {
    std::vector<std::pair<int, int64_t>> still;
    HealErrors errors;
    for (const auto& [m, offset_ms] : stranded_) {
      bool done = false;
      errors.attempt([&, m = m, offset_ms = offset_ms] {
        c.db.set_clock_offset(m, offset_ms);
        done = true;
      });
      if (!done) still.push_back({m, offset_ms});
    }
    stranded_ = std::move(still);
    errors.throw_if_any();
  }
};

// The divergence sequence: cut the primary off from the other members (workers still reach
// it), move its clock, wait for the majority side to elect a new primary, kill that one. On
// heal: the partition goes, the killed member restarts, the old primary's clock comes back. Two
// histories now exist for the same term range; what the set keeps is rollback's business.
class PrimaryDivergence : public Fault {
 public:
  explicit PrimaryDivergence(const nlohmann::json& params)
      : clock_ms_(params.value("clock_ms", int64_t{0})) {}
  // A failure part-way leaves what was applied; the nemesis undoes it with heal().
  void begin(FaultContext& c) override {
    if (!c.db.partitions())
      throw std::runtime_error("primary-divergence needs a backend that can partition");
    old_ = c.db.primary();
    if (old_ < 0) throw std::runtime_error("no primary to isolate");
    for (int m = 0; m < c.db.size(); ++m) {
      if (m != old_) cuts_.push_back({member_role(old_), member_role(m)});
    }
    c.db.partitions()->cut(cuts_);
    if (clock_ms_ != 0) previous_offset_ms_ = c.db.set_clock_offset(old_, clock_ms_);
    clock_moved_ = clock_ms_ != 0;
    new_ = c.db.wait_for_primary(kNewPrimaryWaitMs, old_);
    if (new_ < 0) {
      throw std::runtime_error("the majority side elected no primary within " +
                               std::to_string(kNewPrimaryWaitMs) + " ms");
    }
    c.db.kill_member(new_);
    killed_ = true;
  }
  // Over only when the partition is gone, the killed member answers again and the old
  // primary's clock is back; every step is tried, and any failure fails the heal.
  void heal(FaultContext& c) override {
    HealErrors errors;
    // The clock comes back first, while the old primary is still cut off: it must not reach
    // the majority with its moved clock, however long the restart below takes (a container
    // start takes seconds on a loaded machine; a process start, milliseconds).
    if (clock_moved_ && c.db.running(old_)) {
      errors.attempt([&] { c.db.set_clock_offset(old_, previous_offset_ms_); });
    }
    clock_moved_ = false;
    errors.attempt([&] {
      const std::vector<Partitions::Cut> cuts = std::exchange(cuts_, {});
      if (c.db.partitions()) c.db.partitions()->uncut(cuts);
    });
    if (killed_) errors.attempt([&] { c.db.restart_member(new_); });
    if (killed_) {
      errors.attempt([&] {
        if (!c.db.wait_answering(new_, kMemberBackWaitMs)) {
          throw std::runtime_error(member_role(new_) + " restarted but did not answer within " +
                                   std::to_string(kMemberBackWaitMs) + " ms");
        }
      });
    }
    killed_ = false;
    errors.throw_if_any();
  }
  nlohmann::json detail() const override {
    return {{"old_primary", member_role(old_)},
            {"new_primary", new_ >= 0 ? member_role(new_) : ""},
            {"clock_ms", clock_ms_}};
  }

 private:
  int64_t clock_ms_;
  int old_ = -1;
  int new_ = -1;
  bool killed_ = false;
  bool clock_moved_ = false;
  int64_t previous_offset_ms_ = 0;
  std::vector<Partitions::Cut> cuts_;
};

}  // namespace

std::unique_ptr<Fault> make_replset_fault(FaultKind kind, const std::string& target,
                                          const nlohmann::json& params) {
  if (kind == FaultKind::kStepDown) return std::make_unique<StepDown>(params);
  if (kind == FaultKind::kFreeze) return std::make_unique<Freeze>(target);
  if (kind == FaultKind::kKillMember) {
    return std::make_unique<KillMember>(target, params.value("restart", true));
  }
  if (kind == FaultKind::kClockSkew) {
    return std::make_unique<Clock>(target, params.value("offset_ms", int64_t{0}), false);
  }
  if (kind == FaultKind::kClockJump) {
    return std::make_unique<Clock>(target, params.value("jump_ms", int64_t{0}), true);
  }
  if (kind == FaultKind::kPrimaryDivergence) return std::make_unique<PrimaryDivergence>(params);
  return nullptr;
}

}  // namespace locklab
