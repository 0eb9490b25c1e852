// index_check: judges a collection's TTL indexes from one listIndexes reply (a pure function:
// no I/O, no clock), before any acquire is sent into that collection.
//
// A lock document carries the lock's token floor and its tombstones; mongolock.h [tombstone] and
// [clock-steps] promise they are kept reap_after_s after the document's reapAt. Only a TTL index
// can delete the document sooner, so a collection is usable when every TTL index in it is on
// {reapAt: 1} alone with expireAfterSeconds >= the Provider's reap_after_s. Refused:
//   * the index that versions before reapAt made in the plain collection, "mongolock_ttl" on
//     expiresAt (it reaps a released document reap_after_s after the release);
//   * any TTL index with a shorter expireAfterSeconds than reap_after_s, whoever made it (the
//     first Provider to create "mongolock_reap" fixes its value; a later one with a longer
//     reap_after_s is refused, not silently shortened);
//   * any other TTL index (another key, a compound key): it deletes on a schedule the library
//     does not know;
//   * a TTL index whose expireAfterSeconds is not a number this judge reads (Decimal128, NaN).
// Invariant: kUsable only when a TTL index on {reapAt: 1} (the library's, or one of another
// name on that key) was in the reply with an acceptable value, or when the Provider creates no
// index (then the caller may remember it; an index made later is not seen, as the header says).
// kUsableUntilIndexed: no reapAt index yet and the Provider makes one: the caller makes it
// before acquiring (whoever creates it first fixes its value) and judges again. kIncomplete:
// the reply left a cursor open (more indexes than MongoDB allows), so nothing can be judged.
#pragma once

#include <bson/bson.h>

#include <cstdint>
#include <string>

namespace mongolock::detail {

struct IndexRule {
  std::string collection_path;  // "db.collection", for the message
  int64_t reap_after_s = 0;     // the Provider's
  bool creates_index = false;   // Options::create_index
  bool plain = true;            // the plain collection (the legacy index message applies)
};

enum class IndexVerdictKind { kUsable, kUsableUntilIndexed, kRefused, kIncomplete };

struct IndexVerdict {
  IndexVerdictKind kind = IndexVerdictKind::kRefused;
  std::string detail;  // kRefused: which index, why, how to fix it; kIncomplete: what was wrong
};

// `reply` is listIndexes' reply ({cursor: {firstBatch: [...]}}); a reply without a cursor is
// judged as a collection without indexes.
IndexVerdict judge_indexes(const bson_t& reply, const IndexRule& rule);

}  // namespace mongolock::detail
