// Property (real processes, real TCP): whatever sequence of SIGKILL+restart (one member or the
// whole set), SIGSTOP/SIGCONT pauses, step-downs and primary isolations (a w:1 write that must
// be rolled back) hits a replica set with --dbpath, a write acknowledged with w:"majority" is
// never lost: once the faults heal, every member has it and all members hold the same data.
//
// The default suite runs a couple of short schedules against 3 members (fixed seed). With
// MONGOSIM_DURABILITY_TIER=long (ctest label `long`) it runs more and longer schedules, with
// fresh seeds, against 3 and 5 members.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "server/tests/sim_set.h"

namespace mongosim::testing {
namespace {

enum class FaultKind {
  kWrite,
  kKillRestart,
  kPause,
  kStepDown,
  kIsolatePrimary,
  kRestartAll,
  kDeposePrimary
};

struct Fault {
  FaultKind kind = FaultKind::kWrite;
  int member = 0;  // for kill/pause: an index, taken modulo the set size
};

std::ostream& operator<<(std::ostream& os, const Fault& f) {
  static const char* names[] = {"write",          "kill+restart", "pause",        "stepDown",
                                "isolatePrimary", "restartAll",   "deposePrimary"};
  return os << names[static_cast<int>(f.kind)] << "(" << f.member << ")";
}

bool long_tier() {
  const char* tier = std::getenv("MONGOSIM_DURABILITY_TIER");
  return tier != nullptr && std::string(tier) == "long";
}

const Document kMajority{{"w", V("majority")}, {"wtimeout", V(int32_t{5000})}};
constexpr auto kPrimaryWait = std::chrono::seconds(20);
constexpr const char* kPauseLine = "Fail point enabled: pausing";

class Schedule {
 public:
  explicit Schedule(SimSet& set) : set_(set) {}

  // One write attempt on whatever primary exists; remembered only if majority-acknowledged.
  void write() {
    int primary = -1;
    if (!poll_until(after(kPrimaryWait), [&] {
          primary = set_.primary();
          return primary >= 0;
        })) {
      return;  // no primary while faults are active: the write is not attempted
    }
    int id = next_id_++;
    auto reply = set_.insert(primary, Document{{"_id", V(id)}}, kMajority);
    if (reply_is_ok(reply) && !reply->has("writeErrors") && !reply->has("writeConcernError")) {
      acknowledged_.push_back(id);
    }
  }

  void apply(const Fault& f) {
    int m = f.member % set_.size();
    switch (f.kind) {
      case FaultKind::kWrite:
        write();
        return;
      case FaultKind::kKillRestart:
        set_.kill(m);
        write();
        set_.restart(m);
        return;
      case FaultKind::kPause:
        set_.pause(m);
        write();
        set_.resume(m);
        return;
      case FaultKind::kIsolatePrimary:
        isolate_primary();
        return;
      case FaultKind::kDeposePrimary:
        depose_primary(m);
        return;
      case FaultKind::kRestartAll:
        for (int i = 0; i < set_.size(); ++i) set_.kill(i);
        for (int i = 0; i < set_.size(); ++i) set_.restart(i);
        write();
        return;
      case FaultKind::kStepDown: {
        int primary = set_.primary();
        if (primary >= 0) {
          set_.command(primary,
                       Document{{"replSetStepDown", V(2)}, {"secondaryCatchUpPeriodSecs", V(1)}});
        }
        write();
        return;
      }
    }
  }

  // The primary loses every other member, takes a w:1 write that must later be rolled back (it
  // is never counted as acknowledged), is paused while the others elect a new primary that
  // takes a majority write, and then comes back.
  void isolate_primary() {
    int primary = set_.primary();
    if (primary < 0) return write();
    for (int i = 0; i < set_.size(); ++i) {
      if (i != primary) set_.pause(i);
    }
    set_.insert(primary, Document{{"_id", V(next_id_++)}}, Document{{"w", V(1)}});
    set_.pause(primary);
    for (int i = 0; i < set_.size(); ++i) {
      if (i != primary) set_.resume(i);
    }
    write();
    set_.resume(primary);
  }

  // The deposed-primary schedule: the primary A's w:1 writer is held between its writability
  // check and its oplog append (hangBeforeOplogAppend); another member B wins the next term;
  // the rest lag (paused) and nobody can fetch from B, so B's majority write can only be
  // acknowledged if A reports an optime of B's term; A's writer is released during that write,
  // in a later second (so what it appends sorts after B's write); then B dies and the others
  // elect without it. Commands to A may wait for the data lock while the writer is held (before
  // the fix it held it), so A is sent nothing but the release until then.
  void depose_primary(int pick) {
    int a = set_.primary();
    if (a < 0 || set_.size() < 3) return write();
    int b = (a + 1 + pick % (set_.size() - 1)) % set_.size();
    size_t pauses_before = pauses_logged(a);
    if (configure(a, "hangBeforeOplogAppend", V("alwaysOn")) < 0) return write();
    std::thread held([&, id = next_id_++] {
      set_.insert(a, Document{{"_id", V(id)}}, Document{{"w", V(1)}});  // never acknowledged
    });
    poll_until(after(kPrimaryWait), [&] { return pauses_logged(a) > pauses_before; });
    set_.command(b, Document{{"replSetStepUp", V(1)}});
    for (int i = 0; i < set_.size(); ++i) {
      if (i != a && i != b) set_.pause(i);
    }
    configure(b, "failCommand", V("alwaysOn"),
              Document{{"failCommands", V(bson::Array{V("replSetFetchOplog")})},
                       {"errorCode", V(int32_t{96})}});
    int id = next_id_++;
    std::thread writer([&] { write_on(b, id); });
    std::string id_json = bson::to_json(V(int32_t{id}));
    poll_until(after(kPrimaryWait), [&] {
      auto ids = set_.ids(b);
      return ids && std::find(ids->begin(), ids->end(), id_json) != ids->end();
    });
    wait_for_next_second();
    configure(a, "hangBeforeOplogAppend", V("off"));
    writer.join();
    held.join();
    set_.kill(b);
    for (int i = 0; i < set_.size(); ++i) set_.resume(i);
    write();
    set_.restart(b);
  }

  // How many times member i logged that an operation is held at a pausing fail point.
  size_t pauses_logged(int i) {
    std::string log = set_.member(i).log_text();
    size_t n = 0;
    for (size_t at = log.find(kPauseLine); at != std::string::npos;
         at = log.find(kPauseLine, at + 1)) {
      ++n;
    }
    return n;
  }

  // configureFailPoint; returns the activation count before the call, or -1 without an answer.
  int64_t configure(int i, const std::string& name, bson::Value mode, Document data = {}) {
    auto reply = set_.command(i, Document{{"configureFailPoint", V(name)},
                                          {"mode", std::move(mode)},
                                          {"data", V(std::move(data))}});
    if (!reply_is_ok(reply)) return -1;
    return static_cast<int64_t>(reply->get("count")->number_as_double());
  }

  // One majority write of `id` on member i; remembered only if acknowledged.
  void write_on(int i, int id) {
    auto reply = set_.insert(i, Document{{"_id", V(id)}}, kMajority);
    if (reply_is_ok(reply) && !reply->has("writeErrors") && !reply->has("writeConcernError")) {
      acknowledged_.push_back(id);
    }
  }

  // After the faults: every member has every acknowledged write. Returns the ids missing on
  // some member (empty when the property holds).
  std::string missing_after_heal() {
    std::set<std::string> wanted;
    for (int id : acknowledged_) wanted.insert(bson::to_json(V(int32_t{id})));
    std::string missing;
    std::set<std::string> first;
    bool converged = poll_until(after(kDurableConvergeTimeout), [&] {
      missing.clear();
      first.clear();
      for (int i = 0; i < set_.size(); ++i) {
        auto ids = set_.ids(i);
        if (!ids) {
          missing = "member " + std::to_string(i) + " does not answer";
          return false;
        }
        std::set<std::string> present(ids->begin(), ids->end());
        for (const auto& w : wanted) {
          if (!present.contains(w)) missing += "member " + std::to_string(i) + " lacks " + w + "; ";
        }
        // Converged means identical: a rolled-back write must be gone everywhere.
        if (i > 0 && present != first) missing += "member " + std::to_string(i) + " differs; ";
        if (i == 0) first = present;
      }
      return missing.empty();
    });
    return converged ? std::string() : missing;
  }

  size_t acknowledged() const { return acknowledged_.size(); }

 private:
  SimSet& set_;
  int next_id_ = 0;
  std::vector<int> acknowledged_;
};

rc::Gen<Fault> fault_gen() {
  return rc::gen::build<Fault>(
      rc::gen::set(&Fault::kind,
                   rc::gen::element(FaultKind::kWrite, FaultKind::kKillRestart, FaultKind::kPause,
                                    FaultKind::kStepDown, FaultKind::kIsolatePrimary,
                                    FaultKind::kRestartAll, FaultKind::kDeposePrimary)),
      rc::gen::set(&Fault::member, rc::gen::inRange(0, 5)));
}

// Runs the property with explicit parameters: cases and schedule length are bounded here,
// because every case starts real processes.
void check_majority_writes_survive(int members, int cases, int max_faults) {
  rc::detail::TestParams params;
  params.maxSuccess = cases;
  params.disableShrinking = !long_tier();  // each shrink step restarts a whole set
  params.seed = long_tier() ? static_cast<uint64_t>(std::random_device{}()) : 1;
  auto property = [members, max_faults] {
    // The length does not grow with RapidCheck's size, so even the first case has faults.
    int count = *rc::gen::inRange(1, max_faults + 1);
    auto faults = *rc::gen::container<std::vector<Fault>>(static_cast<size_t>(count), fault_gen());
    SimSet set(durable_set(members));
    Schedule schedule(set);
    schedule.write();
    for (const auto& f : faults) schedule.apply(f);
    schedule.write();
    std::string missing = schedule.missing_after_heal();
    bool holds = missing.empty();
    int rollbacks = 0;
    for (int i = 0; i < set.size(); ++i) {
      rollbacks +=
          set.member(i).log_text().find(R"("msg":"Rollback summary")") != std::string::npos ? 1 : 0;
    }
    // faults, acknowledged writes, members that rolled back
    RC_TAG(faults.size(), schedule.acknowledged(), rollbacks);
    if (!holds) RC_LOG() << missing << "\n" << set.logs();
    RC_ASSERT(holds);
  };
  rc::detail::TestResult result =
      rc::detail::checkTestable(property, rc::detail::TestMetadata{}, params);
  rc::detail::SuccessResult success;
  std::ostringstream message;
  rc::detail::printResultMessage(result, message);
  std::cerr << members << " members, seed " << params.seed << ": " << message.str() << "\n";
  EXPECT_TRUE(result.match(success)) << "seed " << params.seed << ": " << message.str();
}

TEST(DurabilityProperty, MajorityWritesSurviveKillsPausesAndStepDownsThreeMembers) {
  if (long_tier()) {
    check_majority_writes_survive(3, 20, 8);
  } else {
    check_majority_writes_survive(3, 2, 3);
  }
}

// The deposed-primary schedule on its own, at every size the property runs (3 members here).
TEST(DurabilityProperty, DeposedPrimaryScheduleLosesNoMajorityWrite) {
  SimSet set(durable_set(3));
  Schedule schedule(set);
  schedule.write();
  schedule.apply(Fault{FaultKind::kDeposePrimary, 0});
  schedule.write();
  std::string missing = schedule.missing_after_heal();
  EXPECT_TRUE(missing.empty()) << missing << "\n" << set.logs();
  EXPECT_GE(schedule.acknowledged(), 2u) << set.logs();
}

TEST(DurabilityProperty, MajorityWritesSurviveKillsPausesAndStepDownsFiveMembers) {
  if (!long_tier()) GTEST_SKIP() << "five-member schedules run in the long tier";
  check_majority_writes_survive(5, 10, 8);
}

}  // namespace
}  // namespace mongosim::testing
