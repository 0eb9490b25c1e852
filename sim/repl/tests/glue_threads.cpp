// The glue model's thread steps (see glue_model.h): the writer, the fetcher and rollback, and
// the topology actions they and the tick thread perform. Each function is one atomic step; the
// comments name the real code each mirrors and where kOld and kFixed differ.
#include <algorithm>
#include <cassert>
#include <stdexcept>

#include "glue_model.h"
#include "repl/rollback_plan.h"

namespace mongosim::repl::glue {

// --- topology actions (ReplicationCoordinator::drain_locked + perform) -------------------------

bool GlueSim::writable(int member) const {
  const Member& m = at(member);
  return m.topo->is_writable_primary() && !m.step_down_attempt;
}

// A primary still catching up: the topology points its sync source at the catch-up target.
bool GlueSim::catching_up(int member) const {
  const Topology& t = *at(member).topo;
  return t.state() == MemberState::kPrimary && !t.is_writable_primary() && t.sync_source() >= 0;
}

void GlueSim::drain(int member) {
  Member& m = at(member);
  for (int rounds = 0;; ++rounds) {
    assert(rounds < 100 && "actions keep producing actions");
    std::vector<Action> actions = m.topo->take_actions();
    if (actions.empty()) break;
    for (const Action& a : actions) perform(member, a);
  }
  if (m.topo->term() != m.traced_term) {
    m.traced_term = m.topo->term();
    trace_event(member, "now in term " + std::to_string(m.traced_term) + " as " +
                            std::string(member_state_name(m.topo->state())));
  }
  interrupt_writes_if_state_changed(member);
}

void GlueSim::perform(int member, const Action& action) {
  Member& m = at(member);
  switch (action.kind) {
    case ActionKind::kPersistState:
      m.persisted = m.topo->persistent_state();  // before any message of this event leaves
      break;
    case ActionKind::kSendHeartbeat:
      send(member, action.target, m.topo->make_heartbeat_request());
      break;
    case ActionKind::kSendVoteRequest:
      send(member, action.target, action.vote_request);
      break;
    case ActionKind::kSendStepUp:
      send(member, action.target, StepUp{});
      break;
    case ActionKind::kBecomePrimary:
      ++counters_.elections_won;
      trace_event(member, "elected in term " + std::to_string(m.topo->term()) + ", log ends " +
                              describe(m.log.back().optime));
      break;
    case ActionKind::kWriteNewPrimaryNoop:
      write_new_primary_noop(member);
      break;
    case ActionKind::kStepDownAttemptStarted:
      m.step_down_attempt = true;
      break;
    case ActionKind::kStepDownFinished:
      m.step_down_attempt = false;
      break;
    case ActionKind::kStartRollback:
      m.rollback_source = action.target;  // the fetcher thread runs it
      break;
    case ActionKind::kStepDown:
      trace_event(member, "steps down: " + action.reason);
      break;
    case ActionKind::kStepUpFinished:
    case ActionKind::kChangeSyncSource:
    case ActionKind::kCommitPointAdvanced:
      break;  // waiters and the fetcher poll the topology
    case ActionKind::kElectionProgress:
      trace_event(member, action.reason);
      break;
  }
}

// kFixed: step-down and term adoption take the replication-state lock exclusively, which waits
// for the running write's shared hold and interrupts it: the write ends before its next append.
// kOld: nothing stops it; its next append reads whatever term is current.
void GlueSim::interrupt_writes_if_state_changed(int member) {
  Member& m = at(member);
  if (!has_fix(kFixWriteUnderLock) || m.writer.phase != WriterPhase::kAppending) return;
  if (m.topo->term() == m.writer.check_term && writable(member)) return;
  m.writer = Writer{};
  ++counters_.interrupted_writes;
}

// ReplicationCoordinator::note_local_optimes: the store's applied and durable optimes to the
// topology (tick thread, write-concern waiter).
void GlueSim::note_local_optimes(int member) {
  Member& m = at(member);
  if (m.topo->state() == MemberState::kRollback) return;
  OpTime applied = m.log.back().optime;
  OpTime durable = durable_optime(m);
  if (!(m.reported_applied < applied) && !(m.reported_durable < durable)) return;
  m.reported_applied = std::max(m.reported_applied, applied);
  m.reported_durable = std::max(m.reported_durable, durable);
  m.topo->on_my_optimes(now_ms_, applied, durable);
  drain(member);
}

// Every oplog append goes through here: the journal asserts term-first optime order
// (journal.cpp append_entry); a violation is bug B's crash.
void GlueSim::append_entry(int member, const GlueEntry& entry) {
  Member& m = at(member);
  OpTime last = m.log.back().optime;
  if (!(last < entry.optime)) {
    add_finding(FindingKind::kOplogOrder, "m" + std::to_string(member) + " appended " +
                                              describe(entry.optime) + " after " + describe(last));
  }
  m.log.push_back(entry);
}

// Oplog::next_optime on the member's own clock. kOld: the term is max(term, last term), so a
// stale write lands in whatever term the member has adopted; kFixed: exactly the given term.
OpTime GlueSim::append(int member, int64_t term, int64_t write_id) {
  Member& m = at(member);
  OpTime last = m.log.back().optime;
  int64_t clock_ms = now_ms_ + m.clock_offset_ms;
  auto secs = static_cast<uint32_t>(std::max<int64_t>(clock_ms / 1000, 0));
  OpTime next;
  next.term = has_fix(kFixWriteUnderLock) ? term : std::max(term, last.term);
  next.ts = secs > last.ts.seconds ? bson::Timestamp{secs, 1}
                                   : bson::Timestamp{last.ts.seconds, last.ts.increment + 1};
  append_entry(member, GlueEntry{next, write_id});
  return next;
}

// ReplicationCoordinator::write_new_primary_noop, atomic here (kFixed writes it under the
// exclusive lock; kOld's read-term/append split is not modelled).
void GlueSim::write_new_primary_noop(int member) {
  Member& m = at(member);
  int64_t term = m.topo->term();
  OpTime optime = append(member, term, 0);
  if (m.topo->term() != term || m.topo->state() != MemberState::kPrimary) return;
  if (optime.term != term) return;  // kOld: a newer-term tail; the topology would assert
  m.topo->on_my_optimes(now_ms_, optime, durable_optime(m));
  m.topo->on_new_primary_noop_written(now_ms_, optime);
  m.reported_applied = std::max(m.reported_applied, optime);
}

// --- the writer thread (dispatcher + write_commands + store + write-concern waiter) ------------

void GlueSim::writer_check(int member) {
  Member& m = at(member);
  m.next_write_ms = now_ms_ + options_.write_interval_ms;
  if (!writable(member)) return;  // NotWritablePrimary to the client
  m.writer = Writer{};
  m.writer.phase = WriterPhase::kAppending;
  m.writer.check_term = m.topo->term();
  m.writer.appends_left = 1 + static_cast<int>(random(options_.max_appends_per_write - 1));
}

// Store::Impl::append: kOld reads the current term (options.current_term()); kFixed stamps the
// term captured under the shared lock at the check.
void GlueSim::writer_append(int member) {
  Member& m = at(member);
  Writer& w = m.writer;
  int64_t term = has_fix(kFixWriteUnderLock) ? w.check_term : m.topo->term();
  int64_t id = next_write_id_++;
  w.last = append(member, term, id);
  w.ids.push_back(id);
  if (w.last.term != w.check_term) {
    ++counters_.stale_term_appends;
    trace_event(member, "writer appends write " + std::to_string(id) + " at " + describe(w.last) +
                            " after its check passed in term " + std::to_string(w.check_term));
  }
  if (--w.appends_left == 0) w.phase = WriterPhase::kWaiting;
}

// TopologyWriteConcernWaiter + wait_for_write_concern for w:"majority": a forced journal commit,
// note_local_optimes, then poll until the commit point covers the write, the term changes, the
// member stops being writable, or wtimeout.
void GlueSim::writer_wait(int member) {
  Member& m = at(member);
  Writer& w = m.writer;
  if (!w.wait_started) {
    w.wait_started = true;
    m.durable_count = m.log.size();
    note_local_optimes(member);
    w.wait_term = has_fix(kFixWriteUnderLock) ? w.check_term : m.topo->term();
    w.wait_deadline_ms = now_ms_ + kWriteConcernTimeoutMs;
  }
  if (m.topo->term() != w.wait_term || !writable(member) || now_ms_ > w.wait_deadline_ms) {
    m.writer = Writer{};  // PrimarySteppedDown / WriteConcernFailed: not acknowledged
    return;
  }
  if (!(w.last <= m.topo->last_committed())) return;
  for (int64_t id : w.ids) acked_.insert(id);
  trace_event(member, "acknowledges writes " + std::to_string(w.ids.front()) + ".." +
                          std::to_string(w.ids.back()) + " at " + describe(w.last) +
                          " w:majority, commit point " + describe(m.topo->last_committed()));
  counters_.acked_writes += static_cast<int64_t>(w.ids.size());
  m.writer = Writer{};
}

// --- the fetcher thread (replication_fetch.cpp) ------------------------------------------------

// fetch_once up to the network call. kOld: SECONDARY only, checked here and never again;
// kFixed: a catching-up primary fetches too, and what was checked is remembered for the
// re-validation when the reply comes.
void GlueSim::fetcher_start(int member) {
  Member& m = at(member);
  m.next_fetch_ms = now_ms_ + kFetchIdleMs;
  const Topology& t = *m.topo;
  bool may_fetch =
      t.state() == MemberState::kSecondary || (has_fix(kFixCatchUpFetch) && catching_up(member));
  int source = t.sync_source();
  if (!may_fetch || source < 0) return;
  Fetcher& f = m.fetcher;
  f = Fetcher{};
  f.phase = FetcherPhase::kWaiting;
  f.source = source;
  f.after = m.log.back().optime;
  f.term = t.term();
  f.fetch_id = next_fetch_id_++;
  f.deadline_ms = now_ms_ + kFetchTimeoutMs;
  send(member, source, FetchRequest{f.after, f.fetch_id});
}

void GlueSim::fetcher_apply(int member) {
  Member& m = at(member);
  if (!m.fetcher.reply) {  // the fetch timed out
    m.fetcher = Fetcher{};
    m.next_fetch_ms = now_ms_ + kFetchErrorBackoffMs;
    return;
  }
  FetchReply reply = std::move(*m.fetcher.reply);
  if (has_fix(kFixRevalidateBatch) && !batch_still_valid(member)) {
    ++counters_.dropped_batches;
    trace_event(member, "drops a batch fetched after " + describe(m.fetcher.after));
    m.fetcher = Fetcher{};
    return;
  }
  int source = m.fetcher.source;
  if (m.fetcher.term != m.topo->term() || m.topo->state() != MemberState::kSecondary) {
    trace_event(member,
                "fetcher applies a batch fetched from m" + std::to_string(source) + " in term " +
                    std::to_string(m.fetcher.term) + " after " + describe(m.fetcher.after) +
                    "; now " + std::string(member_state_name(m.topo->state())) + " in term " +
                    std::to_string(m.topo->term()) + ", log ends " + describe(m.log.back().optime));
  }
  m.fetcher = Fetcher{};
  if (!reply.found) {
    m.topo->on_oplog_diverged(now_ms_, source);
    drain(member);
    if (m.rollback_source >= 0) return;
  }
  apply_batch(member, reply);
}

// kFixed, under the replication-state lock: the batch belongs to the oplog and role it was
// fetched for.
bool GlueSim::batch_still_valid(int member) const {
  const Member& m = at(member);
  const Topology& t = *m.topo;
  bool role_ok = t.state() == MemberState::kSecondary || catching_up(member);
  return role_ok && t.term() == m.fetcher.term && t.sync_source() == m.fetcher.source &&
         m.log.back().optime == m.fetcher.after;
}

// Store::apply_oplog_entry per entry ("already applied": kOld compares timestamps only, kFixed
// full optimes), one forced journal commit, the optimes to the topology, the position report.
void GlueSim::apply_batch(int member, const FetchReply& reply) {
  Member& m = at(member);
  size_t applied = 0;
  for (const GlueEntry& e : reply.entries) {
    OpTime last = m.log.back().optime;
    bool already = has_fix(kFixFullOptimeCheck) ? !(last < e.optime) : !(last.ts < e.optime.ts);
    if (already) continue;
    append_entry(member, e);
    ++applied;
  }
  if (applied > 0) m.durable_count = m.log.size();
  OpTime now_applied = m.log.back().optime;
  OpTime now_durable = durable_optime(m);
  if (m.reported_applied < now_applied || m.reported_durable < now_durable) {
    m.reported_applied = std::max(m.reported_applied, now_applied);
    m.reported_durable = std::max(m.reported_durable, now_durable);
    m.topo->on_my_optimes(now_ms_, now_applied, now_durable);
  }
  m.topo->on_sync_source_progress(now_ms_, reply.term, reply.committed);
  drain(member);
  if (applied > 0) {
    report_position(member);
    m.next_fetch_ms = now_ms_;  // the next round starts at once
  }
}

void GlueSim::report_position(int member) {
  const Topology& t = *at(member).topo;
  int primary = t.primary_index();
  if (primary < 0 || primary == member) return;
  send(member, primary, UpdatePosition{t.term(), t.applied(), t.durable()});
}

// replication_rollback.cpp, atomic: plan against the source's oplog, truncate (the journal's
// truncation record is synced), tell the topology. An unreachable source is retried later.
void GlueSim::rollback(int member) {
  Member& m = at(member);
  int source = m.rollback_source;
  m.next_fetch_ms = now_ms_ + kFetchErrorBackoffMs;
  if (!up(source) || !running(source) ||
      !links_[static_cast<size_t>(member)][static_cast<size_t>(source)]) {
    return;
  }
  const std::vector<GlueEntry>& remote_log = at(source).log;
  std::vector<RollbackEntry> local;
  for (const GlueEntry& e : m.log) {
    local.push_back(RollbackEntry{e.optime, e.write_id ? 'i' : 'n', e.write_id ? "test.c" : "",
                                  e.write_id ? bson::V(e.write_id) : bson::Value()});
  }
  std::vector<OpTime> remote;
  for (const GlueEntry& e : remote_log) remote.push_back(e.optime);
  RollbackPlan plan;
  try {
    plan = plan_rollback(local, remote);
  } catch (const std::invalid_argument&) {
    plan.needs_resync = true;  // a log already out of order (bug B)
  }
  ++counters_.rollbacks;
  trace_event(member,
              "rolls back against m" + std::to_string(source) + " from " +
                  describe(m.log.back().optime) + " to " +
                  (plan.needs_resync ? std::string("a resync") : describe(plan.common_point)));
  if (plan.needs_resync) {
    // Keep the prefix both logs share and refetch the rest; what this loses is judged at the
    // end by check_acknowledged_writes_survive().
    size_t shared = 0;
    while (shared < m.log.size() && shared < remote_log.size() &&
           m.log[shared].optime == remote_log[shared].optime) {
      ++shared;
    }
    m.log.resize(std::max<size_t>(shared, 1));
  } else {
    std::vector<int64_t> removed;
    for (const RollbackEntry& e : plan.to_undo) {
      removed.push_back(e.id.is_null() ? 0 : e.id.as_int64());
    }
    m.log.resize(m.log.size() - plan.to_undo.size());
    note_removed_writes(member, removed);
  }
  m.durable_count = m.log.size();
  m.rollback_source = -1;
  // min: after bug B the last entry need not be the newest the topology was told about.
  OpTime last = std::min(m.log.back().optime, m.topo->applied());
  m.reported_applied = m.reported_durable = last;
  m.topo->on_rollback_complete(now_ms_, last, last);
  drain(member);
}

void GlueSim::note_removed_writes(int member, const std::vector<int64_t>& removed) {
  const Member& m = at(member);
  for (int64_t id : removed) {
    if (id == 0 || !acked_.count(id)) continue;
    bool kept = std::any_of(m.log.begin(), m.log.end(),
                            [&](const GlueEntry& e) { return e.write_id == id; });
    if (!kept) {
      add_finding(
          FindingKind::kLostMajorityWrite,
          "m" + std::to_string(member) + " rolled back acknowledged write " + std::to_string(id));
    }
  }
}

}  // namespace mongosim::repl::glue
