// Small readers for member-to-member command documents, shared by the replication files.
// Missing or mistyped fields read as the fallback: a peer's reply is never trusted to be
// well-formed, and a bad one is treated like silence.
#pragma once

#include <cstdint>
#include <string>

#include "base/optime.h"
#include "bson/value.h"
#include "server/member_client.h"

namespace mongosim::server::replication_fields {

// A whole number that fits in 64 bits; any other value (1.5, 1e300, NaN) reads as the fallback
// (a cast of such a double to int64 is undefined).
inline int64_t int_field(const bson::Document& doc, const char* name, int64_t fallback) {
  const bson::Value* v = doc.get(name);
  if (v == nullptr || !v->is_number()) return fallback;
  return v->number_as_exact_int64().value_or(fallback);
}

// A member index or a state: int_field, and a value outside the 32-bit range reads as the
// fallback (4294967297 is not member 1).
inline int int32_field(const bson::Document& doc, const char* name, int fallback) {
  const int64_t v = int_field(doc, name, fallback);
  return v >= INT32_MIN && v <= INT32_MAX ? static_cast<int>(v) : fallback;
}

// The largest term another member's message may carry: kMaxTerm (which this member's own files
// and oplog may hold) less room for 2^32 elections of this member's own, each adding one, so a
// term it reaches from a message never becomes one the others, or its own dbpath, refuse.
inline constexpr int64_t kMaxMessageTerm = kMaxTerm - (int64_t{1} << 32);

// A term field: int_field, and a value outside [-1, kMaxMessageTerm] reads as the fallback.
inline int64_t term_field(const bson::Document& doc, const char* name, int64_t fallback) {
  const int64_t term = int_field(doc, name, fallback);
  return term >= -1 && term <= kMaxMessageTerm ? term : fallback;
}

inline bool bool_field(const bson::Document& doc, const char* name) {
  const bson::Value* v = doc.get(name);
  return v != nullptr && v->truthy();
}

inline std::string string_field(const bson::Document& doc, const char* name) {
  const bson::Value* v = doc.get(name);
  return v != nullptr && v->is_string() ? v->as_string() : std::string();
}

inline OpTime optime_field(const bson::Document& doc, const char* name) {
  const bson::Value* v = doc.get(name);
  if (v == nullptr || !v->is_document()) return OpTime{};
  const bson::Document& d = v->as_document();
  const bson::Value* ts = d.get("ts");
  OpTime out;
  if (ts != nullptr && ts->type() == bson::Type::kTimestamp) out.ts = ts->as_timestamp();
  out.term = term_field(d, "t", -1);
  return out;
}

inline bool reply_ok(const MemberReply& reply) {
  if (!reply.body) return false;
  const bson::Value* ok = reply.body->get("ok");
  return ok != nullptr && ok->truthy();
}

}  // namespace mongosim::server::replication_fields
