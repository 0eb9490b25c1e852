// The readers of member-to-member command fields (server/replication_fields.h): a field that is
// missing, of another type, or a number that is not a whole 64-bit integer reads as the fallback.
// A term of 1e300 in a heartbeat was cast to int64 (undefined; found by the wire fuzzer with
// libFuzzer and UBSan).
#include "server/replication_fields.h"

#include <gtest/gtest.h>

#include <limits>

#include "bson/codec.h"

namespace mongosim::server {
namespace {

using replication_fields::int_field;
using replication_fields::optime_field;

TEST(ReplicationFields, AnIntFieldIsAWholeLongOrTheFallback) {
  const bson::Document d = bson::from_json(R"({
      "i": 7, "l": {"$numberLong": "9007199254740993"}, "whole": 12.0, "half": 1.5,
      "huge": 1e300, "nan": {"$numberDouble": "NaN"}, "s": "7"})");
  EXPECT_EQ(int_field(d, "i", -1), 7);
  EXPECT_EQ(int_field(d, "l", -1), 9007199254740993);
  EXPECT_EQ(int_field(d, "whole", -1), 12);
  for (const char* name : {"half", "huge", "nan", "s", "missing"}) {
    EXPECT_EQ(int_field(d, name, -1), -1) << name;
  }
  const bson::Document optime =
      bson::from_json(R"({"o": {"ts": {"$timestamp": {"t": 5, "i": 1}}, "t": -1e300}})");
  EXPECT_EQ(optime_field(optime, "o").term, -1);
}

// A member index past 32 bits is not its low bits (4294967297 is not member 1); a term past
// kMaxMessageTerm is garbage (an election adds one to it, and a term past kMaxTerm is refused by
// every member and dbpath: one of exactly 2^62 once wedged a set).
TEST(ReplicationFields, IndexesAndTermsOutOfRangeReadAsTheFallback) {
  const bson::Document d = bson::from_json(R"({"from": {"$numberLong": "4294967297"}, "one": 1,
      "term": {"$numberLong": "9223372036854775807"}, "t": 5, "low": -2})");
  EXPECT_EQ(replication_fields::int32_field(d, "from", -1), -1);
  EXPECT_EQ(replication_fields::int32_field(d, "one", -1), 1);
  EXPECT_EQ(replication_fields::term_field(d, "term", 0), 0);
  EXPECT_EQ(replication_fields::term_field(d, "t", 0), 5);
  EXPECT_EQ(replication_fields::term_field(d, "low", 0), 0);
  const bson::Document edge{{"max", bson::V(replication_fields::kMaxMessageTerm)},
                            {"past", bson::V(replication_fields::kMaxMessageTerm + 1)},
                            {"limit", bson::V(kMaxTerm)}};
  EXPECT_EQ(replication_fields::term_field(edge, "max", 0), replication_fields::kMaxMessageTerm);
  EXPECT_EQ(replication_fields::term_field(edge, "past", 0), 0);
  EXPECT_EQ(replication_fields::term_field(edge, "limit", 0), 0);
}

}  // namespace
}  // namespace mongosim::server
