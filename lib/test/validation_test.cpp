// Input validation: names, UTF-8, options and timeouts, all checked before any round trip.
#include "validation.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>

#include "mongolock/errors.h"
#include "mongolock/options.h"

namespace mongolock::detail {
namespace {

std::string encode_utf8(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return out;
}

rc::Gen<uint32_t> scalar_value() {
  return rc::gen::suchThat(rc::gen::inRange<uint32_t>(1, 0x110000),
                           [](uint32_t cp) { return cp < 0xD800 || cp > 0xDFFF; });
}

std::string valid_text(const std::vector<uint32_t>& code_points) {
  std::string text;
  for (uint32_t cp : code_points) text += encode_utf8(cp);
  return text;
}

RC_GTEST_PROP(Utf8, AcceptsEveryEncodedScalarValue, ()) {
  const auto code_points = *rc::gen::container<std::vector<uint32_t>>(scalar_value());
  RC_ASSERT(!first_invalid_utf8(valid_text(code_points)).has_value());
}

RC_GTEST_PROP(Utf8, ReportsTheOffsetOfAnIllFormedSequence, ()) {
  const auto prefix = valid_text(*rc::gen::container<std::vector<uint32_t>>(scalar_value()));
  const auto suffix = valid_text(*rc::gen::container<std::vector<uint32_t>>(scalar_value()));
  const std::string bad = *rc::gen::element<std::string>(
      "\x80", "\xBF", "\xC0\xAF", "\xC1\x81", "\xE0\x80\x80", "\xED\xA0\x80", "\xF0\x80\x80\x80",
      "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xFF", "\xC3", "\xE2\x82");
  // A truncated sequence followed by a lead or ASCII byte is still ill-formed at the same place.
  const std::string text = prefix + bad + "a" + suffix;
  const auto offset = first_invalid_utf8(text);
  RC_ASSERT(offset.has_value());
  RC_ASSERT(*offset == prefix.size());
}

TEST(LockName, RejectsEmptyLongInvalidAndNul) {
  EXPECT_THROW(check_lock_name(""), InvalidArgument);
  EXPECT_THROW(check_lock_name(std::string(kLockNameBytesMax + 1, 'a')), InvalidArgument);
  EXPECT_THROW(check_lock_name("ab\xC3"), InvalidArgument);
  EXPECT_THROW(check_lock_name(std::string("a\0b", 3)), InvalidArgument);
  EXPECT_NO_THROW(check_lock_name(std::string(kLockNameBytesMax, 'a')));
  EXPECT_NO_THROW(check_lock_name("r\xC3\xA9sum\xC3\xA9 $x.y"));
}

TEST(LockName, MessageNamesTheProblemAndWhere) {
  try {
    check_lock_name("abc\xFF");
    FAIL() << "no exception";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("lock name is not valid UTF-8 at byte 3"),
              std::string::npos)
        << error.what();
  }
}

TEST(Timeout, NegativeIsRejected) {
  EXPECT_THROW(check_timeout(std::chrono::milliseconds(-1)), InvalidArgument);
  EXPECT_NO_THROW(check_timeout(std::chrono::milliseconds(0)));
}

TEST(Options, DefaultsAreDerived) {
  const Options options = Options{}.validated();
  EXPECT_EQ(options.expiry_ms, 30'000);
  EXPECT_EQ(options.extension_cadence_ms, 10'000);
  EXPECT_EQ(options.lost_safety_margin_ms, 3'000);
  EXPECT_EQ(options.write_timeout_ms, 27'000);
  EXPECT_EQ(options.write_concern, WriteConcern::majority());
  EXPECT_FALSE(options.owner.host.empty());
  EXPECT_GT(options.owner.pid, 0);
}

void expect_rejected(const Options& options, const std::string& field) {
  try {
    (void)options.validated();
    ADD_FAILURE() << "accepted bad " << field;
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find(field), std::string::npos) << error.what();
  }
}

TEST(Options, WriteConcernMembersOutsideASetAreRejected) {
  Options options;
  options.write_concern = WriteConcern::members(-1);
  expect_rejected(options, "write_concern.members_count");
  options.write_concern = WriteConcern::members(WriteConcern::kWriteConcernMembersMax + 1);
  expect_rejected(options, "write_concern.members_count");
  options.write_concern = WriteConcern::members(3);
  EXPECT_EQ(options.validated().write_concern.members_count, 3);
  // 1.0's names still compile and mean what they meant.
  EXPECT_EQ(WriteConcern::kMajority, WriteConcern::majority());
  EXPECT_EQ(WriteConcern::kW1.members_count, 1);
}

TEST(Options, InconsistentDurationsNameTheField) {
  Options options;
  options.expiry_ms = 0;
  expect_rejected(options, "expiry_ms");
  options = {};
  options.expiry_ms = -5;
  expect_rejected(options, "expiry_ms");
  options = {};
  options.extension_cadence_ms = 30'000;
  expect_rejected(options, "extension_cadence_ms");
  options = {};
  options.extension_cadence_ms = -1;
  expect_rejected(options, "extension_cadence_ms");
  options = {};
  options.busy_wait_min_ms = 900;
  expect_rejected(options, "busy_wait_max_ms");
  options = {};
  options.busy_wait_min_ms = 0;
  expect_rejected(options, "busy_wait_min_ms");
  options = {};
  options.lost_safety_margin_ms = 20'000;
  expect_rejected(options, "lost_safety_margin_ms");
  options = {};
  options.collection = "a$b";
  expect_rejected(options, "Options::collection");
  options = {};
  options.rw_collection = options.collection;
  expect_rejected(options, "rw_collection");
  options = {};
  options.owner.description = "\xC0";
  expect_rejected(options, "owner.description");
}

RC_GTEST_PROP(Options, ValidatedCadenceAndMarginFitInsideTheLease, ()) {
  Options options;
  options.expiry_ms = *rc::gen::inRange<int64_t>(100, 1'000'000);
  const Options out = options.validated();
  RC_ASSERT(out.extension_cadence_ms > 0);
  RC_ASSERT(out.extension_cadence_ms + out.lost_safety_margin_ms < out.expiry_ms);
}

}  // namespace
}  // namespace mongolock::detail
