#include "bson/codec.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstring>

namespace mongosim::bson {
namespace {

TEST(Codec, RoundTripsEveryType) {
  Document doc = from_json(R"({"s": "x", "i": 1, "l": {"$numberLong": "5"}, "d": 2.5,
      "b": true, "n": null, "o": {"$oid": "0123456789abcdef01234567"},
      "dt": {"$date": {"$numberLong": "1700000000000"}}, "a": [1, "two", {"three": 3}],
      "ts": {"$timestamp": {"t": 5, "i": 7}}, "bin": {"$binary": {"base64": "AAE=", "subType": "04"}},
      "re": {"$regularExpression": {"pattern": "a+", "options": "i"}},
      "min": {"$minKey": 1}, "max": {"$maxKey": 1}, "dec": {"$numberDecimal": "1.5"}})");
  std::string raw = encode_document(doc);
  DecodeResult back = decode_document(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
  ASSERT_TRUE(back.doc) << back.error;
  EXPECT_TRUE(back.doc->identical(doc));
  EXPECT_EQ(back.doc->get("l")->type(), Type::kInt64);
  EXPECT_EQ(back.doc->get("i")->type(), Type::kInt32);
  EXPECT_EQ(back.doc->get("ts")->as_timestamp(), (Timestamp{5, 7}));
  EXPECT_DOUBLE_EQ(back.doc->get("dec")->number_as_double(), 1.5);
  EXPECT_EQ(back.doc->get("a")->as_array().size(), 3u);
}

TEST(Codec, RejectsTruncatedAndCorrupt) {
  std::string raw = encode_document(Document{{"a", V("hello")}, {"b", V(int32_t{1})}});
  for (size_t cut = 0; cut < raw.size(); ++cut) {
    DecodeResult r = decode_document(reinterpret_cast<const uint8_t*>(raw.data()), cut);
    EXPECT_FALSE(r.doc) << "accepted a document cut at " << cut;
    EXPECT_FALSE(r.error.empty());
  }
  std::string bad_type = raw;
  bad_type[4] = 0x42;  // type byte of the first field
  DecodeResult r = decode_document(reinterpret_cast<const uint8_t*>(bad_type.data()),
                                   bad_type.size());
  EXPECT_FALSE(r.doc);
  EXPECT_NE(r.error.find("unknown BSON type"), std::string::npos) << r.error;
  std::string bad_len = raw;
  int32_t huge = 1 << 30;
  std::memcpy(&bad_len[0], &huge, 4);
  EXPECT_FALSE(decode_document(reinterpret_cast<const uint8_t*>(bad_len.data()), bad_len.size()).doc);
}

TEST(Codec, RefusesDeepNesting) {
  Document doc{{"leaf", V(int32_t{1})}};
  for (int i = 0; i < kMaxNestingDepth + 5; ++i) doc = Document{{"n", V(doc)}};
  std::string raw = encode_document(doc);
  DecodeResult r = decode_document(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
  EXPECT_FALSE(r.doc);
  EXPECT_NE(r.error.find("nested deeper"), std::string::npos) << r.error;
}

TEST(Codec, CopyOnWriteKeepsCopiesIndependent) {
  Value a = V(Document{{"x", V(int32_t{1})}});
  Value b = a;
  b.mutable_document().set("x", V(int32_t{2}));
  EXPECT_EQ(a.as_document().get("x")->as_int32(), 1);
  EXPECT_EQ(b.as_document().get("x")->as_int32(), 2);
}

// Arbitrary bytes never crash the decoder, and whatever it accepts survives a re-encode.
RC_GTEST_PROP(CodecProps, ArbitraryBytesDecodeSafely, (const std::vector<uint8_t>& tail)) {
  std::vector<uint8_t> buf(4);
  int32_t len = static_cast<int32_t>(tail.size() + 4);
  std::memcpy(buf.data(), &len, 4);
  buf.insert(buf.end(), tail.begin(), tail.end());
  DecodeResult r = decode_document(buf.data(), buf.size());
  if (r.doc) {
    std::string again = encode_document(*r.doc);
    DecodeResult twice =
        decode_document(reinterpret_cast<const uint8_t*>(again.data()), again.size());
    RC_ASSERT(twice.doc.has_value());
    RC_ASSERT(twice.doc->identical(*r.doc));
  } else {
    RC_ASSERT(!r.error.empty());
  }
}

}  // namespace
}  // namespace mongosim::bson
