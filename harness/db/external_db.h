// A set someone else runs, already initiated, reached at a URI (--external-uri; e.g. docker/):
// the harness starts, stops and signals nothing. Its members are the URI's hosts, in order;
// admin commands and final reads go to them from the harness's own namespace, and workers run
// beside the harness. start() waits until the set is ready and drops the workload's database
// (the set keeps what earlier runs wrote; a history must start from nothing).
//
// It supports the faults that need no lever on member processes, clocks or the network: every
// worker fault without a partition, step-down and freeze. No random mixes.
//
// Thread rules: Db's.
#pragma once

#include <string>
#include <vector>

#include "db/db.h"

namespace locklab {

class ExternalDb : public Db {
 public:
  // Throws std::invalid_argument when `uri` is not a mongodb:// URI or names another number of
  // hosts than config.members.
  ExternalDb(DbConfig config, std::string uri);

  std::string name() const override { return "loopback"; }
  std::string member_program() const override { return "external " + uri_; }
  std::optional<std::string> supports(FaultKind kind) const override;
  std::optional<std::string> supports_random_mix() const override;

  void start() override;
  void stop(int64_t /*grace_ms*/ = 3000) override {}
  void teardown() override {}

  std::string host(int member) const override { return hosts_.at(member); }
  std::string uri(const std::string& app_name) const override;
  std::string worker_netns(const std::string& /*worker*/) const override { return ""; }

  void kill_member(int member) override;
  void restart_member(int member) override;
  void pause_member(int member) override;
  void resume_member(int member) override;
  // Not ours to know; commands to it will tell.
  bool running(int /*member*/) const override { return true; }
  bool paused(int /*member*/) const override { return false; }
  int64_t set_clock_offset(int member, int64_t offset_ms) override;
  int64_t clock_offset(int /*member*/) const override { return 0; }

 private:
  std::string uri_;
  std::vector<std::string> hosts_;  // "address:port"
  [[noreturn]] void refuse(const char* what) const;
};

// "mongodb://h1:p1,h2/?x" -> {"h1:p1", "h2:27017"}. Throws std::invalid_argument naming what
// is wrong.
std::vector<std::string> uri_hosts(const std::string& uri);

}  // namespace locklab
