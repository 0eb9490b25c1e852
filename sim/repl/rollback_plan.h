// Rollback planning (docs/mongodb-behaviour.md, Oplog and rollback): given this member's oplog and
// its sync source's, find the common point and what must be undone. Pure: the data layer performs
// the plan (writes the current version of every listed document to the rollback file, restores or
// refetches it, truncates the oplog after the common point) and the topology is told
// on_rollback_complete().
//
// The common point is the newest local entry whose optime also appears in the source's oplog.
// Optimes name entries uniquely across the set (one primary per term, increasing timestamps),
// so equal optimes mean the same entry and everything up to it is shared (log matching).
//
// Thread rules: free functions on values; no state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/optime.h"
#include "bson/value.h"

namespace mongosim::repl {

// Longest divergence a member rolls back instead of asking for a resync, in entries; mongod
// limits by time (rollbackTimeLimitSecs, 86400), this also limits by size.
inline constexpr size_t kMaxRollbackEntries = 100'000;
inline constexpr int64_t kRollbackTimeLimitSecs = 86'400;

struct RollbackEntry {
  OpTime optime;
  char op = 'n';   // i, u, d, c, n as in the oplog
  std::string ns;  // db.collection; empty for no-ops
  bson::Value id;  // the document's _id for i/u/d; null otherwise
};

struct DocumentKey {
  std::string ns;
  bson::Value id;
};

struct RollbackPlan {
  bool needs_resync = false;  // no usable common point: the member must resync from scratch
  std::string resync_reason;  // why, when needs_resync
  OpTime common_point;        // null when the local log is empty or everything diverged
  std::vector<RollbackEntry> to_undo;  // local entries after the common point, newest first
  // Documents touched by to_undo, each once, in to_undo order: their current version goes to
  // the rollback file, then each is restored to the source's version (or removed if it has none).
  std::vector<DocumentKey> documents;
};

// Both inputs are in ascending optime order (checked: throws std::invalid_argument naming the
// side and index of the first out-of-order entry).
RollbackPlan plan_rollback(const std::vector<RollbackEntry>& local,
                           const std::vector<OpTime>& remote);

}  // namespace mongosim::repl
