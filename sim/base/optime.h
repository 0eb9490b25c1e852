// An oplog position (timestamp, term). Optimes compare by term, then timestamp: the order
// elections use for the "log up-to-date" rule (docs/mongodb-behaviour.md, Elections). A new
// primary's timestamps are always above everything it has seen, so within one well-formed log this
// is also ts order.
#pragma once

#include <compare>
#include <cstdint>

#include "bson/value.h"

namespace mongosim {

// The largest term any member accepts from outside itself (another member's message, an oplog
// entry it fetches or replays, its dbpath's files): an election adds one to the newest term it has
// seen, which must stay within 64 bits. A term beyond it (or below -1) is garbage.
inline constexpr int64_t kMaxTerm = int64_t{1} << 62;

struct OpTime {
  bson::Timestamp ts;
  int64_t term = -1;  // -1: the null optime (nothing written yet)

  bool is_null() const { return term < 0 && ts.seconds == 0 && ts.increment == 0; }
  auto operator<=>(const OpTime& other) const {
    if (auto c = term <=> other.term; c != 0) return c;
    return ts <=> other.ts;
  }
  bool operator==(const OpTime& other) const = default;

  // {ts: Timestamp, t: Int64} as hello, replSetGetStatus and write replies show it.
  bson::Document to_document() const {
    return bson::Document{{"ts", bson::Value::timestamp(ts)}, {"t", bson::Value::int64(term)}};
  }
};

}  // namespace mongosim
