// The faults available without replication. Each is a small Fault with begin/heal.
#include <signal.h>

#include <stdexcept>

#include "cluster.h"
#include "nemesis.h"
#include "netns.h"
#include "run_workers.h"

namespace locklab {
namespace {

int member_index(const std::string& target) {
  return std::stoi(target.substr(1));
}

// SIGSTOP past the lease, SIGCONT on heal: the process pause of Kleppmann's GC-pause argument.
class PauseWorker : public Fault {
 public:
  explicit PauseWorker(std::string target) : target_(std::move(target)) {}
  void begin(FaultContext& c) override {
    if (!c.workers.signal(target_, SIGSTOP)) throw std::runtime_error(target_ + " is not running");
  }
  void heal(FaultContext& c) override { c.workers.signal(target_, SIGCONT); }

 private:
  std::string target_;
};

// SIGKILL (a crash: no release, the lease must lapse); heal restarts it under the same id.
class KillWorker : public Fault {
 public:
  KillWorker(std::string target, bool restart) : target_(std::move(target)), restart_(restart) {}
  void begin(FaultContext& c) override {
    if (!c.workers.signal(target_, SIGKILL)) throw std::runtime_error(target_ + " is not running");
  }
  void heal(FaultContext& c) override {
    if (restart_) c.workers.start(target_);
  }

 private:
  std::string target_;
  bool restart_;
};

class PauseMember : public Fault {
 public:
  explicit PauseMember(std::string target) : member_(member_index(target)) {}
  void begin(FaultContext& c) override {
    if (!c.cluster.running(member_) || kill(c.cluster.pid(member_), SIGSTOP) != 0) {
      throw std::runtime_error("member m" + std::to_string(member_) + " is not running");
    }
  }
  void heal(FaultContext& c) override {
    if (c.cluster.running(member_)) kill(c.cluster.pid(member_), SIGCONT);
  }

 private:
  int member_;
};

class IsolateWorker : public Fault {
 public:
  IsolateWorker(std::string target, IsolationMode mode) : target_(std::move(target)), mode_(mode) {}
  void begin(FaultContext& c) override {
    if (!c.network) throw std::runtime_error("isolate-worker needs the netns backend");
    c.network->isolate(target_, mode_);
  }
  void heal(FaultContext& c) override {
    if (c.network) c.network->heal(target_);
  }

 private:
  std::string target_;
  IsolationMode mode_;
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
    for (int m = 0; m < c.cluster.size(); ++m) {
      c.cluster.command(
          m, "admin",
          {{"configureFailPoint", "failCommand"}, {"mode", "alwaysOn"}, {"data", data_}});
    }
  }
  void heal(FaultContext& c) override {
    for (int m = 0; m < c.cluster.size(); ++m) {
      c.cluster.try_command(m, "admin", {{"configureFailPoint", "failCommand"}, {"mode", "off"}});
    }
  }

 private:
  std::string target_;
  nlohmann::json data_;
};

}  // namespace

std::unique_ptr<Fault> make_fault(const std::string& kind, const std::string& target,
                                  const nlohmann::json& params) {
  if (kind == "pause-worker") return std::make_unique<PauseWorker>(target);
  if (kind == "kill-worker") {
    return std::make_unique<KillWorker>(target, params.value("restart", true));
  }
  if (kind == "pause-member") return std::make_unique<PauseMember>(target);
  if (kind == "isolate-worker") {
    return std::make_unique<IsolateWorker>(target, params.value("mode", "drop") == "reject"
                                                       ? IsolationMode::kReject
                                                       : IsolationMode::kDrop);
  }
  if (kind == "fail-command") return std::make_unique<FailCommand>(target, params);
  throw std::invalid_argument("unknown fault kind " + kind);
}

}  // namespace locklab
