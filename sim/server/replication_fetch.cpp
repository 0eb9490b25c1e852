// The oplog fetcher of a secondary (and of a primary in catch-up), and the sync-source side of
// fetching (replSetFetchOplog). The fetcher's rules under the ReplStateLock: replication.h.
#include <algorithm>
#include <chrono>

#include "base/error_codes.h"
#include "base/log.h"
#include "bson/codec.h"
#include "server/member_client.h"
#include "server/replication.h"
#include "server/replication_fields.h"

namespace mongosim::server {

using namespace replication_fields;

namespace {

// A fetcher that could not ask (no sync source, not a secondary, a stale batch, a diverged
// history) tries again after this. One that asked and found nothing asks again at once: its
// source already held the fetch up to kFetchAwaitMs for a new entry.
constexpr int64_t kFetchIdleMs = 20;
constexpr int64_t kFetchErrorBackoffMs = 200;

}  // namespace

void ReplicationCoordinator::fetch_loop() {
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    FetchRound round = FetchRound::kIdle;
    try {
      round = fetch_once();
    } catch (const std::exception& e) {  // a bad entry or reply: retry from the source
      log_event(Severity::kWarning, "REPL", 21110, "replication", "Cannot apply oplog entry",
                bson::Document{{"error", bson::V(std::string(e.what()))}});
      if (!sleep_ms(kFetchErrorBackoffMs)) return;
    }
    if (round == FetchRound::kIdle && !sleep_ms(kFetchIdleMs)) return;
  }
}

// One round: fetch a batch after our newest entry (the source holds the fetch until there is
// one, or kFetchAwaitMs), re-validate it under the ReplStateLock, apply it, report.
ReplicationCoordinator::FetchRound ReplicationCoordinator::fetch_once() {
  int source = -1;
  int rollback_source = -1;
  int64_t term = 0;
  OpTime known_committed;
  std::string host;
  {
    std::lock_guard lock(mutex_);
    if (!topology_ || needs_resync_) return FetchRound::kIdle;
    std::swap(rollback_source, rollback_source_);
    if (rollback_source < 0 && !fetching_allowed_locked()) return FetchRound::kIdle;
    source = topology_->sync_source();
    if (rollback_source < 0 && source < 0) return FetchRound::kIdle;
    term = topology_->term();
    known_committed = topology_->last_committed();
    if (source >= 0) host = topology_->config().members[static_cast<size_t>(source)].host;
  }
  if (rollback_source >= 0) {
    run_rollback(rollback_source);
    return FetchRound::kApplied;
  }
  // Counted only when a fetch would be sent (a rollback round is not one).
  if (server_.failpoints.fires("stopReplProducer")) return FetchRound::kIdle;
  OpTime after = storage_.last_applied();
  bson::Document cmd{{"replSetFetchOplog", bson::V(int32_t{1})},
                     {"after", bson::V(after.to_document())},
                     {"limit", bson::V(static_cast<int64_t>(kFetchBatchEntries))},
                     {"maxAwaitMs", bson::V(kFetchAwaitMs)},
                     {"lastKnownCommittedOpTime", bson::V(known_committed.to_document())}};
  MemberReply reply = member_command(host, std::move(cmd), kFetchTimeoutMs);
  if (!reply_ok(reply)) {
    sleep_ms(kFetchErrorBackoffMs);
    return FetchRound::kIdle;
  }
  const bson::Document& b = *reply.body;
  Actions actions;
  size_t applied_count = 0;
  std::string stale;
  const bool diverged = !bool_field(b, "found");
  bool commit_point_behind = false;
  {
    ReplStateLock::Shared hold(repl_state_lock_);
    stale = stale_batch_reason(hold, term, source, after);
    if (stale.empty() && diverged) {
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
    return FetchRound::kIdle;
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
    const OpTime source_committed = optime_field(b, "lastCommittedOpTime");
    topology_->on_sync_source_progress(now_ms(), term_field(b, "term", 0), source_committed);
    // A commit point this member may not adopt (a primary catching up adopts none) would be
    // news to the source on every fetch: it would answer at once, every time.
    commit_point_behind = topology_->last_committed() < source_committed;
    actions = drain_locked();
  }
  perform(std::move(actions));
  if (applied_count > 0) {
    report_position();
    return FetchRound::kApplied;
  }
  return diverged || commit_point_behind ? FetchRound::kIdle : FetchRound::kNothingNew;
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

std::optional<std::vector<bson::Document>> ReplicationCoordinator::await_oplog_after(
    OpTime after, size_t limit, int64_t await_ms, std::optional<OpTime> known_committed) {
  ChangeSignal& signal = server_.change_signal;
  // Read before the look: a change between the look and the wait is not lost.
  uint64_t seen = signal.generation();
  std::optional<std::vector<bson::Document>> read = storage_.oplog_continuing(after, limit);
  if (!read || !read->empty() || await_ms <= 0) return read;
  // The fetcher learns the commit point from the answer: one newer than it knows is news. A
  // fetcher that did not say what it knows is compared with the commit point of now.
  const auto news = [&] {
    std::lock_guard lock(mutex_);
    if (!known_committed) known_committed = topology_->last_committed();
    return *known_committed < topology_->last_committed();
  };
  if (news()) return read;
  const auto deadline = ChangeSignal::Clock::now() + std::chrono::milliseconds(await_ms);
  while (signal.wait_for_change(seen, deadline, ChangeSignal::Waiter::kOplogFetch)) {
    // An empty answer now would send the fetcher straight back: it backs off from an error.
    if (signal.shutting_down())
      throw CommandError(code::kInterruptedAtShutdown, "interrupted at shutdown");
    seen = signal.generation();
    read = storage_.oplog_continuing(after, limit);
    if (!read || !read->empty() || news()) return read;
  }
  return read;
}

bson::Document ReplicationCoordinator::handle_fetch_oplog(const bson::Document& body) {
  require_topology_of_this_set(body);
  OpTime after = optime_field(body, "after");
  int64_t limit =
      std::clamp<int64_t>(int_field(body, "limit", 1), 1, static_cast<int64_t>(kFetchBatchEntries));
  int64_t await_ms = 0;
  if (const bson::Value* v = body.get("maxAwaitMs")) {
    if (!v->is_number() || !(v->number_as_double() >= 0)) {
      throw CommandError(code::kBadValue,
                         "replSetFetchOplog: maxAwaitMs must be a non-negative number, not " +
                             bson::to_json(bson::Document{{"maxAwaitMs", *v}}));
    }
    await_ms = static_cast<int64_t>(
        std::min(v->number_as_double(), static_cast<double>(kFetchAwaitMaxMs)));
  }
  std::optional<OpTime> known_committed;
  if (const bson::Value* v = body.get("lastKnownCommittedOpTime")) {
    const bson::Value* ts = v->is_document() ? v->as_document().get("ts") : nullptr;
    const bson::Value* t = v->is_document() ? v->as_document().get("t") : nullptr;
    if (ts == nullptr || ts->type() != bson::Type::kTimestamp || t == nullptr || !t->is_number()) {
      throw CommandError(code::kBadValue,
                         "replSetFetchOplog: lastKnownCommittedOpTime must be {ts: <timestamp>, "
                         "t: <term>}, not " +
                             bson::to_json(bson::Document{{"lastKnownCommittedOpTime", *v}}));
    }
    known_committed = optime_field(body, "lastKnownCommittedOpTime");
  }
  // "found" and the entries come from one read of the oplog: a rollback or an apply between
  // two reads could answer "found" with entries of a history `after` is not part of.
  std::optional<std::vector<bson::Document>> read =
      await_oplog_after(after, static_cast<size_t>(limit), await_ms, known_committed);
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
