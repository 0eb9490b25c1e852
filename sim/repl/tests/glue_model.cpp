// The glue model's scheduler, network, members and faults (see glue_model.h); the threads'
// steps are in glue_threads.cpp.
#include "glue_model.h"

#include <algorithm>
#include <cassert>

#include "base/command_error.h"
#include "cluster_sim.h"

namespace mongosim::repl::glue {

namespace {

constexpr int64_t kStartMs = 1'700'000'000'000;  // a fixed epoch keeps timestamps realistic
const GlueEntry kInitiateEntry{OpTime{bson::Timestamp{1, 1}, 0}, 0};

}  // namespace

const char* finding_name(FindingKind kind) {
  switch (kind) {
    case FindingKind::kLostMajorityWrite:
      return "A: acknowledged w:majority write lost";
    case FindingKind::kOplogOrder:
      return "B: oplog out of optime order";
    case FindingKind::kNoWritablePrimary:
      return "E: no writable primary after the faults healed";
  }
  return "?";
}

std::string describe(OpTime optime) {
  return "(" + std::to_string(optime.term) + "," + std::to_string(optime.ts.seconds % 1000) + "." +
         std::to_string(optime.ts.increment) + ")";
}

GlueSim::GlueSim(const GlueOptions& options)
    : options_(options),
      config_(sim::simulated_config(options.members, options.election_timeout_ms,
                                    options.heartbeat_interval_ms)),
      rng_(options.seed),
      start_ms_(kStartMs),
      now_ms_(kStartMs) {
  assert(options.members >= 1 && options.members <= kMaxVotingMembers);
  assert(options.max_appends_per_write >= 1 && options.slot_ms > 0);
  for (int i = 0; i < options.members; ++i) {
    Member m;
    m.log = {kInitiateEntry};
    m.reported_applied = m.reported_durable = kInitiateEntry.optime;
    Topology::Options t{.self_index = i,
                        .seed = options.seed * 1000003u + static_cast<uint64_t>(i),
                        .persisted = {},
                        .applied = kInitiateEntry.optime,
                        .durable = kInitiateEntry.optime,
                        .now_ms = now_ms_};
    m.topo.emplace(config_, t);
    members_.push_back(std::move(m));
  }
  links_.assign(members_.size(), std::vector<bool>(members_.size(), true));
}

int64_t GlueSim::random(int64_t max_inclusive) {
  return sim::splitmix_draw(rng_, max_inclusive);
}

void GlueSim::add_finding(FindingKind kind, const std::string& what) {
  if (findings_.size() >= kMaxFindings) return;
  findings_.push_back(Finding{kind, elapsed_ms(), what});
}

void GlueSim::trace_event(int member, const std::string& what) {
  if (!options_.trace || trace_.size() >= kMaxTraceEvents) return;
  std::string who = member >= 0 ? " m" + std::to_string(member) + " " : " ";
  trace_.push_back("t=" + std::to_string(elapsed_ms()) + who + what);
}

// --- the scheduler -----------------------------------------------------------------------------

void GlueSim::run_for(int64_t duration_ms) {
  int64_t end = now_ms_ + duration_ms;
  while (now_ms_ < end) step();
}

// One slot: messages due are handled (each handler atomic), crashed members whose downtime
// is over restart, then every runnable thread step runs or is preempted, in a random order.
void GlueSim::step() {
  now_ms_ += options_.slot_ms;
  deliver_due_messages();
  restart_due_members();
  run_threads();
}

bool GlueSim::running(int member) const {
  return up(member) && at(member).paused_until_ms <= now_ms_;
}

void GlueSim::run_threads() {
  std::vector<std::pair<int, ThreadKind>> runnable;
  for (int i = 0; i < member_count(); ++i) {
    for (int t = 0; t < kThreadKinds; ++t) {
      auto kind = static_cast<ThreadKind>(t);
      if (thread_runnable(i, kind)) runnable.emplace_back(i, kind);
    }
  }
  for (size_t i = runnable.size(); i > 1; --i) {
    std::swap(runnable[i - 1], runnable[static_cast<size_t>(random(static_cast<int64_t>(i - 1)))]);
  }
  for (auto [member, kind] : runnable) {
    if (random(99) >= options_.run_percent) continue;  // preempted for this slot
    if (thread_runnable(member, kind)) run_thread(member, kind);
  }
}

bool GlueSim::thread_runnable(int member, ThreadKind thread) const {
  if (!running(member)) return false;
  const Member& m = at(member);
  if (m.stalled_until_ms[static_cast<size_t>(thread)] > now_ms_) return false;
  switch (thread) {
    case ThreadKind::kWriter:
      return m.writer.phase != WriterPhase::kIdle ||
             (!writes_stopped_ && now_ms_ >= m.next_write_ms);
    case ThreadKind::kTicker:
      return now_ms_ >= m.next_tick_ms;
    case ThreadKind::kFlusher:
      return now_ms_ >= m.next_flush_ms;
    case ThreadKind::kFetcher:
      if (m.fetcher.phase == FetcherPhase::kWaiting) {
        return m.fetcher.reply.has_value() || now_ms_ >= m.fetcher.deadline_ms;
      }
      return now_ms_ >= m.next_fetch_ms;
  }
  return false;
}

void GlueSim::run_thread(int member, ThreadKind thread) {
  Member& m = at(member);
  switch (thread) {
    case ThreadKind::kWriter:
      if (m.writer.phase == WriterPhase::kIdle)
        writer_check(member);
      else if (m.writer.phase == WriterPhase::kAppending)
        writer_append(member);
      else
        writer_wait(member);
      break;
    case ThreadKind::kTicker:
      m.next_tick_ms = now_ms_ + kTickIntervalMs;
      note_local_optimes(member);
      m.topo->tick(now_ms_);
      drain(member);
      break;
    case ThreadKind::kFlusher:
      m.next_flush_ms = now_ms_ + kFlushIntervalMs;
      m.durable_count = m.log.size();  // group commit: one fsync covers every append so far
      break;
    case ThreadKind::kFetcher:
      if (m.rollback_source >= 0)
        rollback(member);
      else if (m.fetcher.phase == FetcherPhase::kIdle)
        fetcher_start(member);
      else
        fetcher_apply(member);
      break;
  }
}

// --- the network -------------------------------------------------------------------------------

bool GlueSim::reply_expired(int64_t request_sent_ms, int64_t timeout_ms) const {
  return now_ms_ - request_sent_ms > timeout_ms;  // the sender's command timed out
}

void GlueSim::send(int from, int to, Payload payload) {
  if (!links_[static_cast<size_t>(from)][static_cast<size_t>(to)]) return;
  if (queue_.size() >= kMaxMessagesInFlight) {
    add_finding(FindingKind::kNoWritablePrimary, "message queue overflow");
    return;
  }
  int64_t delay = 1 + random(std::max<int64_t>(0, options_.max_delay_ms - 1));
  queue_.push(Message{now_ms_ + delay, next_seq_++, from, to, at(from).incarnation, now_ms_,
                      std::move(payload)});
}

void GlueSim::deliver_due_messages() {
  while (!queue_.empty() && queue_.top().deliver_ms <= now_ms_) {
    Message m = queue_.top();
    queue_.pop();
    if (!links_[static_cast<size_t>(m.from)][static_cast<size_t>(m.to)]) continue;
    if (!up(m.to)) continue;  // the connection died with the process
    if (at(m.to).paused_until_ms > now_ms_) {
      m.deliver_ms = at(m.to).paused_until_ms;  // the kernel holds it until SIGCONT
      m.seq = next_seq_++;
      queue_.push(std::move(m));
      continue;
    }
    deliver(m);
  }
}

void GlueSim::deliver(const Message& msg) {
  int to = msg.to;
  Topology& topo = *at(to).topo;
  if (auto* hb = std::get_if<HeartbeatRequest>(&msg.payload)) {
    HeartbeatResponse response = topo.on_heartbeat_request(now_ms_, *hb);
    drain(to);
    send(to, msg.from, HeartbeatReply{response, msg.sent_ms});
  } else if (auto* hr = std::get_if<HeartbeatReply>(&msg.payload)) {
    if (reply_expired(hr->request_sent_ms, kMemberCommandTimeoutMs)) return;
    topo.on_heartbeat_response(now_ms_, msg.from, hr->response);
    drain(to);
  } else if (auto* vr = std::get_if<VoteRequest>(&msg.payload)) {
    VoteResponse response = topo.on_vote_request(now_ms_, *vr);
    drain(to);  // the vote is persisted before the reply leaves
    send(to, msg.from, VoteReply{*vr, response, msg.sent_ms});
  } else if (auto* reply = std::get_if<VoteReply>(&msg.payload)) {
    if (reply_expired(reply->request_sent_ms, kMemberCommandTimeoutMs)) return;
    topo.on_vote_response(now_ms_, msg.from, reply->sent, reply->response);
    drain(to);
  } else if (auto* fq = std::get_if<FetchRequest>(&msg.payload)) {
    on_fetch_request(to, msg.from, *fq, msg.sent_ms);
  } else if (auto* fr = std::get_if<FetchReply>(&msg.payload)) {
    Fetcher& f = at(to).fetcher;
    if (f.phase != FetcherPhase::kWaiting || f.fetch_id != fr->fetch_id) return;
    if (reply_expired(fr->request_sent_ms, kFetchTimeoutMs)) return;
    f.reply = *fr;  // the fetcher thread wakes up with it
  } else if (auto* up_msg = std::get_if<UpdatePosition>(&msg.payload)) {
    topo.on_position_update(now_ms_, msg.from, up_msg->term, up_msg->applied, up_msg->durable);
    drain(to);
  } else if (std::holds_alternative<StepUp>(msg.payload)) {
    try {
      topo.step_up(now_ms_, true);
    } catch (const CommandError&) {
      // No longer electable: the handoff is lost and the election timer acts instead.
    }
    drain(to);
  }
}

// replSetFetchOplog on the source: entries after `after` if it has `after`, else found=false.
void GlueSim::on_fetch_request(int member, int from, const FetchRequest& request, int64_t sent_ms) {
  const Member& m = at(member);
  FetchReply reply{request.fetch_id, false, m.topo->term(), m.topo->last_committed(), {}, sent_ms};
  auto it = std::find_if(m.log.begin(), m.log.end(),
                         [&](const GlueEntry& e) { return e.optime == request.after; });
  reply.found = it != m.log.end();
  for (const GlueEntry& e : m.log) {
    if (!reply.found || reply.entries.size() >= kFetchBatchEntries) break;
    if (request.after < e.optime) reply.entries.push_back(e);
  }
  send(member, from, std::move(reply));
}

// --- faults ------------------------------------------------------------------------------------

void GlueSim::heal() {
  size_t n = members_.size();
  trace_event(-1, "all links healed");
  links_.assign(n, std::vector<bool>(n, true));
}

void GlueSim::isolate(int member) {
  trace_event(member, "isolated");
  for (int i = 0; i < member_count(); ++i) {
    if (i == member) continue;
    links_[static_cast<size_t>(i)][static_cast<size_t>(member)] = false;
    links_[static_cast<size_t>(member)][static_cast<size_t>(i)] = false;
  }
}

void GlueSim::split(uint32_t group_mask) {
  trace_event(-1, "split, mask " + std::to_string(group_mask));
  for (int i = 0; i < member_count(); ++i) {
    for (int j = 0; j < member_count(); ++j) {
      bool same = ((group_mask >> i) & 1u) == ((group_mask >> j) & 1u);
      links_[static_cast<size_t>(i)][static_cast<size_t>(j)] = same;
    }
  }
}

void GlueSim::pause(int member, int64_t duration_ms) {
  Member& m = at(member);
  m.paused_until_ms = std::max(m.paused_until_ms, now_ms_ + duration_ms);
  trace_event(member, "paused for " + std::to_string(duration_ms) + "ms");
  faults_end_ms_ = std::max(faults_end_ms_, m.paused_until_ms);
}

void GlueSim::stall(int member, ThreadKind thread, int64_t duration_ms) {
  int64_t& until = at(member).stalled_until_ms[static_cast<size_t>(thread)];
  until = std::max(until, now_ms_ + duration_ms);
  static const char* names[] = {"writer", "ticker", "flusher", "fetcher"};
  trace_event(member, std::string(names[static_cast<int>(thread)]) + " thread stalled for " +
                          std::to_string(duration_ms) + "ms");
  faults_end_ms_ = std::max(faults_end_ms_, until);
}

void GlueSim::set_clock_offset(int member, int64_t offset_ms) {
  at(member).clock_offset_ms = offset_ms;
  trace_event(member, "clock offset " + std::to_string(offset_ms) + "ms");
}

// SIGKILL: the page cache is lost with the process in this model (the journal's unsynced tail
// is gone), the persisted term and vote survive, every thread and connection dies.
void GlueSim::crash(int member, int64_t down_ms) {
  Member& m = at(member);
  if (!m.topo) return;
  ++counters_.crashes;
  trace_event(member, "crashes, log cut to its durable " + describe(durable_optime(m)) + " from " +
                          describe(m.log.back().optime));
  m.log.resize(m.durable_count);
  m.topo.reset();
  m.writer = Writer{};
  m.fetcher = Fetcher{};
  m.rollback_source = -1;
  m.step_down_attempt = false;
  m.paused_until_ms = 0;
  ++m.incarnation;
  m.restart_ms = now_ms_ + down_ms;
  faults_end_ms_ = std::max(faults_end_ms_, m.restart_ms);
}

void GlueSim::restart_due_members() {
  for (int i = 0; i < member_count(); ++i) {
    Member& m = at(i);
    if (m.topo || now_ms_ < m.restart_ms) continue;
    OpTime last = m.log.back().optime;
    Topology::Options t{.self_index = i,
                        .seed = options_.seed * 7919u + static_cast<uint64_t>(m.incarnation),
                        .persisted = m.persisted,
                        .applied = last,
                        .durable = last,
                        .now_ms = now_ms_};
    m.topo.emplace(config_, t);
    trace_event(i, "restarts in term " + std::to_string(m.persisted.term));
    m.reported_applied = m.reported_durable = last;
    m.next_tick_ms = m.next_fetch_ms = m.next_flush_ms = now_ms_;
  }
}

void GlueSim::step_down(int member, int64_t step_down_secs) {
  if (!up(member) || !running(member)) return;
  faults_end_ms_ = std::max(faults_end_ms_, now_ms_ + (step_down_secs + 1) * 1000);
  trace_event(member, "replSetStepDown " + std::to_string(step_down_secs) + "s");
  try {
    at(member).topo->step_down(now_ms_, StepDownRequest{step_down_secs, 1, false});
  } catch (const CommandError&) {
    // Not primary any more: the command fails with 10107 and nothing changes.
  }
  drain(member);
}

// --- observations ------------------------------------------------------------------------------

int GlueSim::writable_primary() const {
  int found = -1;
  for (int i = 0; i < member_count(); ++i) {
    if (!up(i) || !writable(i)) continue;
    if (found >= 0) return -2;
    found = i;
  }
  return found;
}

std::string GlueSim::describe_states() const {
  std::string out;
  for (int i = 0; i < member_count(); ++i) {
    const Member& m = at(i);
    out += "m" + std::to_string(i) + "=";
    if (!m.topo) {
      out += "down ";
      continue;
    }
    out += std::string(member_state_name(m.topo->state()));
    if (catching_up(i)) out += "(catch-up from m" + std::to_string(m.topo->sync_source()) + ")";
    out += "/t" + std::to_string(m.topo->term()) + " ";
  }
  return out;
}

void GlueSim::check_acknowledged_writes_survive() {
  int majority = member_count() / 2 + 1;
  for (int64_t id : acked_) {
    int holders = 0;
    for (const Member& m : members_) {
      holders += std::any_of(m.log.begin(), m.log.end(),
                             [&](const GlueEntry& e) { return e.write_id == id; });
    }
    if (holders < majority) {
      add_finding(FindingKind::kLostMajorityWrite, "acknowledged write " + std::to_string(id) +
                                                       " is in " + std::to_string(holders) +
                                                       " logs at the end, not a majority");
    }
  }
}

}  // namespace mongosim::repl::glue
