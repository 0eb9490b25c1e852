#include "repl/command_args.h"

#include <string>

#include "base/command_error.h"
#include "base/error_codes.h"

namespace mongosim::repl {

namespace {

int64_t seconds_field(const bson::Value& v, const std::string& name) {
  if (!v.is_number()) {
    throw CommandError(code::kTypeMismatch, "BSON field '" + name + "' is the wrong type '" +
                                                std::string(bson::type_name(v.type())) +
                                                "', expected a number");
  }
  // Truncated, as mongod reads a number as a long; beyond kMaxCommandSeconds (NaN and the
  // infinities included) the period cannot be added to a time in milliseconds.
  std::optional<int64_t> secs = v.number_as_truncated_int64();
  if (!secs || *secs > kMaxCommandSeconds || *secs < -kMaxCommandSeconds) {
    throw CommandError(code::kBadValue, "BSON field '" + name + "' is out of range: at most " +
                                            std::to_string(kMaxCommandSeconds) + " seconds");
  }
  return *secs;
}

bool bool_field(const bson::Value& v, const std::string& name) {
  if (v.type() == bson::Type::kBool) return v.as_bool();
  if (v.is_number()) return v.number_as_double() != 0;
  throw CommandError(code::kTypeMismatch, "BSON field '" + name + "' is the wrong type '" +
                                              std::string(bson::type_name(v.type())) +
                                              "', expected type 'bool'");
}

}  // namespace

StepDownRequest parse_step_down_request(const bson::Document& cmd) {
  StepDownRequest r;
  const bson::Value* secs = cmd.get("replSetStepDown");
  r.step_down_secs = secs ? seconds_field(*secs, "replSetStepDown") : 0;
  if (r.step_down_secs == 0) r.step_down_secs = 60;
  if (r.step_down_secs < 0)
    throw CommandError(code::kBadValue, "stepdown period must be a positive integer");
  if (const bson::Value* f = cmd.get("force")) r.force = bool_field(*f, "force");
  r.catch_up_secs = r.force ? 0 : 10;
  if (const bson::Value* c = cmd.get("secondaryCatchUpPeriodSecs")) {
    r.catch_up_secs = seconds_field(*c, "secondaryCatchUpPeriodSecs");
    if (r.catch_up_secs < 0) {
      throw CommandError(code::kBadValue,
                         "secondaryCatchUpPeriodSecs period must be a positive or absent");
    }
  }
  if (r.step_down_secs < r.catch_up_secs) {
    throw CommandError(code::kBadValue,
                       "stepdown period must be longer than secondaryCatchUpPeriodSecs");
  }
  return r;
}

int64_t parse_freeze_secs(const bson::Document& cmd) {
  const bson::Value* secs = cmd.get("replSetFreeze");
  int64_t n = secs ? seconds_field(*secs, "replSetFreeze") : 0;
  if (n < 0) throw CommandError(code::kBadValue, "freeze period must not be negative");
  return n;
}

bool parse_step_up_skip_dry_run(const bson::Document& cmd) {
  const bson::Value* skip = cmd.get("skipDryRun");
  return skip ? bool_field(*skip, "skipDryRun") : false;
}

}  // namespace mongosim::repl
