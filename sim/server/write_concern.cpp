#include "server/write_concern.h"

#include "base/error_codes.h"

namespace mongosim::server {

namespace {

// mongod refuses w above the largest possible replica set size.
constexpr int64_t kMaxW = 50;
// A wtimeout beyond a day is a mistake, not a wait; mongod accepts any int but we bound it.
constexpr int64_t kMaxWtimeoutMs = 24LL * 60 * 60 * 1000;

[[noreturn]] void fail(int32_t code, const std::string& message) {
  throw CommandError(code, message);
}

void parse_w(const bson::Value& w, WriteConcern& wc) {
  if (w.is_string()) {
    if (w.as_string() == "majority") {
      wc.mode = WriteConcern::Mode::kMajority;
    } else {
      wc.mode = WriteConcern::Mode::kTag;
      wc.tag = w.as_string();
    }
    return;
  }
  if (!w.is_number()) fail(code::kFailedToParse, "w has to be a number or a string");
  auto n = w.number_as_exact_int64();
  if (!n) fail(code::kFailedToParse, "w has to be a whole number");
  if (*n < 0) fail(code::kFailedToParse, "w cannot be a negative value");
  if (*n > kMaxW)
    fail(code::kFailedToParse, "w has to be a non-negative number and not greater than 50");
  wc.mode = WriteConcern::Mode::kNumber;
  wc.w = static_cast<int32_t>(*n);
}

}  // namespace

WriteConcern parse_write_concern(const bson::Document& body, bool replication_enabled) {
  WriteConcern wc;
  const bson::Value* arg = body.get("writeConcern");
  if (arg == nullptr) return wc;
  if (!arg->is_document()) {
    fail(code::kTypeMismatch, "BSON field 'writeConcern' is the wrong type '" +
                                  std::string(bson::type_name(arg->type())) +
                                  "', expected type 'object'");
  }
  const bson::Document& doc = arg->as_document();
  wc.explicitly_given = !doc.empty();
  if (const bson::Value* w = doc.get("w")) parse_w(*w, wc);
  if (const bson::Value* j = doc.get("j")) {
    if (j->type() != bson::Type::kBool && !j->is_number()) {
      fail(code::kFailedToParse, "j must be numeric or a boolean value");
    }
    wc.j = j->truthy();
  }
  if (const bson::Value* t = doc.get("wtimeout")) {
    if (!t->is_number()) fail(code::kFailedToParse, "wtimeout must be a number");
    double ms = t->number_as_double();
    if (ms < 0 || ms > static_cast<double>(kMaxWtimeoutMs)) {
      fail(code::kFailedToParse,
           "wtimeout must be between 0 and " + std::to_string(kMaxWtimeoutMs));
    }
    wc.wtimeout_ms = static_cast<int64_t>(ms);
  }
  if (!replication_enabled) {
    if (wc.mode == WriteConcern::Mode::kNumber && wc.w > 1) {
      fail(code::kBadValue, "cannot use 'w' > 1 on a standalone");
    }
    if (wc.mode == WriteConcern::Mode::kTag) {
      fail(code::kBadValue, "cannot use non-majority 'w' mode \"" + wc.tag + "\" on a standalone");
    }
  }
  return wc;
}

bson::Document write_concern_document(const WriteConcern& wc) {
  bson::Value w;
  switch (wc.mode) {
    case WriteConcern::Mode::kNumber:
      w = bson::V(wc.w);
      break;
    case WriteConcern::Mode::kMajority:
      w = bson::V("majority");
      break;
    case WriteConcern::Mode::kTag:
      w = bson::V(wc.tag);
      break;
  }
  return bson::Document{
      {"w", w},
      {"wtimeout", bson::V(static_cast<int32_t>(wc.wtimeout_ms))},
      {"provenance", bson::V(wc.explicitly_given ? "clientSupplied" : "implicitDefault")}};
}

bson::Document write_concern_error(int32_t code, const std::string& errmsg,
                                   const WriteConcern& wc) {
  return bson::Document{
      {"code", bson::V(code)},
      {"codeName", bson::V(std::string(code_name(code)))},
      {"errmsg", bson::V(errmsg)},
      {"errInfo", bson::V(bson::Document{{"writeConcern", bson::V(write_concern_document(wc))}})}};
}

std::optional<bson::Document> SingleNodeWriteConcernWaiter::wait(
    const WriteConcern& wc, const std::optional<OpTime>& /*optime*/) {
  if (wc.mode == WriteConcern::Mode::kTag) {
    return write_concern_error(
        code::kUnknownReplWriteConcern,
        "No write concern mode named '" + wc.tag + "' found in replica set configuration", wc);
  }
  if (wc.mode == WriteConcern::Mode::kNumber && wc.w > 1) {
    return write_concern_error(code::kUnsatisfiableWriteConcern, "Not enough data-bearing nodes",
                               wc);
  }
  return std::nullopt;  // applied locally is all one member can offer, and it has happened
}

}  // namespace mongosim::server
