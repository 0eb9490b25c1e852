#include "repl/rollback_plan.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "bson/codec.h"

namespace mongosim::repl {

namespace {

template <typename T, typename Key>
void check_ascending(const std::vector<T>& entries, Key key, const char* side) {
  for (size_t i = 1; i < entries.size(); ++i) {
    if (!(key(entries[i - 1]) < key(entries[i]))) {
      throw std::invalid_argument(std::string("rollback: ") + side + " oplog is not in ascending " +
                                  "optime order at index " + std::to_string(i));
    }
  }
}

// A byte string that is equal exactly when (ns, _id) is, for de-duplication.
std::string key_bytes(const RollbackEntry& e) {
  return e.ns + '\0' + bson::encode_document(bson::Document{{"_id", e.id}});
}

bool touches_document(const RollbackEntry& e) {
  return e.op == 'i' || e.op == 'u' || e.op == 'd';
}

}  // namespace

RollbackPlan plan_rollback(const std::vector<RollbackEntry>& local,
                           const std::vector<OpTime>& remote) {
  check_ascending(
      local, [](const RollbackEntry& e) { return e.optime; }, "local");
  check_ascending(
      remote, [](const OpTime& t) { return t; }, "remote");
  RollbackPlan plan;
  // Walk the local log newest-first until an entry the source also has.
  size_t keep = local.size();
  while (keep > 0 && !std::binary_search(remote.begin(), remote.end(), local[keep - 1].optime)) {
    --keep;
  }
  if (keep == 0 && !local.empty() && !remote.empty() && remote.front() <= local.front().optime) {
    // The source's oplog reaches back before ours yet shares no entry: nothing is common.
    plan.needs_resync = true;
    plan.resync_reason = "no common point found between the local and the sync source's oplog";
    return plan;
  }
  if (keep == 0 && !local.empty() && !remote.empty()) {
    plan.needs_resync = true;
    plan.resync_reason = "the sync source's oplog starts after our newest shared entry";
    return plan;
  }
  if (keep > 0) plan.common_point = local[keep - 1].optime;
  size_t undo_count = local.size() - keep;
  if (undo_count > kMaxRollbackEntries) {
    plan.needs_resync = true;
    plan.resync_reason = "rollback of " + std::to_string(undo_count) +
                         " entries exceeds the limit of " + std::to_string(kMaxRollbackEntries);
    return plan;
  }
  if (undo_count > 0 && keep > 0) {
    int64_t span = static_cast<int64_t>(local.back().optime.ts.seconds) -
                   static_cast<int64_t>(plan.common_point.ts.seconds);
    if (span > kRollbackTimeLimitSecs) {
      plan.needs_resync = true;
      plan.resync_reason = "rollback time limit exceeded: " + std::to_string(span) + " s > " +
                           std::to_string(kRollbackTimeLimitSecs) + " s";
      return plan;
    }
  }
  std::set<std::string> seen;
  for (size_t i = local.size(); i > keep; --i) {
    const RollbackEntry& e = local[i - 1];
    plan.to_undo.push_back(e);
    if (touches_document(e) && seen.insert(key_bytes(e)).second) {
      plan.documents.push_back(DocumentKey{e.ns, e.id});
    }
  }
  return plan;
}

}  // namespace mongosim::repl
