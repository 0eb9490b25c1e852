#include "cluster_sim.h"

#include <algorithm>
#include <cassert>

#include "base/command_error.h"

namespace mongosim::repl::sim {

ReplSetConfig simulated_config(int members, int64_t election_timeout_ms,
                               int64_t heartbeat_interval_ms,
                               const std::vector<double>& priorities) {
  assert(priorities.empty() || priorities.size() == static_cast<size_t>(members));
  ReplSetConfig config;
  config.set_name = "rs0";
  config.settings.election_timeout_ms = election_timeout_ms;
  config.settings.heartbeat_interval_ms = heartbeat_interval_ms;
  for (int i = 0; i < members; ++i) {
    MemberConfig m;
    m.id = i;
    m.host = "m" + std::to_string(i) + ":27017";
    if (!priorities.empty()) m.priority = priorities[static_cast<size_t>(i)];
    config.members.push_back(m);
  }
  return config;
}

namespace {

constexpr int64_t kStartMs = 1'700'000'000'000;  // any fixed epoch keeps timestamps realistic

// The entry replSetInitiate writes; every member starts from it, so logs always share a prefix.
const SimEntry kInitiateEntry{OpTime{bson::Timestamp{1, 1}, 0}, 0};

std::string at(int64_t now_ms, int member) {
  return "t=" + std::to_string(now_ms - kStartMs) + "ms member " + std::to_string(member) + ": ";
}

}  // namespace

ClusterSim::ClusterSim(const SimOptions& options) : options_(options), rng_(options.seed) {
  assert(options.members >= 1 && options.members <= kMaxVotingMembers);
  now_ms_ = kStartMs;
  next_write_ms_ = now_ms_;
  ReplSetConfig config = simulated_config(options.members, options.election_timeout_ms,
                                          options.heartbeat_interval_ms, options.priorities);
  for (int i = 0; i < options.members; ++i) {
    Topology::Options t{.self_index = i,
                        .seed = options.seed * 1000003u + static_cast<uint64_t>(i),
                        .persisted = {},
                        .applied = kInitiateEntry.optime,
                        .durable = kInitiateEntry.optime,
                        .now_ms = now_ms_};
    members_.push_back(Member{.topo = Topology(config, t), .log = {kInitiateEntry}});
  }
  committed_[kInitiateEntry.optime] = 0;
  heal();
}

// --- the clock and the network ---------------------------------------------------------------

void ClusterSim::run_for(int64_t duration_ms) {
  int64_t end = now_ms_ + duration_ms;
  while (now_ms_ < end) step();
}

void ClusterSim::step() {
  now_ms_ += options_.step_ms;
  while (!queue_.empty() && queue_.top().deliver_ms <= now_ms_) {
    Message m = queue_.top();
    queue_.pop();
    deliver(m);
  }
  for (int i = 0; i < member_count(); ++i) {
    Member& member = members_[static_cast<size_t>(i)];
    if (member.paused_until_ms > now_ms_) continue;
    member.topo.tick(now_ms_);
    drain(i);
    fetch(i);
  }
  client_writes();
}

int64_t ClusterSim::random(int64_t max_inclusive) {
  return splitmix_draw(rng_, max_inclusive);
}

bool ClusterSim::linked(int a, int b) const {
  return links_[static_cast<size_t>(a)][static_cast<size_t>(b)];
}

void ClusterSim::send(int from, int to, Payload payload) {
  if (!linked(from, to) || random(99) < loss_percent_) return;
  if (queue_.size() >= kMaxMessagesInFlight) {
    violation("message queue overflow (a member is flooding the network)");
    return;
  }
  int64_t delay = 1 + random(std::max<int64_t>(0, options_.max_delay_ms - 1));
  queue_.push(Message{now_ms_ + delay, next_seq_++, from, to, std::move(payload)});
}

void ClusterSim::deliver(const Message& m) {
  if (!linked(m.from, m.to)) return;  // cut while in flight
  Member& to = members_[static_cast<size_t>(m.to)];
  if (to.paused_until_ms > now_ms_) {
    Message later = m;
    later.deliver_ms = to.paused_until_ms;
    later.seq = next_seq_++;
    queue_.push(std::move(later));
    return;
  }
  Topology& topo = to.topo;
  if (auto* hb = std::get_if<HeartbeatRequest>(&m.payload)) {
    HeartbeatResponse response = topo.on_heartbeat_request(now_ms_, *hb);
    drain(m.to);
    send(m.to, m.from, response);
  } else if (auto* hr = std::get_if<HeartbeatResponse>(&m.payload)) {
    topo.on_heartbeat_response(now_ms_, m.from, *hr);
    drain(m.to);
  } else if (auto* vr = std::get_if<VoteRequest>(&m.payload)) {
    VoteResponse response = topo.on_vote_request(now_ms_, *vr);
    drain(m.to);  // persists the vote before the reply leaves
    send(m.to, m.from, VoteReply{*vr, response});
  } else if (auto* reply = std::get_if<VoteReply>(&m.payload)) {
    topo.on_vote_response(now_ms_, m.from, reply->sent, reply->response);
    drain(m.to);
  } else if (auto* fq = std::get_if<FetchRequest>(&m.payload)) {
    on_fetch_request(m.to, m.from, *fq);
  } else if (auto* fr = std::get_if<FetchResponse>(&m.payload)) {
    on_fetch_response(m.to, m.from, *fr);
  } else if (std::holds_alternative<StepUpRequest>(m.payload)) {
    try {
      topo.step_up(now_ms_, true);
    } catch (const CommandError&) {
      // The handoff target may have become unelectable meanwhile; mongod ignores that too.
    }
    drain(m.to);
  }
}

// --- actions and checks ----------------------------------------------------------------------

void ClusterSim::drain(int member) {
  Topology& topo = members_[static_cast<size_t>(member)].topo;
  for (int rounds = 0;; ++rounds) {
    assert(rounds < 100 && "actions keep producing actions");
    std::vector<Action> actions = topo.take_actions();
    if (actions.empty()) break;
    for (const Action& a : actions) perform(member, a);
  }
  check_member(member);
}

void ClusterSim::perform(int member, const Action& action) {
  Member& m = members_[static_cast<size_t>(member)];
  switch (action.kind) {
    case ActionKind::kSendHeartbeat:
      send(member, action.target, m.topo.make_heartbeat_request());
      break;
    case ActionKind::kSendVoteRequest:
      send(member, action.target, action.vote_request);
      break;
    case ActionKind::kBecomePrimary:
      ++report_.elections_won;
      break;
    case ActionKind::kWriteNewPrimaryNoop:
      append(member, 0);
      m.topo.on_new_primary_noop_written(now_ms_, m.log.back().optime);
      break;
    case ActionKind::kStepDown:
      // Write-concern waiters on this member get PrimarySteppedDown: never acknowledged.
      std::erase_if(pending_acks_, [&](const auto& kv) { return kv.second.first == member; });
      break;
    case ActionKind::kSendStepUp:
      send(member, action.target, StepUpRequest{});
      break;
    case ActionKind::kStartRollback:
      rollback(member, action.target);
      break;
    case ActionKind::kCommitPointAdvanced:
      record_acks(member);
      break;
    case ActionKind::kPersistState:
    case ActionKind::kStepDownAttemptStarted:
    case ActionKind::kStepDownFinished:
    case ActionKind::kStepUpFinished:
    case ActionKind::kChangeSyncSource:
    case ActionKind::kElectionProgress:
      break;
  }
}

void ClusterSim::violation(const std::string& what) {
  if (report_.violations.size() < 20) report_.violations.push_back(what);
}

void ClusterSim::check_member(int member) {
  Member& m = members_[static_cast<size_t>(member)];
  const Topology& topo = m.topo;
  if (topo.term() < m.last_term) {
    violation(at(now_ms_, member) + "term went back from " + std::to_string(m.last_term) + " to " +
              std::to_string(topo.term()));
  }
  m.last_term = topo.term();
  const PersistentState& p = topo.persistent_state();
  if (p.last_vote_term >= 0) {
    auto [it, inserted] = m.votes.emplace(p.last_vote_term, p.last_vote_candidate);
    if (!inserted && it->second != p.last_vote_candidate) {
      violation(at(now_ms_, member) + "voted twice in term " + std::to_string(p.last_vote_term));
    }
  }
  if (topo.state() == MemberState::kPrimary) {
    auto [it, inserted] = report_.primary_of_term.emplace(topo.term(), member);
    if (!inserted && it->second != member) {
      violation(at(now_ms_, member) + "second primary in term " + std::to_string(topo.term()) +
                " (first was member " + std::to_string(it->second) + ")");
    }
  }
}

// Every entry at or below a member's commit point is committed: it must agree with what any
// other member saw committed at that optime.
void ClusterSim::record_acks(int member) {
  Member& m = members_[static_cast<size_t>(member)];
  OpTime commit = m.topo.last_committed();
  for (auto it = m.log.rbegin(); it != m.log.rend(); ++it) {
    if (it->optime > commit) continue;
    auto [c, inserted] = committed_.emplace(it->optime, it->write_id);
    if (!inserted) {
      if (c->second != it->write_id) {
        violation(at(now_ms_, member) + "committed entry differs from another member's");
      }
      break;  // everything older was checked when it was inserted
    }
  }
  if (m.topo.state() != MemberState::kPrimary) return;
  for (auto it = pending_acks_.begin(); it != pending_acks_.end();) {
    auto [primary, optime] = it->second;
    if (primary != member || optime > commit) {
      ++it;
      continue;
    }
    report_.majority_acked.insert(it->first);
    it = pending_acks_.erase(it);
  }
}

// --- the toy oplog: writes, fetching, rollback -----------------------------------------------

void ClusterSim::append(int member, int64_t write_id) {
  Member& m = members_[static_cast<size_t>(member)];
  OpTime last = m.log.back().optime;
  auto seconds = static_cast<uint32_t>(now_ms_ / 1000);
  OpTime next{bson::Timestamp{seconds, 1}, m.topo.term()};
  if (seconds <= last.ts.seconds) next.ts = bson::Timestamp{last.ts.seconds, last.ts.increment + 1};
  assert(next > last);
  m.log.push_back(SimEntry{next, write_id});
  m.topo.on_my_optimes(now_ms_, next, next);
}

void ClusterSim::client_writes() {
  if (writes_stopped_ || now_ms_ < next_write_ms_) return;
  next_write_ms_ = now_ms_ + options_.write_interval_ms;
  for (int i = 0; i < member_count(); ++i) {
    Member& m = members_[static_cast<size_t>(i)];
    if (m.paused_until_ms > now_ms_ || !m.topo.is_writable_primary()) continue;
    int64_t id = next_write_id_++;
    append(i, id);
    ++report_.writes;
    pending_acks_[id] = {i, m.log.back().optime};
    drain(i);
  }
}

void ClusterSim::fetch(int member) {
  Member& m = members_[static_cast<size_t>(member)];
  if (now_ms_ < m.next_fetch_ms) return;
  m.next_fetch_ms = now_ms_ + kFetchIntervalMs;
  MemberState state = m.topo.state();
  int source = m.topo.sync_source();
  if (source < 0 || (state != MemberState::kSecondary && state != MemberState::kPrimary)) return;
  send(member, source, FetchRequest{m.log.back().optime, m.topo.applied(), m.topo.term()});
}

void ClusterSim::on_fetch_request(int member, int from, const FetchRequest& request) {
  Member& m = members_[static_cast<size_t>(member)];
  m.topo.on_position_update(now_ms_, from, request.term, request.applied, request.applied);
  drain(member);
  FetchResponse response{.term = m.topo.term(), .committed = m.topo.last_committed()};
  auto it = std::lower_bound(m.log.begin(), m.log.end(), request.last,
                             [](const SimEntry& e, const OpTime& t) { return e.optime < t; });
  if (it != m.log.end() && it->optime == request.last) {
    for (++it; it != m.log.end() && response.entries.size() < kMaxFetchBatch; ++it) {
      response.entries.push_back(*it);
    }
  } else if (m.log.back().optime > request.last) {
    response.diverged = true;  // we have newer entries but not theirs: OplogStartMissing
    response.entries = m.log;
  }
  // Otherwise we are behind the requester: an empty batch.
  response.entries.insert(response.entries.begin(), SimEntry{request.last, -1});
  send(member, from, std::move(response));
}

void ClusterSim::on_fetch_response(int member, int from, FetchResponse response) {
  Member& m = members_[static_cast<size_t>(member)];
  MemberState state = m.topo.state();
  if (m.topo.sync_source() != from) return;
  if (state != MemberState::kSecondary && state != MemberState::kPrimary) return;
  OpTime asked_after = response.entries.front().optime;  // the request's `last`, echoed
  response.entries.erase(response.entries.begin());
  if (asked_after != m.log.back().optime) return;  // our log changed since we asked
  if (response.diverged) {
    m.divergence = std::move(response);
    m.topo.on_oplog_diverged(now_ms_, from);
    drain(member);
    return;
  }
  if (!response.entries.empty()) {
    m.log.insert(m.log.end(), response.entries.begin(), response.entries.end());
    m.topo.on_my_optimes(now_ms_, m.log.back().optime, m.log.back().optime);
  }
  m.topo.on_sync_source_progress(now_ms_, response.term, response.committed);
  drain(member);
}

void ClusterSim::rollback(int member, int source) {
  (void)source;
  Member& m = members_[static_cast<size_t>(member)];
  assert(m.divergence.has_value());
  std::vector<RollbackEntry> local;
  for (const SimEntry& e : m.log) {
    local.push_back(RollbackEntry{e.optime, e.write_id ? 'i' : 'n', e.write_id ? "test.c" : "",
                                  e.write_id ? bson::V(e.write_id) : bson::Value()});
  }
  std::vector<OpTime> remote;
  for (const SimEntry& e : m.divergence->entries) remote.push_back(e.optime);
  RollbackPlan plan = plan_rollback(local, remote);
  std::vector<int64_t> removed;
  if (plan.needs_resync) {
    ++report_.resyncs;
    for (const SimEntry& e : m.log) removed.push_back(e.write_id);
    m.log = m.divergence->entries;
  } else {
    ++report_.rollbacks;
    for (const RollbackEntry& e : plan.to_undo)
      removed.push_back(e.id.is_null() ? 0 : e.id.as_int64());
    m.log.resize(m.log.size() - plan.to_undo.size());
    assert(m.log.back().optime == plan.common_point);
  }
  for (int64_t id : removed) {
    if (id == 0) continue;
    if (std::find_if(m.log.begin(), m.log.end(),
                     [&](const SimEntry& e) { return e.write_id == id; }) != m.log.end()) {
      continue;
    }
    report_.rolled_back.insert(id);
    if (report_.majority_acked.count(id)) {
      violation(at(now_ms_, member) + "rollback removed majority-acknowledged write " +
                std::to_string(id));
    }
  }
  for (const RollbackEntry& e : plan.to_undo) {
    if (committed_.count(e.optime))
      violation(at(now_ms_, member) + "rollback removed a committed entry");
  }
  m.divergence.reset();
  m.topo.on_rollback_complete(now_ms_, m.log.back().optime, m.log.back().optime);
}

// --- faults and commands ----------------------------------------------------------------------

void ClusterSim::heal() {
  size_t n = members_.size();
  links_.assign(n, std::vector<bool>(n, true));
}

void ClusterSim::isolate(int member) {
  for (int i = 0; i < member_count(); ++i) {
    if (i == member) continue;
    links_[static_cast<size_t>(i)][static_cast<size_t>(member)] = false;
    links_[static_cast<size_t>(member)][static_cast<size_t>(i)] = false;
  }
}

void ClusterSim::split(uint32_t group_mask) {
  for (int i = 0; i < member_count(); ++i) {
    for (int j = 0; j < member_count(); ++j) {
      bool same = ((group_mask >> i) & 1u) == ((group_mask >> j) & 1u);
      links_[static_cast<size_t>(i)][static_cast<size_t>(j)] = same;
    }
  }
}

void ClusterSim::ring() {
  int n = member_count();
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      int d = std::abs(i - j);
      links_[static_cast<size_t>(i)][static_cast<size_t>(j)] = d <= 1 || d == n - 1;
    }
  }
}

void ClusterSim::bridge() {
  int n = member_count();
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      bool same_half = (i <= n / 2) == (j <= n / 2);
      links_[static_cast<size_t>(i)][static_cast<size_t>(j)] = i == 0 || j == 0 || same_half;
    }
  }
}

void ClusterSim::pause(int member, int64_t duration_ms) {
  Member& m = members_[static_cast<size_t>(member)];
  m.paused_until_ms = std::max(m.paused_until_ms, now_ms_ + duration_ms);
}

int32_t ClusterSim::step_down(int member, const StepDownRequest& request) {
  freeze_end_bound_ms_ = std::max(
      freeze_end_bound_ms_, now_ms_ + (request.step_down_secs + request.catch_up_secs) * 1000);
  try {
    members_[static_cast<size_t>(member)].topo.step_down(now_ms_, request);
  } catch (const CommandError& e) {
    drain(member);
    return e.code();
  }
  drain(member);
  return 0;
}

int32_t ClusterSim::freeze(int member, int64_t secs) {
  freeze_end_bound_ms_ = std::max(freeze_end_bound_ms_, now_ms_ + secs * 1000);
  try {
    members_[static_cast<size_t>(member)].topo.freeze(now_ms_, secs);
  } catch (const CommandError& e) {
    return e.code();
  }
  return 0;
}

int ClusterSim::writable_primary() const {
  int found = -1;
  for (int i = 0; i < member_count(); ++i) {
    if (!members_[static_cast<size_t>(i)].topo.is_writable_primary()) continue;
    if (found >= 0) return -2;
    found = i;
  }
  return found;
}

std::vector<std::string> ClusterSim::convergence_problems() const {
  std::vector<std::string> problems;
  int primary = writable_primary();
  if (primary < 0) {
    problems.push_back(primary == -1 ? "no writable primary" : "several writable primaries");
    return problems;
  }
  const Member& p = members_[static_cast<size_t>(primary)];
  for (int i = 0; i < member_count(); ++i) {
    const Member& m = members_[static_cast<size_t>(i)];
    std::string who = "member " + std::to_string(i) + ": ";
    if (m.topo.term() != p.topo.term()) {
      problems.push_back(who + "term " + std::to_string(m.topo.term()) + " but the primary's is " +
                         std::to_string(p.topo.term()));
    }
    if (m.log != p.log) problems.push_back(who + "log differs from the primary's");
    std::set<int64_t> ids;
    for (const SimEntry& e : m.log) ids.insert(e.write_id);
    for (int64_t id : report_.majority_acked) {
      if (!ids.count(id))
        problems.push_back(who + "lost majority-acknowledged write " + std::to_string(id));
    }
  }
  return problems;
}

}  // namespace mongosim::repl::sim
