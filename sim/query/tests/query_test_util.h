// Helpers shared by the query engine's tests: documents from extended JSON and assertions on
// the CommandError code a call throws.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "base/command_error.h"
#include "bson/codec.h"
#include "query/query.h"

namespace mongosim::query::testing {

inline bson::Document J(std::string_view json) {
  return bson::from_json(json);
}

// The value of field "v" in {"v": <json>}: lets a test write any value as JSON.
inline bson::Value JV(std::string_view json) {
  return *bson::from_json("{\"v\": " + std::string(json) + "}").get("v");
}

// {name: value}: for operator documents libbson's JSON parser would read as legacy extended
// JSON ({"$type": ...}, {"$regex": ..., "$options": ...}).
inline bson::Value Op(std::string name, bson::Value value) {
  return bson::Value::document(bson::Document{{std::move(name), std::move(value)}});
}

inline EvalContext ctx_at(int64_t now_ms = 1700000000000) {
  EvalContext ctx;
  ctx.now_ms = now_ms;
  return ctx;
}

// Runs f and returns the CommandError code it threw (0 if none), recording the message.
template <typename F>
int32_t error_code_of(F&& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const CommandError& e) {
    if (message != nullptr) *message = e.what();
    return e.code();
  }
  return 0;
}

inline bool same(const bson::Document& a, const bson::Document& b) {
  return a.identical(b);
}

}  // namespace mongosim::query::testing

#define EXPECT_DOC_EQ(actual, expected_json)                                      \
  do {                                                                            \
    bson::Document expected_doc__ = ::mongosim::query::testing::J(expected_json); \
    bson::Document actual_doc__ = (actual);                                       \
    EXPECT_TRUE(actual_doc__.identical(expected_doc__))                           \
        << "actual:   " << bson::to_json(actual_doc__)                            \
        << "\nexpected: " << bson::to_json(expected_doc__);                       \
  } while (0)
