#include "server/parameters.h"

#include <cassert>
#include <charconv>
#include <stdexcept>

#include "base/error_codes.h"
#include "command/command.h"

namespace mongosim::server {

namespace {

constexpr int64_t kMaxLogLevel = 5;
constexpr int64_t kMaxTtlSleepSecs = 24 * 60 * 60;
// mongod's feature compatibility version for the 7.0 personality (docs/mongodb-behaviour.md,
// Personality and limits).
constexpr const char* kFeatureCompatibilityVersion = "7.0";

}  // namespace

ServerParameters::ServerParameters() {
  params_ = {
      {"ttlMonitorSleepSecs", false, 60, 1, kMaxTtlSleepSecs, true},
      {"ttlMonitorEnabled", true, 1, 0, 1, true},
      {"enableTestCommands", true, 1, 0, 1, false},
      {"logLevel", false, 0, 0, kMaxLogLevel, true},
  };
}

const ServerParameters::Param* ServerParameters::find(std::string_view name) const {
  for (const auto& p : params_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

int64_t ServerParameters::value_of(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const Param* p = find(name);
  assert(p != nullptr);
  return p->value;
}

bson::Value ServerParameters::to_value(const Param& p) {
  if (p.is_bool) return bson::V(p.value != 0);
  return bson::V(static_cast<int32_t>(p.value));
}

int64_t ServerParameters::checked_value(const Param& p, const bson::Value& v) {
  int64_t value = 0;
  if (p.is_bool) {
    if (v.type() == bson::Type::kBool) {
      value = v.as_bool() ? 1 : 0;
    } else if (auto n = v.number_as_exact_int64(); v.is_number() && n && (*n == 0 || *n == 1)) {
      value = *n;
    } else {
      throw CommandError(code::kBadValue,
                         "Invalid value for parameter " + p.name + ": expected a boolean");
    }
    return value;
  }
  auto n = v.is_number() ? v.number_as_exact_int64() : std::nullopt;
  if (!n) {
    throw CommandError(code::kBadValue, "Invalid value for parameter " + p.name +
                                            ": expected an integer, got " +
                                            std::string(bson::type_name(v.type())));
  }
  if (*n < p.min || *n > p.max) {
    throw CommandError(code::kBadValue, "Invalid value for parameter " + p.name + ": " +
                                            std::to_string(*n) + " is not in [" +
                                            std::to_string(p.min) + ", " + std::to_string(p.max) +
                                            "]");
  }
  return *n;
}

void ServerParameters::set_from_startup(std::string_view assignment) {
  size_t eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    throw std::invalid_argument("--setParameter expects name=value, got '" +
                                std::string(assignment) + "'");
  }
  std::string name(assignment.substr(0, eq));
  std::string_view text = assignment.substr(eq + 1);
  std::lock_guard<std::mutex> lock(mutex_);
  auto* p = const_cast<Param*>(find(name));
  if (p == nullptr) throw std::invalid_argument("--setParameter: unknown parameter '" + name + "'");
  bson::Value v;
  if (text == "true" || text == "false") {
    v = bson::V(text == "true");
  } else {
    int64_t n = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || ptr != text.data() + text.size()) {
      throw std::invalid_argument("--setParameter " + name + ": '" + std::string(text) +
                                  "' is not an integer or boolean");
    }
    v = bson::V(n);
  }
  try {
    p->value = checked_value(*p, v);
  } catch (const CommandError& e) {
    throw std::invalid_argument(std::string("--setParameter: ") + e.what());
  }
}

bson::Document ServerParameters::get(const bson::Document& command) const {
  const bson::Value& selector = command.at(0).second;
  bool everything = selector.is_string() && selector.as_string() == "*";
  bool details = selector.is_document() && selector.as_document().has("showDetails") &&
                 selector.as_document().get("showDetails")->truthy();
  std::lock_guard<std::mutex> lock(mutex_);
  bson::Document out;
  for (const auto& p : params_) {
    if (!everything && !command.has(p.name)) continue;
    if (details) {
      out.append(p.name,
                 bson::V(bson::Document{{"value", to_value(p)},
                                        {"settableAtRuntime", bson::V(p.settable_at_runtime)},
                                        {"settableAtStartup", bson::V(true)}}));
    } else {
      out.append(p.name, to_value(p));
    }
  }
  if (everything || command.has("featureCompatibilityVersion")) {
    out.append("featureCompatibilityVersion",
               bson::V(bson::Document{{"version", bson::V(kFeatureCompatibilityVersion)}}));
  }
  if (out.empty()) throw CommandError(code::kInvalidOptions, "no option found to get");
  return out;
}

bson::Document ServerParameters::set(const bson::Document& command) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::optional<bson::Value> was;
  for (size_t i = 1; i < command.size(); ++i) {
    const auto& [name, value] = command.at(i);
    if (!name.empty() && name[0] == '$') continue;  // $db, $readPreference, ...
    if (name == "lsid" || name == "comment" || name == "$clusterTime") continue;
    auto* p = const_cast<Param*>(find(name));
    if (p == nullptr) {
      throw CommandError(code::kInvalidOptions, "attempted to set unrecognized parameter [" + name +
                                                    "], use help:true to see options ");
    }
    if (!p->settable_at_runtime) {
      throw CommandError(code::kBadValue, "not allowed to change [" + name + "] at runtime");
    }
    int64_t checked = checked_value(*p, value);
    if (!was) was = to_value(*p);
    p->value = checked;
  }
  if (!was)
    throw CommandError(code::kInvalidOptions,
                       "no option found to set, use help:true to see options ");
  return bson::Document{{"was", *was}};
}

bson::Document ServerParameters::all() const {
  std::lock_guard<std::mutex> lock(mutex_);
  bson::Document out;
  for (const auto& p : params_) out.append(p.name, to_value(p));
  return out;
}

}  // namespace mongosim::server
