// Worker faults and member process pauses, and make_fault(), which dispatches to the other
// fault families (nemesis/kinds.h). Each fault is a small Fault with begin/heal.
#include <signal.h>

#include <stdexcept>

#include "db/admin.h"
#include "db/db.h"
#include "nemesis/kinds.h"
#include "nemesis/nemesis.h"
#include "run/workers.h"

namespace locklab {
namespace {

// SIGSTOP past the lease, SIGCONT on heal: the process pause of Kleppmann's GC-pause argument.
class PauseWorker : public Fault {
 public:
  explicit PauseWorker(std::string target) : target_(std::move(target)) {}
  void begin(FaultContext& c) override {
    if (!c.workers.signal(target_, SIGSTOP)) throw std::runtime_error(target_ + " is not running");
    paused_ = true;
  }
  void heal(FaultContext& c) override {
    if (!paused_) return;
    if (!c.workers.signal(target_, SIGCONT)) {
      throw std::runtime_error(target_ + " is not running: SIGCONT not delivered");
    }
    paused_ = false;
  }

 private:
  std::string target_;
  bool paused_ = false;
};

// SIGKILL (a crash: no release, the lease must lapse); heal restarts it under the same id.
class KillWorker : public Fault {
 public:
  KillWorker(std::string target, bool restart) : target_(std::move(target)), restart_(restart) {}
  void begin(FaultContext& c) override {
    if (!c.workers.signal(target_, SIGKILL)) throw std::runtime_error(target_ + " is not running");
    killed_ = true;
  }
  void heal(FaultContext& c) override {
    if (killed_ && restart_) c.workers.start(target_);
    killed_ = false;
  }

 private:
  std::string target_;
  bool restart_;
  bool killed_ = false;
};

class PauseMember : public Fault {
 public:
  explicit PauseMember(const std::string& target) : members_(member_indices(target)) {}
  void begin(FaultContext& c) override {
    for (int m : members_) {
      c.db.pause_member(m);
      paused_.push_back(m);
    }
  }
  void heal(FaultContext& c) override {
    std::string errors;
    for (int m : paused_) {
      try {
        c.db.resume_member(m);
      } catch (const std::exception& e) {
        errors += (errors.empty() ? "" : "; ") + std::string(e.what());
      }
    }
    paused_.clear();
    if (!errors.empty()) throw std::runtime_error(errors);
  }

 private:
  std::vector<int> members_;
  std::vector<int> paused_;
};

class IsolateWorker : public Fault {
 public:
  IsolateWorker(std::string target, IsolationMode mode) : target_(std::move(target)), mode_(mode) {}
  void begin(FaultContext& c) override {
    if (!c.db.partitions())
      throw std::runtime_error("isolate-worker needs a backend that can partition");
    c.db.partitions()->isolate(target_, mode_);
  }
  void heal(FaultContext& c) override {
    if (c.db.partitions()) c.db.partitions()->heal(target_);
  }

 private:
  std::string target_;
  IsolationMode mode_;
};

// The members' replies to the worker held delay_ms after they arrive, its requests sent at once
// (db/reply_relays.h): a command executes on time and its reply is late. Heal closes this
// window: what arrives from then on is held by the longest window still open on the worker, or
// not at all (replies already held keep their time, in order).
class ReplyDelay : public Fault {
 public:
  ReplyDelay(std::string target, int64_t delay_ms)
      : target_(std::move(target)), delay_ms_(delay_ms) {}
  void begin(FaultContext& c) override {
    if (!c.db.reply_delays()) {
      throw std::runtime_error("reply-delay needs a backend with reply relays (--cluster netns)");
    }
    c.db.reply_delays()->add_delay(target_, delay_ms_);
    delayed_ = true;
  }
  void heal(FaultContext& c) override {
    if (delayed_ && c.db.reply_delays()) c.db.reply_delays()->remove_delay(target_, delay_ms_);
    delayed_ = false;
  }
  nlohmann::json detail() const override { return {{"worker", target_}, {"delay_ms", delay_ms_}}; }

 private:
  std::string target_;
  int64_t delay_ms_;
  bool delayed_ = false;
};

// A worker's wall clock off by delta_ms for the window (skew), or moved by delta_ms and left
// there (jump), through the faketime file its process reads (WorkerPool::set_clock_offset).
class WorkerClock : public Fault {
 public:
  WorkerClock(std::string target, int64_t delta_ms, bool jump)
      : target_(std::move(target)), delta_ms_(delta_ms), jump_(jump) {}
  void begin(FaultContext& c) override {
    const int64_t base = jump_ ? c.workers.clock_offset(target_) : 0;
    previous_ms_ = c.workers.set_clock_offset(target_, base + delta_ms_);
    moved_ = true;
  }
  void heal(FaultContext& c) override {
    if (moved_ && !jump_) c.workers.set_clock_offset(target_, previous_ms_);
    moved_ = false;
  }
  nlohmann::json detail() const override {
    return {{"worker", target_}, {jump_ ? "jump_ms" : "offset_ms", delta_ms_}};
  }

 private:
  std::string target_;
  int64_t delta_ms_;
  bool jump_;
  int64_t previous_ms_ = 0;
  bool moved_ = false;
};

// failCommand on every member, filtered to the target worker's appName.
class FailCommand : public Fault {
 public:
  FailCommand(std::string target, const nlohmann::json& params) : target_(std::move(target)) {
    nlohmann::json commands =
        params.value("commands", nlohmann::json::array({"findAndModify", "update"}));
    data_ = {{"failCommands", commands}, {"appName", target_}};
    const std::string mode = params.value("mode", "close-connection");
    if (mode == "close-connection") {
      data_["closeConnection"] = true;
    } else if (mode == "block") {
      data_["blockConnection"] = true;
      data_["blockTimeMS"] = params.value("block_ms", 3000);
    } else if (mode == "error") {
      data_["errorCode"] = params.value("error_code", 91);  // ShutdownInProgress: retryable
    } else {
      data_["writeConcernError"] = {{"code", params.value("error_code", 64)},
                                    {"codeName", "WriteConcernFailed"},
                                    {"errmsg", "waiting for replication timed out"},
                                    {"errInfo", {{"wtimeout", true}}}};
    }
  }
  void begin(FaultContext& c) override {
    for (int m = 0; m < c.db.size(); ++m) {
      c.db.command(m, "admin",
                   {{"configureFailPoint", "failCommand"}, {"mode", "alwaysOn"}, {"data", data_}});
      set_.push_back(m);
    }
  }
  // Turns the fail point off where it was set; a member that refuses (or cannot be reached)
  // keeps failing the target's commands, so that is a failed heal.
  void heal(FaultContext& c) override {
    std::string errors;
    std::vector<int> still_set;
    for (int m : set_) {
      const nlohmann::json reply =
          c.db.try_command(m, "admin", {{"configureFailPoint", "failCommand"}, {"mode", "off"}});
      if (reply_ok(reply)) continue;
      still_set.push_back(m);
      errors += (errors.empty() ? "" : "; ") + member_role(m) + ": " +
                reply.value("errmsg", reply.dump());
    }
    set_ = still_set;
    if (!errors.empty()) throw std::runtime_error("fail point not turned off on " + errors);
  }

 private:
  std::string target_;
  nlohmann::json data_;
  std::vector<int> set_;  // members where the fail point is on
};

}  // namespace

std::vector<int> member_indices(const std::string& target) {
  std::vector<int> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = target.find(',', start);
    const std::string one = target.substr(start, comma - start);
    if (one.size() < 2 || one[0] != 'm' || one.size() > 3 ||
        one.find_first_not_of("0123456789", 1) != std::string::npos) {
      throw std::invalid_argument("not a member: \"" + one + "\"");
    }
    out.push_back(std::stoi(one.substr(1)));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::string member_role(int member) {
  return "m" + std::to_string(member);
}

// Every kind has a case (the compiler refuses a switch over FaultKind that misses one).
std::unique_ptr<Fault> make_fault(FaultKind kind, const std::string& target,
                                  const nlohmann::json& params) {
  std::unique_ptr<Fault> fault;
  switch (kind) {
    case FaultKind::kPauseWorker:
      return std::make_unique<PauseWorker>(target);
    case FaultKind::kKillWorker:
      return std::make_unique<KillWorker>(target, params.value("restart", true));
    case FaultKind::kPauseMember:
      return std::make_unique<PauseMember>(target);
    case FaultKind::kIsolateWorker:
      return std::make_unique<IsolateWorker>(target, params.value("mode", "drop") == "reject"
                                                         ? IsolationMode::kReject
                                                         : IsolationMode::kDrop);
    case FaultKind::kFailCommand:
      return std::make_unique<FailCommand>(target, params);
    case FaultKind::kClockSkewWorker:
      return std::make_unique<WorkerClock>(target, params.value("offset_ms", int64_t{0}), false);
    case FaultKind::kClockJumpWorker:
      return std::make_unique<WorkerClock>(target, params.value("jump_ms", int64_t{0}), true);
    case FaultKind::kCommandDelay:
      // failCommand's blockConnection: the command waits delay_ms on the server, then executes
      // (the worker's socket timeout, below delay_ms, has given up on it by then).
      return std::make_unique<FailCommand>(
          target,
          nlohmann::json{
              {"mode", "block"},
              {"block_ms", params.value("delay_ms", int64_t{0})},
              {"commands", params.value("commands", nlohmann::json::array({"findAndModify"}))}});
    case FaultKind::kReplyDelay:
      return std::make_unique<ReplyDelay>(target, params.value("delay_ms", int64_t{0}));
    case FaultKind::kIsolateMember:
    case FaultKind::kPartitionHalves:
    case FaultKind::kPartitionRing:
    case FaultKind::kPartitionBridge:
    case FaultKind::kPartitionWorker:
      fault = make_partition_fault(kind, target, params);
      break;
    case FaultKind::kFreeze:
    case FaultKind::kClockSkew:
    case FaultKind::kClockJump:
    case FaultKind::kStepDown:
    case FaultKind::kKillMember:
    case FaultKind::kPrimaryDivergence:
      fault = make_replset_fault(kind, target, params);
      break;
  }
  if (!fault) throw std::logic_error("no fault class for " + std::string(to_string(kind)));
  return fault;
}

}  // namespace locklab
