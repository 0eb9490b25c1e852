#include "repl/command_args.h"

#include <gtest/gtest.h>

#include "base/command_error.h"
#include "base/error_codes.h"
#include "bson/codec.h"

namespace mongosim::repl {
namespace {

StepDownRequest parse(const char* json) {
  return parse_step_down_request(bson::from_json(json));
}

void expect_bad_value(const char* json, const std::string& message) {
  try {
    parse(json);
    ADD_FAILURE() << "accepted " << json;
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), code::kBadValue);
    EXPECT_EQ(e.what(), message);
  }
}

TEST(ReplCommandArgs, StepDownDefaults) {
  StepDownRequest r = parse(R"({"replSetStepDown": 0})");
  EXPECT_EQ(r.step_down_secs, 60);
  EXPECT_EQ(r.catch_up_secs, 10);
  EXPECT_FALSE(r.force);
  StepDownRequest forced = parse(R"({"replSetStepDown": 30, "force": true})");
  EXPECT_EQ(forced.step_down_secs, 30);
  EXPECT_EQ(forced.catch_up_secs, 0);
  EXPECT_TRUE(forced.force);
  StepDownRequest explicit_catch_up =
      parse(R"({"replSetStepDown": 30, "secondaryCatchUpPeriodSecs": 5})");
  EXPECT_EQ(explicit_catch_up.catch_up_secs, 5);
}

TEST(ReplCommandArgs, StepDownRefusesBadPeriodsWithMongodsMessages) {
  expect_bad_value(R"({"replSetStepDown": -1})", "stepdown period must be a positive integer");
  expect_bad_value(R"({"replSetStepDown": 10, "secondaryCatchUpPeriodSecs": -1})",
                   "secondaryCatchUpPeriodSecs period must be a positive or absent");
  expect_bad_value(R"({"replSetStepDown": 5, "secondaryCatchUpPeriodSecs": 10})",
                   "stepdown period must be longer than secondaryCatchUpPeriodSecs");
  // 0 means 60, and the default catch-up period (10) fits in it.
  EXPECT_EQ(parse(R"({"replSetStepDown": 0})").step_down_secs, 60);
  try {
    parse(R"({"replSetStepDown": "x"})");
    ADD_FAILURE() << "accepted a string period";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), code::kTypeMismatch);
  }
}

// A period is added to a time in milliseconds: one that cannot be (1e300, NaN, 2^40 + 1 s) is
// refused rather than cast (undefined) or multiplied past 64 bits.
TEST(ReplCommandArgs, PeriodsBeyondTheBoundAreRefused) {
  const std::string too_long = "BSON field 'replSetStepDown' is out of range: at most " +
                               std::to_string(kMaxCommandSeconds) + " seconds";
  expect_bad_value(R"({"replSetStepDown": 1e300})", too_long);
  expect_bad_value(R"({"replSetStepDown": {"$numberDouble": "NaN"}})", too_long);
  expect_bad_value(R"({"replSetStepDown": {"$numberLong": "1099511627777"}})", too_long);
  expect_bad_value(R"({"replSetStepDown": 10, "secondaryCatchUpPeriodSecs": 1e300})",
                   "BSON field 'secondaryCatchUpPeriodSecs' is out of range: at most " +
                       std::to_string(kMaxCommandSeconds) + " seconds");
  EXPECT_EQ(parse(R"({"replSetStepDown": 30.9})").step_down_secs, 30);
  EXPECT_THROW(parse_freeze_secs(bson::from_json(R"({"replSetFreeze": -1e300})")), CommandError);
  EXPECT_EQ(
      parse_freeze_secs(bson::from_json(R"({"replSetFreeze": {"$numberLong": "1099511627776"}})")),
      kMaxCommandSeconds);
}

TEST(ReplCommandArgs, FreezeAndStepUp) {
  EXPECT_EQ(parse_freeze_secs(bson::from_json(R"({"replSetFreeze": 30})")), 30);
  EXPECT_EQ(parse_freeze_secs(bson::from_json(R"({"replSetFreeze": 0})")), 0);
  EXPECT_THROW(parse_freeze_secs(bson::from_json(R"({"replSetFreeze": -5})")), CommandError);
  EXPECT_TRUE(
      parse_step_up_skip_dry_run(bson::from_json(R"({"replSetStepUp": 1, "skipDryRun": true})")));
  EXPECT_FALSE(parse_step_up_skip_dry_run(bson::from_json(R"({"replSetStepUp": 1})")));
}

}  // namespace
}  // namespace mongosim::repl
