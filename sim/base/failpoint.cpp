#include "base/failpoint.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "base/command_error.h"
#include "base/error_codes.h"
#include "base/log.h"

namespace mongosim {

namespace {

constexpr int64_t kMaxBlockTimeMs = 10 * 60 * 1000;  // longer blocks are test mistakes

// One fail point's activation mode (docs/mongodb-behaviour.md, Fail points): off, alwaysOn,
// {times}, {skip}, {activationProbability}.
struct Mode {
  enum class Kind { kOff, kAlwaysOn, kTimes, kSkip, kProbability } kind = Kind::kOff;
  int64_t remaining = 0;  // kTimes: activations left; kSkip: matches still to skip
  double probability = 0;
};

struct FailPointEntry {
  Mode mode;
  bson::Document data;
  int64_t times_entered = 0;  // activations since the process started (configureFailPoint's count)
};

[[noreturn]] void bad(const std::string& message) {
  throw CommandError(code::kBadValue, message);
}

int64_t positive_int(const bson::Value& v, const char* what) {
  auto n = v.is_number() ? v.number_as_exact_int64() : std::nullopt;
  if (!n || *n < 0 || *n > INT32_MAX) bad(std::string(what) + " must be a non-negative int32");
  return *n;
}

Mode parse_mode(const bson::Value* v) {
  if (v == nullptr) bad("Missing mode argument");
  Mode mode;
  if (v->is_string()) {
    if (v->as_string() == "off") return mode;
    if (v->as_string() == "alwaysOn") {
      mode.kind = Mode::Kind::kAlwaysOn;
      return mode;
    }
    bad("unknown mode: " + v->as_string());
  }
  if (!v->is_document() || v->as_document().size() != 1) {
    bad("mode must be 'off', 'alwaysOn', or an object with one of times, skip, "
        "activationProbability");
  }
  const auto& [key, value] = v->as_document().at(0);
  if (key == "times") {
    mode.kind = Mode::Kind::kTimes;
    mode.remaining = positive_int(value, "times");
    if (mode.remaining == 0) mode.kind = Mode::Kind::kOff;
  } else if (key == "skip") {
    mode.kind = Mode::Kind::kSkip;
    mode.remaining = positive_int(value, "skip");
  } else if (key == "activationProbability") {
    if (!value.is_number() || value.number_as_double() < 0 || value.number_as_double() > 1) {
      bad("activationProbability must be a number in [0, 1]");
    }
    mode.kind = Mode::Kind::kProbability;
    mode.probability = value.number_as_double();
  } else {
    bad("unrecognized mode field: " + key);
  }
  return mode;
}

void validate_fail_command_data(const bson::Document& data) {
  const bson::Value* names = data.get("failCommands");
  if (names == nullptr || !names->is_array())
    bad("failCommand data must have a failCommands array");
  for (const auto& n : names->as_array()) {
    if (!n.is_string()) bad("failCommands must contain only strings");
  }
  if (const bson::Value* code = data.get("errorCode"); code != nullptr && !code->is_number()) {
    bad("errorCode must be a number");
  }
  if (const bson::Value* labels = data.get("errorLabels")) {
    if (!labels->is_array()) bad("errorLabels must be an array");
    for (const auto& l : labels->as_array()) {
      if (!l.is_string()) bad("errorLabels must contain only strings");
    }
  }
  if (data.has("blockConnection") && data.get("blockConnection")->truthy()) {
    const bson::Value* ms = data.get("blockTimeMS");
    if (ms == nullptr) bad("blockTimeMS is required when blockConnection is true");
    if (positive_int(*ms, "blockTimeMS") > kMaxBlockTimeMs) bad("blockTimeMS is too large");
  }
  if (const bson::Value* wce = data.get("writeConcernError");
      wce != nullptr && !wce->is_document()) {
    bad("writeConcernError must be an object");
  }
}

bool flag(const bson::Document& data, std::string_view key) {
  const bson::Value* v = data.get(key);
  return v != nullptr && v->truthy();
}

}  // namespace

struct FailPoints::State {
  std::mutex mutex;
  FailPointEntry fail_command;
  FailPointEntry primary_transactional_write;
  std::map<std::string, FailPointEntry, std::less<>> plain;
  std::mt19937_64 rng{std::random_device{}()};

  // Consumes one activation if the mode allows it now.
  bool activate(FailPointEntry& fp) {
    switch (fp.mode.kind) {
      case Mode::Kind::kOff:
        return false;
      case Mode::Kind::kAlwaysOn:
        break;
      case Mode::Kind::kTimes:
        if (--fp.mode.remaining <= 0) fp.mode.kind = Mode::Kind::kOff;
        break;
      case Mode::Kind::kSkip:
        if (fp.mode.remaining > 0) {
          --fp.mode.remaining;
          return false;
        }
        break;
      case Mode::Kind::kProbability:
        if (std::uniform_real_distribution<double>(0, 1)(rng) >= fp.mode.probability) return false;
        break;
    }
    ++fp.times_entered;
    return true;
  }
};

FailPoints::FailPoints() : state_(std::make_unique<State>()) {}
FailPoints::~FailPoints() = default;

bson::Document FailPoints::configure(const bson::Document& command) {
  const bson::Value& name = command.at(0).second;
  if (!name.is_string()) bad("configureFailPoint expects the fail point name as a string");
  Mode mode = parse_mode(command.get("mode"));
  bson::Document data;
  if (const bson::Value* d = command.get("data")) {
    if (!d->is_document()) bad("data must be an object");
    data = d->as_document();
  }
  std::lock_guard<std::mutex> lock(state_->mutex);
  FailPointEntry* fp = nullptr;
  if (name.as_string() == "failCommand") {
    if (mode.kind != Mode::Kind::kOff) validate_fail_command_data(data);
    fp = &state_->fail_command;
  } else if (name.as_string() == "onPrimaryTransactionalWrite") {
    fp = &state_->primary_transactional_write;
  } else if (std::find(std::begin(kPlainFailPoints), std::end(kPlainFailPoints),
                       name.as_string()) != std::end(kPlainFailPoints)) {
    fp = &state_->plain[name.as_string()];
  } else {
    bad("Cannot find failpoint: " + name.as_string());
  }
  int64_t count = fp->times_entered;
  fp->mode = mode;
  fp->data = std::move(data);
  return bson::Document{{"count", bson::V(count)}};
}

std::optional<FailCommandAction> FailPoints::match_fail_command(std::string_view command_name,
                                                                std::string_view app_name) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  FailPointEntry& fp = state_->fail_command;
  if (fp.mode.kind == Mode::Kind::kOff) return std::nullopt;
  const bson::Document& data = fp.data;
  const auto& names = data.get("failCommands")->as_array();
  bool named = std::any_of(names.begin(), names.end(),
                           [&](const bson::Value& n) { return n.as_string() == command_name; });
  if (!named) return std::nullopt;
  if (const bson::Value* app = data.get("appName");
      app != nullptr && app->is_string() && app->as_string() != app_name) {
    return std::nullopt;
  }
  bool acts = flag(data, "closeConnection") || flag(data, "blockConnection") ||
              data.has("errorCode") || data.has("writeConcernError");
  if (!acts || !state_->activate(fp)) return std::nullopt;

  FailCommandAction action;
  action.close_connection = flag(data, "closeConnection");
  if (flag(data, "blockConnection"))
    action.block_ms = data.get("blockTimeMS")->number_as_exact_int64().value_or(0);
  if (const bson::Value* code = data.get("errorCode")) {
    // Not an int32 (NumberLong(4294967387) is not 91): UnknownError.
    action.error_code = code->number_as_exact_int32().value_or(code::kUnknownError);
  }
  if (const bson::Value* labels = data.get("errorLabels")) {
    action.error_labels.emplace();
    for (const auto& l : labels->as_array()) action.error_labels->push_back(l.as_string());
  }
  if (const bson::Value* wce = data.get("writeConcernError")) {
    action.write_concern_error = wce->as_document();
  }
  return action;
}

std::optional<TransactionalWriteFault> FailPoints::match_primary_transactional_write() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  FailPointEntry& fp = state_->primary_transactional_write;
  if (!state_->activate(fp)) return std::nullopt;
  TransactionalWriteFault fault;
  // mongod ends the client's session unless data.closeConnection is present and false, so a
  // bare {mode: {times: 1}} closes the connection and the driver retries
  // (docs/mongodb-behaviour.md, Fail points).
  fault.close_connection = !fp.data.has("closeConnection") || flag(fp.data, "closeConnection");
  if (const bson::Value* code = fp.data.get("failBeforeCommitExceptionCode")) {
    // A code is an int32; another number (1e300, 1.5) leaves the default, as a non-number does.
    fault.fail_before_commit_code = code->number_as_exact_int32();
  }
  return fault;
}

bool FailPoints::fires(std::string_view name) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  auto it = state_->plain.find(name);
  return it != state_->plain.end() && state_->activate(it->second);
}

bool FailPoints::pause_while_set(std::string_view name, const std::function<bool()>& interrupted) {
  if (!fires(name)) return false;
  // Tests wait for this line to know the operation is held.
  server::log_event(server::Severity::kInfo, "CONTROL", 20406, "failpoint",
                    "Fail point enabled: pausing",
                    bson::Document{{"failPoint", bson::V(std::string(name))}});
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      auto it = state_->plain.find(name);
      if (it == state_->plain.end() || it->second.mode.kind == Mode::Kind::kOff) return true;
    }
    if (interrupted()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(kPausePollMs));
  }
}

}  // namespace mongosim
