// Server parameters: the subset of mongod's that mongosim has, settable with
// `--setParameter name=value` at startup and read/written by getParameter/setParameter.
//
// Every parameter is an integer or a boolean with a valid range; values outside it are refused
// with an error naming the parameter and the range.
//
// Thread-safe: setParameter writes while the TTL monitor and commands read.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "bson/value.h"

namespace mongosim::server {

class ServerParameters {
 public:
  ServerParameters();

  // "name=value" from the command line. Throws std::invalid_argument naming what was wrong.
  void set_from_startup(std::string_view assignment);

  int64_t ttl_monitor_sleep_secs() const { return value_of("ttlMonitorSleepSecs"); }

  // The getParameter command's reply fields. Throws CommandError (72 when nothing matched).
  bson::Document get(const bson::Document& command) const;
  // The setParameter command: sets each named parameter, returns {was: <old value>}.
  bson::Document set(const bson::Document& command);

  // {name: value, ...} of every parameter, for getCmdLineOpts-style reports.
  bson::Document all() const;

 private:
  struct Param {
    std::string name;
    bool is_bool = false;
    int64_t value = 0;
    int64_t min = 0;
    int64_t max = 0;
    bool settable_at_runtime = true;
  };
  const Param* find(std::string_view name) const;
  int64_t value_of(std::string_view name) const;
  static bson::Value to_value(const Param& p);
  static int64_t checked_value(const Param& p, const bson::Value& v);

  mutable std::mutex mutex_;
  std::vector<Param> params_;  // fixed after construction; only values change
};

}  // namespace mongosim::server
