// Topology's oplog side (docs/mongodb-behaviour.md, Oplog and rollback): this member's and the
// others' optimes, the majority commit point, sync-source choice and rollback. The election side is
// in topology.cpp.
#include <algorithm>
#include <cassert>
#include <vector>

#include "repl/topology.h"

namespace mongosim::repl {

// --- oplog progress, commit point, sync source (docs/mongodb-behaviour.md, Oplog and rollback) --

void Topology::on_my_optimes(int64_t now_ms, OpTime applied, OpTime durable) {
  applied_ = std::max(applied_, applied);
  durable_ = std::max(durable_, durable);
  if (state_ == MemberState::kPrimary) {
    update_commit_point_as_primary();
    check_catch_up(now_ms);
    check_step_down_attempt(now_ms);
  }
}

// The term check comes first: a member that voted in a newer term may go on fetching from (and
// reporting to) the old primary, and reports entries the new primary may not have. Adopting the
// term steps this primary down before the report could count towards a commit point.
void Topology::on_position_update(int64_t now_ms, int from, int64_t sender_term, OpTime applied,
                                  OpTime durable) {
  if (from < 0 || from >= config_.member_count() || from == self_) return;
  adopt_term(now_ms, sender_term);
  on_position_update(now_ms, from, applied, durable);
}

void Topology::on_position_update(int64_t now_ms, int from, OpTime applied, OpTime durable) {
  if (from < 0 || from >= config_.member_count() || from == self_) return;
  MemberView& m = members_[static_cast<size_t>(from)];
  m.applied = std::max(m.applied, applied);
  m.durable = std::max(m.durable, durable);
  if (state_ == MemberState::kPrimary) {
    update_commit_point_as_primary();
    check_step_down_attempt(now_ms);
  }
}

void Topology::on_sync_source_progress(int64_t now_ms, int64_t source_term,
                                       OpTime source_committed) {
  adopt_term(now_ms, source_term);
  learn_commit_point(source_committed);
}

// The writeMajority-th highest durable optime among voting data-bearing members; advances only
// to an optime of the current term (a primary cannot count old-term entries by replicas;
// docs/mongodb-behaviour.md, Oplog and rollback), and never backwards.
void Topology::update_commit_point_as_primary() {
  std::vector<OpTime> durable;
  for (int i = 0; i < config_.member_count(); ++i) {
    const MemberConfig& m = config_.members[static_cast<size_t>(i)];
    if (!m.is_voter() || !m.is_data_bearing()) continue;
    durable.push_back(i == self_ ? durable_ : members_[static_cast<size_t>(i)].durable);
  }
  size_t k = static_cast<size_t>(config_.write_majority_count());
  if (k == 0 || durable.size() < k) return;
  std::sort(durable.begin(), durable.end(), std::greater<>());
  OpTime candidate = std::min(durable[k - 1], durable_);
  if (candidate.term != persisted_.term || candidate <= committed_) return;
  committed_ = candidate;
  emit(Action{.kind = ActionKind::kCommitPointAdvanced, .optime = committed_});
}

// A non-primary adopts a commit point only up to what it has applied, and only when its own
// newest entry is of the commit point's term or later: an older-term tail may be a branch that
// will be rolled back, and must never be reported as committed.
void Topology::learn_commit_point(OpTime committed) {
  if (state_ == MemberState::kPrimary || state_ == MemberState::kRollback) return;
  if (applied_.term < committed.term) return;
  OpTime candidate = std::min(committed, applied_);
  if (candidate <= committed_) return;
  committed_ = candidate;
  emit(Action{.kind = ActionKind::kCommitPointAdvanced, .optime = committed_});
}

// A member we may keep fetching from: up, data-bearing, PRIMARY or SECONDARY (only PRIMARY
// without chaining). How far ahead it is does not matter once chosen.
bool Topology::is_usable_sync_source(int64_t now_ms, int index) const {
  if (index < 0 || index == self_ || !member_is_up(now_ms, index)) return false;
  if (!config_.members[static_cast<size_t>(index)].is_data_bearing()) return false;
  const MemberView& m = members_[static_cast<size_t>(index)];
  if (m.state != MemberState::kPrimary && m.state != MemberState::kSecondary) return false;
  return config_.settings.chaining_allowed || m.state == MemberState::kPrimary;
}

// A member worth switching to: usable, and at least as far as we are by its last heartbeat.
bool Topology::is_good_sync_source(int64_t now_ms, int index) const {
  return is_usable_sync_source(now_ms, index) &&
         members_[static_cast<size_t>(index)].applied >= applied_;
}

// Prefer the primary when it is good; otherwise keep a usable source; otherwise the reachable
// member with the newest optime beyond ours. Keeping a source we have caught up with follows
// mongod, which changes sync source only when the current one becomes unusable: the heartbeat
// view of the source's optime lags what we fetch from it, and dropping the source on that view
// would stall replication until the next heartbeat (up to heartbeatIntervalMillis per write).
void Topology::choose_sync_source(int64_t now_ms) {
  if (state_ != MemberState::kSecondary) return;
  int chosen = -1;
  if (is_good_sync_source(now_ms, primary_)) {
    chosen = primary_;
  } else if (is_usable_sync_source(now_ms, sync_source_)) {
    chosen = sync_source_;
  } else {
    for (int i = 0; i < config_.member_count(); ++i) {
      if (!is_good_sync_source(now_ms, i)) continue;
      const MemberView& m = members_[static_cast<size_t>(i)];
      if (m.applied <= applied_) continue;
      if (chosen < 0 || m.applied > members_[static_cast<size_t>(chosen)].applied) chosen = i;
    }
  }
  if (chosen == sync_source_) return;
  sync_source_ = chosen;
  emit(Action{.kind = ActionKind::kChangeSyncSource, .target = chosen});
}

// --- rollback ---------------------------------------------------------------------------------

void Topology::on_oplog_diverged(int64_t now_ms, int source) {
  (void)now_ms;
  if (state_ == MemberState::kPrimary && catch_up_.active && source == catch_up_.target_index) {
    // The member we were catching up from is on another branch: nothing to catch up to.
    finish_catch_up();
    return;
  }
  if (state_ != MemberState::kSecondary || is_candidate()) return;
  state_ = MemberState::kRollback;
  emit(
      Action{.kind = ActionKind::kStartRollback,
             .target = source,
             .reason = "the sync source's oplog and our oplog have diverged, going into rollback"});
}

void Topology::on_rollback_complete(int64_t now_ms, OpTime applied, OpTime durable) {
  if (state_ != MemberState::kRollback) return;
  assert(applied <= applied_);
  state_ = MemberState::kSecondary;
  applied_ = applied;
  durable_ = durable;
  // The commit point is never above the common point: rollback never removes committed entries.
  committed_ = std::min(committed_, applied_);
  arm_election_timer(now_ms);
}

}  // namespace mongosim::repl
