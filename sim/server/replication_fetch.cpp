// The oplog fetcher of a secondary (and of a primary in catch-up), and the sync-source side of
// fetching (replSetFetchOplog). The fetcher's rules under the ReplStateLock: replication.h.
#include <algorithm>
#include <chrono>

#include "base/error_codes.h"
#include "base/log.h"
#include "server/member_client.h"
#include "server/replication.h"
#include "server/replication_fields.h"

namespace mongosim::server {

using namespace replication_fields;

namespace {

constexpr int64_t kFetchIdleMs = 20;
constexpr int64_t kFetchErrorBackoffMs = 200;

}  // namespace

void ReplicationCoordinator::fetch_loop() {
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    bool fetched = false;
    try {
      fetched = fetch_once();
    } catch (const std::exception& e) {  // a bad entry or reply: retry from the source
      log_event(Severity::kWarning, "REPL", 21110, "replication", "Cannot apply oplog entry",
                bson::Document{{"error", bson::V(std::string(e.what()))}});
      if (!sleep_ms(kFetchErrorBackoffMs)) return;
    }
    if (!fetched && !sleep_ms(kFetchIdleMs)) return;
  }
}

// One round: fetch a batch after our newest entry, re-validate it under the ReplStateLock, apply
// it, report. Returns whether anything was applied (then the next round starts at once).
bool ReplicationCoordinator::fetch_once() {
  int source = -1;
  int rollback_source = -1;
  int64_t term = 0;
  std::string host;
  {
    std::lock_guard lock(mutex_);
    if (!topology_ || needs_resync_) return false;
    std::swap(rollback_source, rollback_source_);
    if (rollback_source < 0 && !fetching_allowed_locked()) return false;
    source = topology_->sync_source();
    if (rollback_source < 0 && source < 0) return false;
    term = topology_->term();
    if (source >= 0) host = topology_->config().members[static_cast<size_t>(source)].host;
  }
  if (rollback_source >= 0) {
    run_rollback(rollback_source);
    return true;
  }
  // Counted only when a fetch would be sent (a rollback round is not one).
  if (server_.failpoints.fires("stopReplProducer")) return false;
  OpTime after = storage_.last_applied();
  bson::Document cmd{{"replSetFetchOplog", bson::V(int32_t{1})},
                     {"after", bson::V(after.to_document())},
                     {"limit", bson::V(static_cast<int64_t>(kFetchBatchEntries))}};
  MemberReply reply = member_command(host, std::move(cmd), kFetchTimeoutMs);
  if (!reply_ok(reply)) {
    sleep_ms(kFetchErrorBackoffMs);
    return false;
  }
  const bson::Document& b = *reply.body;
  Actions actions;
  size_t applied_count = 0;
  std::string stale;
  {
    ReplStateLock::Shared hold(repl_state_lock_);
    stale = stale_batch_reason(hold, term, source, after);
    if (stale.empty() && !bool_field(b, "found")) {
      std::lock_guard lock(mutex_);
      topology_->on_oplog_diverged(now_ms(), source);
      actions = drain_locked();
    } else if (stale.empty()) {
      if (const bson::Value* entries = b.get("entries");
          entries != nullptr && entries->is_array()) {
        for (const auto& e : entries->as_array()) {
          if (!e.is_document()) continue;
          storage_.apply_oplog_entry(e.as_document());
          ++applied_count;
        }
      }
    }
  }
  if (!stale.empty()) {
    log_event(Severity::kInfo, "REPL", 21302, "BackgroundSync",
              "Dropped a fetched oplog batch that no longer applies",
              bson::Document{{"reason", bson::V(stale)}, {"syncSource", bson::V(host)}});
    return false;
  }
  if (actions.empty()) {
    OpTime now_applied = storage_.last_applied();
    // The batch is reported durable only once journaled: the primary's commit point counts
    // durable optimes (docs/mongodb-behaviour.md, Oplog and rollback), and one fsync covers the
    // whole batch.
    if (applied_count > 0) storage_.wait_durable(now_applied);
    OpTime now_durable = storage_.last_durable();
    std::lock_guard lock(mutex_);
    if (reported_applied_ < now_applied || reported_durable_ < now_durable) {
      reported_applied_ = std::max(reported_applied_, now_applied);
      reported_durable_ = std::max(reported_durable_, now_durable);
      topology_->on_my_optimes(now_ms(), now_applied, now_durable);
    }
    topology_->on_sync_source_progress(now_ms(), int_field(b, "term", 0),
                                       optime_field(b, "lastCommittedOpTime"));
    actions = drain_locked();
  }
  perform(std::move(actions));
  if (applied_count > 0) report_position();
  return applied_count > 0;
}

bool ReplicationCoordinator::fetching_allowed_locked() const {
  if (topology_->state() == MemberState::kSecondary) return true;
  // A primary in catch-up fetches from its catch-up target (the topology's sync source then).
  return topology_->state() == MemberState::kPrimary && !topology_->is_writable_primary() &&
         !step_down_attempt_ && topology_->sync_source() >= 0;
}

std::string ReplicationCoordinator::stale_batch_reason(const ReplStateLock::Shared& hold,
                                                       int64_t term, int source, OpTime after) {
  if (hold.state().writable) return "this member is a writable primary";
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return "shutting down";
    if (needs_resync_ || rollback_source_ >= 0) return "a rollback is pending";
    if (!fetching_allowed_locked()) return "this member's state changed";
    if (topology_->term() != term) return "the term changed";
    if (topology_->sync_source() != source) return "the sync source changed";
  }
  // Nothing else appends while the lock is held shared and nothing is published writable.
  if (storage_.last_applied() != after) return "the oplog no longer ends where the fetch started";
  return "";
}

void ReplicationCoordinator::report_position() {
  std::string host;
  bson::Document cmd;
  {
    std::lock_guard lock(mutex_);
    int primary = topology_->primary_index();
    if (primary < 0 || primary == topology_->self_index()) return;
    host = topology_->config().members[static_cast<size_t>(primary)].host;
    cmd = bson::Document{{"replSetUpdatePosition", bson::V(int32_t{1})},
                         {"fromIndex", bson::V(int32_t{topology_->self_index()})},
                         {"term", bson::V(topology_->term())},
                         {"appliedOpTime", bson::V(topology_->applied().to_document())},
                         {"durableOpTime", bson::V(topology_->durable().to_document())}};
  }
  member_command(host, std::move(cmd), kMemberCommandTimeoutMs);
}

bson::Document ReplicationCoordinator::handle_fetch_oplog(const bson::Document& body) {
  if (!ensure_topology()) {
    throw CommandError(code::kNotYetInitialized, "no replset config has been received");
  }
  OpTime after = optime_field(body, "after");
  int64_t limit =
      std::clamp<int64_t>(int_field(body, "limit", 1), 1, static_cast<int64_t>(kFetchBatchEntries));
  // "found" and the entries come from one read of the oplog: a rollback or an apply between
  // two reads could answer "found" with entries of a history `after` is not part of.
  std::optional<std::vector<bson::Document>> read =
      storage_.oplog_continuing(after, static_cast<size_t>(limit));
  const bool found = read.has_value();
  bson::Array entries;
  if (found) {
    for (auto& e : *read) entries.push_back(bson::V(std::move(e)));
  }
  std::lock_guard lock(mutex_);
  return bson::Document{
      {"entries", bson::V(std::move(entries))},
      {"found", bson::V(found)},
      {"term", bson::V(topology_->term())},
      {"lastCommittedOpTime", bson::V(topology_->last_committed().to_document())}};
}

}  // namespace mongosim::server
