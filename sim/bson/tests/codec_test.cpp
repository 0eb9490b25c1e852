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

// encoded_size mirrors encode_value by hand: checked against the encoding on every type, on
// array indexes of one to three digits, and on random nested trees.
TEST(Codec, EncodedSizeIsTheEncodingsSizeForEveryType) {
  Document doc = from_json(R"({"s": "x", "i": 1, "l": {"$numberLong": "5"}, "d": 2.5,
      "b": true, "n": null, "o": {"$oid": "0123456789abcdef01234567"},
      "dt": {"$date": {"$numberLong": "1700000000000"}}, "a": [1, "two", {"three": 3}],
      "ts": {"$timestamp": {"t": 5, "i": 7}}, "bin": {"$binary": {"base64": "AAE=", "subType": "04"}},
      "re": {"$regularExpression": {"pattern": "a+", "options": "i"}}, "u": {"$undefined": true},
      "min": {"$minKey": 1}, "max": {"$maxKey": 1}, "dec": {"$numberDecimal": "1.5"}})");
  EXPECT_EQ(encoded_size(doc), encode_document(doc).size());
  for (const auto& [key, value] : doc) {
    constexpr size_t kWrapperBytes = 4 + 1 + 1 + 1;  // length, NUL, type byte, empty name's NUL
    EXPECT_EQ(encoded_size(value), encode_document(Document{{"", value}}).size() - kWrapperBytes)
        << key;
  }
  Array wide;
  for (int i = 0; i < 120; ++i) wide.push_back(V(Document{{"i", V(int32_t{i})}}));
  Document arrays{{"wide", V(wide)}, {"empty", V(Array{})}, {"nested", V(Array{V(wide)})}};
  EXPECT_EQ(encoded_size(arrays), encode_document(arrays).size());
  EXPECT_EQ(encoded_size(Document{}), encode_document(Document{}).size());
}

// encoded_size_within is encoded_size up to its limit (inclusive) and nothing past it, and it
// stops early: a value nesting one shared array twice per level for 60 levels (2^60 leaves in
// 60 arrays) is measured against a limit in the time the limit allows. What it omits: values
// deeper than the recursion allows (every caller has checked depth first).
TEST(Codec, EncodedSizeWithinStopsAtItsLimit) {
  Array wide;
  for (int i = 0; i < 120; ++i) wide.push_back(V(Document{{"i", V(int32_t{i})}}));
  const Document doc{{"wide", V(wide)}, {"s", V("text")}, {"nested", V(Array{V(wide)})}};
  const size_t size = encoded_size(doc);
  EXPECT_EQ(encoded_size_within(doc, size), size);
  EXPECT_EQ(encoded_size_within(doc, size + 1), size);
  EXPECT_EQ(encoded_size_within(doc, size - 1), std::nullopt);
  EXPECT_EQ(encoded_size_within(Document{}, 5), size_t{5});
  EXPECT_EQ(encoded_size_within(Document{}, 4), std::nullopt);
  Value shared = V(int32_t{1});
  for (int level = 0; level < 60; ++level) shared = V(Array{shared, shared});
  EXPECT_EQ(encoded_size_within(Document{{"d", shared}}, size_t{16} << 20), std::nullopt);
}

// Documents side by side at one depth, each followed by more fields: the decoder's per-depth
// field lists are reused and cleared between them.
TEST(Codec, SiblingDocumentsAtOneDepthDecodeWhole) {
  Document doc = from_json(R"({"a": {"x": 1, "xx": {"p": [1, {"q": 2}], "r": 3}}, "b": [{"y": 2},
      {"z": 3, "w": [[], [4]]}], "c": 4, "d": {"e": {"f": {"g": 5}}, "h": 6}, "i": 7})");
  std::string raw = encode_document(doc);
  DecodeResult back = decode_document(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
  ASSERT_TRUE(back.doc) << back.error;
  EXPECT_TRUE(back.doc->identical(doc)) << to_json(*back.doc);
  EXPECT_EQ(encode_document(*back.doc), raw);
}

rc::Gen<Value> tree_gen(int depth) {
  auto scalar = rc::gen::oneOf(
      rc::gen::map(rc::gen::arbitrary<int32_t>(), [](int32_t v) { return V(v); }),
      rc::gen::map(rc::gen::arbitrary<int64_t>(), [](int64_t v) { return V(v); }),
      rc::gen::map(rc::gen::arbitrary<double>(), [](double v) { return Value::dbl(v); }),
      rc::gen::map(rc::gen::arbitrary<std::string>(), [](std::string v) { return V(v); }),
      rc::gen::map(rc::gen::arbitrary<std::string>(),
                   [](std::string v) { return Value::binary(4, std::move(v)); }),
      rc::gen::map(rc::gen::arbitrary<int64_t>(), [](int64_t v) { return Value::date(v); }),
      rc::gen::just(Value::null()), rc::gen::just(V(true)), rc::gen::just(Value::min_key()));
  if (depth == 0) return scalar;
  auto array = rc::gen::map(rc::gen::container<std::vector<Value>>(tree_gen(depth - 1)),
                            [](std::vector<Value> v) { return V(Array(v.begin(), v.end())); });
  auto doc =
      rc::gen::map(rc::gen::container<std::vector<std::pair<std::string, Value>>>(
                       rc::gen::pair(rc::gen::arbitrary<std::string>(), tree_gen(depth - 1))),
                   [](std::vector<std::pair<std::string, Value>> fields) {
                     Document d;
                     for (auto& [k, v] : fields) {
                       std::string name;
                       for (char c : k)
                         name.push_back(c == '\0' ? 'z' : c);  // BSON names have no NUL
                       d.append(name, std::move(v));
                     }
                     return V(std::move(d));
                   });
  return rc::gen::oneOf(scalar, array, doc);
}

RC_GTEST_PROP(CodecProperty, EncodedSizeIsTheEncodingsSize, ()) {
  Value v = *tree_gen(3);
  Document doc{{"v", v}};
  RC_ASSERT(encoded_size(doc) == encode_document(doc).size());
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

// deeper_than agrees with the decoder at the boundary, for documents and arrays at every
// position (the write path refuses with it what a restart's journal replay would refuse).
TEST(Codec, DeeperThanAgreesWithTheDecodersLimit) {
  for (bool arrays : {false, true}) {
    for (int levels : {kMaxNestingDepth - 1, kMaxNestingDepth, kMaxNestingDepth + 1}) {
      Value inner = V(int32_t{1});
      for (int i = 0; i < levels; ++i) {
        inner = arrays && i % 2 == 0 ? V(Array{V(int32_t{0}), inner})
                                     : V(Document{{"n", inner}, {"s", V("x")}});
      }
      const Document doc{{"first", V(int32_t{1})}, {"deep", inner}};
      const std::string raw = encode_document(doc);
      const bool decodes =
          decode_document(reinterpret_cast<const uint8_t*>(raw.data()), raw.size()).doc.has_value();
      EXPECT_EQ(deeper_than(doc, kMaxNestingDepth), !decodes)
          << "levels " << levels << (arrays ? " with arrays" : "");
      EXPECT_EQ(decodes, levels <= kMaxNestingDepth) << "levels " << levels;
    }
  }
  // Shared subtrees ([v, v] nested 64 times: 2^64 paths) are walked once each; a walk of every
  // path would not end.
  Value shared = V(int32_t{1});
  for (int i = 0; i < 64; ++i) shared = V(Array{shared, shared});
  EXPECT_FALSE(deeper_than(shared, 63));
  EXPECT_TRUE(deeper_than(shared, 62));
  EXPECT_FALSE(deeper_than(Document{{"s", shared}}, 64));
  EXPECT_TRUE(deeper_than(Document{{"s", shared}}, 63));
  EXPECT_FALSE(deeper_than(V(Array{}), 0));
  EXPECT_TRUE(deeper_than(V(Array{V(Array{})}), 0));
  EXPECT_FALSE(deeper_than(Document{}, 0));
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

namespace mongosim::bson {
namespace {

// A decimal is a whole long only when its coefficient and exponent say so: 1 followed by 33
// zeros after the point is not 1 (a double rounds it to 1), 10E-1 is, 2^63 is past the range.
TEST(Value, DecimalIsAnExactLongOnlyWhenItsDigitsSaySo) {
  auto exact = [](const std::string& text) {
    const Document d = from_json(R"({"v": {"$numberDecimal": ")" + text + R"("}})");
    return d.get("v")->number_as_exact_int64();
  };
  EXPECT_EQ(exact("1.000000000000000000000000000000001"), std::nullopt);
  EXPECT_EQ(exact("1.5"), std::nullopt);
  EXPECT_EQ(exact("NaN"), std::nullopt);
  EXPECT_EQ(exact("Infinity"), std::nullopt);
  EXPECT_EQ(exact("10E-1"), 1);
  EXPECT_EQ(exact("1E1"), 10);
  EXPECT_EQ(exact("-0"), 0);
  EXPECT_EQ(exact("1E18"), int64_t{1'000'000'000'000'000'000});
  EXPECT_EQ(exact("1E19"), std::nullopt);
  EXPECT_EQ(exact("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(exact("9223372036854775808"), std::nullopt);
  EXPECT_EQ(exact("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(exact("-9223372036854775809"), std::nullopt);
  EXPECT_EQ(exact("123456789012345678900E-2"), int64_t{1234567890123456789});
  EXPECT_EQ(exact("12345678901234567890E-2"), std::nullopt);
}

}  // namespace
}  // namespace mongosim::bson
