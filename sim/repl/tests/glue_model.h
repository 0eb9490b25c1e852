// A deterministic model of mongosim's replication glue: the threads of sim/server (replication*,
// dispatcher) and sim/data (write commands, store, journal) around each member's real
// repl::Topology, with every thread step an atomic action picked by a seeded scheduler, so the
// interleavings the real threads allow are explored without running them.
//
// What it models, per member:
// - a writer thread (one client command at a time): the writability check, then 1..N oplog
//   appends (insertMany), then the w:"majority" wait (forced journal commit, then the commit
//   point). Each append is one step, so heartbeats and elections can run between the check and
//   any append.
// - a tick thread: note_local_optimes() then Topology::tick(); actions performed at once
//   (heartbeats, votes, the new-primary no-op written inline).
// - a journal flusher (group commit every kFlushIntervalMs): durable lags applied until it runs
//   or a writer/fetcher forces it.
// - a fetcher thread: checks its role and sync source, sends one fetch, blocks until the reply
//   or kFetchTimeoutMs, then applies the batch, forces durability, reports the position to the
//   primary; rollback (plan_rollback against the source's log) also runs on it. The real source
//   holds a fetch that finds nothing new until an entry or a new commit point shows (up to
//   maxAwaitMs, replication_fetch.cpp) and its fetcher then asks again at once; here the source
//   answers at delivery and an idle fetcher asks again after kFetchIdleMs: a held answer is an
//   answer delivered later, which the scheduler's message delays already produce.
// - message handlers (heartbeat, votes, update position, fetch, step-up), each atomic, as the
//   real ones run under the coordinator's mutex.
// - faults: partitions, SIGSTOP of a whole member (messages wait for it, replies the senders
//   gave up on are dropped), crash and restart (the oplog loses its non-durable tail, term and
//   vote survive), stalls of a single thread, clock offsets, replSetStepDown.
//
// Two glue variants (GlueVariant):
// - kOld, the glue at b9676d2: an append takes the term current at append time and
//   max(term, last term) (bug A); the fetcher checks SECONDARY once before blocking and applies
//   without re-validating, with "already applied" comparing timestamps only (bug B); a primary
//   in catch-up does not fetch (bug E); the majority waiter captures the term at wait start.
// - kFixed, the design: one replication-state lock held shared by a write from its check through
//   its last append, every entry stamped with the term captured under it; step-down, step-up
//   and term adoption take it exclusively and interrupt running writes (here: the running write
//   is aborted before its next append); a fetched batch is applied only if the member is still
//   SECONDARY or a catching-up primary, in the same term, with the same source, and its oplog
//   still ends where the fetch started; "already applied" compares full optimes; a primary in
//   catch-up fetches; the new-primary no-op is written under the exclusive lock.
//   GlueFix names these parts; a kFixed run can leave any out (left_out_fixes).
//
// Properties (Finding kinds): a majority-acknowledged write rolled back or absent from a
// majority of logs at the end (A); an oplog append that does not increase the optime, term
// first (B: the journal's order assertion); no writable primary within a bound after the
// faults heal (E, checked by the runner in glue_search.h).
//
// What it leaves out: the real threads and their code (this is a model of their steps, kept
// beside the code it mirrors by hand); documents, so bugs C (no-op writes answering at once) and
// D (rollback refetch without minValid) cannot show; TTL deletes and the linearizable no-op
// (the same split as the writer's, not modelled separately); the new-primary no-op's own
// read-term/append split in kOld (written atomically here); torn journal records; reconfig;
// indeterminate client writes (a write whose member crashes is simply not acknowledged);
// message reordering beyond a uniform delay; lost messages other than by partition; rollback
// is one atomic step that reads the source's oplog directly (the real one pages it over the
// network and refetches documents); the fetch request carries no term (as in the real code);
// replies addressed to a crashed member's previous incarnation are still delivered; the
// smaller glue bugs (step-down against a lagging applied optime) are not targeted; message
// handlers run when their message arrives and are not themselves preempted. Searches
// run 3-member sets; the model itself takes any size.
//
// Thread rules: single-threaded; same options and fault calls give the same run.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "repl/topology.h"

namespace mongosim::repl::glue {

enum class GlueVariant { kOld, kFixed };
// The fixed design's parts; a kFixed run may leave some out (GlueOptions::left_out_fixes) to
// show which property each one guards. kOld has none of them.
enum GlueFix : uint32_t {
  kFixWriteUnderLock = 1,   // captured-term stamping, interrupt on state change, waiter's term
  kFixRevalidateBatch = 2,  // fetched batch re-validated before it is applied
  kFixFullOptimeCheck = 4,  // "already applied" compares full optimes
  kFixCatchUpFetch = 8,     // a primary in catch-up fetches
};
enum class FindingKind { kLostMajorityWrite, kOplogOrder, kNoWritablePrimary };
enum class ThreadKind { kWriter, kTicker, kFlusher, kFetcher };
inline constexpr int kThreadKinds = 4;

const char* finding_name(FindingKind kind);  // "A: ...", "B: ...", "E: ..."
std::string describe(OpTime optime);         // (term,seconds.increment)

struct GlueEntry {
  OpTime optime;
  int64_t write_id = 0;  // 0: a no-op
};

struct GlueOptions {
  GlueVariant glue = GlueVariant::kOld;
  int members = 3;
  uint64_t seed = 1;
  int64_t election_timeout_ms = 4000;
  int64_t heartbeat_interval_ms = 1000;
  int64_t write_interval_ms = 200;  // each member's client starts a command this often
  int max_appends_per_write = 3;
  int run_percent = 60;  // chance that a runnable thread step runs in a slot (preemption)
  int64_t slot_ms = 10;
  int64_t max_delay_ms = 5;     // one-way message delay, uniform in [1, max_delay_ms]
  bool trace = false;           // record the run's events (elections, stale appends, acks...)
  uint32_t left_out_fixes = 0;  // kFixed only: GlueFix bits not applied
};

struct Finding {
  FindingKind kind;
  int64_t at_ms = 0;  // since the start of the run
  std::string what;
};

struct GlueCounters {
  int64_t acked_writes = 0;
  int64_t stale_term_appends = 0;  // kOld: an append in a term other than its check's
  int64_t interrupted_writes = 0;  // kFixed: writes aborted by a state change
  int64_t dropped_batches = 0;     // kFixed: fetched batches that failed re-validation
  int64_t rollbacks = 0;
  int64_t crashes = 0;
  int64_t elections_won = 0;
};

class GlueSim {
 public:
  static constexpr int64_t kTickIntervalMs = 50;
  static constexpr int64_t kFlushIntervalMs = 100;
  static constexpr int64_t kFetchTimeoutMs = 2000;
  static constexpr int64_t kMemberCommandTimeoutMs = 1000;
  static constexpr int64_t kFetchIdleMs = 20;
  static constexpr int64_t kFetchErrorBackoffMs = 200;
  static constexpr int64_t kWriteConcernTimeoutMs = 5000;
  static constexpr size_t kFetchBatchEntries = 50;
  static constexpr size_t kMaxMessagesInFlight = 100'000;
  static constexpr size_t kMaxFindings = 20;
  static constexpr size_t kMaxTraceEvents = 5000;

  explicit GlueSim(const GlueOptions& options);

  void run_for(int64_t duration_ms);
  int64_t elapsed_ms() const { return now_ms_ - start_ms_; }

  // Faults.
  void isolate(int member);
  void split(uint32_t group_mask);
  void heal();
  void pause(int member, int64_t duration_ms);
  void crash(int member, int64_t down_ms);
  void stall(int member, ThreadKind thread, int64_t duration_ms);
  void set_clock_offset(int member, int64_t offset_ms);
  void step_down(int member, int64_t step_down_secs);
  void stop_writes(bool stopped) { writes_stopped_ = stopped; }
  // The latest time (elapsed) at which a fault still holds a member back.
  int64_t faults_end_ms() const { return faults_end_ms_ - start_ms_; }

  int writable_primary() const;  // the only writable primary, -1 if none, -2 if several
  bool is_writable_primary(int member) const { return up(member) && writable(member); }
  // The member's writer has passed its writability check and has appends left.
  bool writer_mid_write(int member) const {
    return up(member) && at(member).writer.phase == WriterPhase::kAppending;
  }
  int member_count() const { return static_cast<int>(members_.size()); }
  // Why no member is writable, for the E finding ("" when one is).
  std::string describe_states() const;
  // End of run: every acknowledged write is in the logs of a majority of members.
  void check_acknowledged_writes_survive();
  void add_finding(FindingKind kind, const std::string& what);

  const std::vector<Finding>& findings() const { return findings_; }
  const std::vector<std::string>& trace() const { return trace_; }
  const GlueCounters& counters() const { return counters_; }
  const std::vector<GlueEntry>& log(int member) const { return at(member).log; }

 private:
  struct HeartbeatReply {
    HeartbeatResponse response;
    int64_t request_sent_ms;
  };
  struct VoteReply {
    VoteRequest sent;
    VoteResponse response;
    int64_t request_sent_ms;
  };
  struct FetchRequest {
    OpTime after;
    uint64_t fetch_id;
  };
  struct FetchReply {
    uint64_t fetch_id;
    bool found;
    int64_t term;
    OpTime committed;
    std::vector<GlueEntry> entries;
    int64_t request_sent_ms;
  };
  struct UpdatePosition {
    int64_t term;
    OpTime applied;
    OpTime durable;
  };
  struct StepUp {};
  using Payload = std::variant<HeartbeatRequest, HeartbeatReply, VoteRequest, VoteReply,
                               FetchRequest, FetchReply, UpdatePosition, StepUp>;
  struct Message {
    int64_t deliver_ms;
    uint64_t seq;
    int from;
    int to;
    int from_incarnation;
    int64_t sent_ms;
    Payload payload;
    bool operator>(const Message& o) const {
      return deliver_ms != o.deliver_ms ? deliver_ms > o.deliver_ms : seq > o.seq;
    }
  };
  enum class WriterPhase { kIdle, kAppending, kWaiting };
  struct Writer {
    WriterPhase phase = WriterPhase::kIdle;
    int64_t check_term = 0;  // the term under which the writability check passed
    int appends_left = 0;
    std::vector<int64_t> ids;
    OpTime last;
    bool wait_started = false;
    int64_t wait_term = 0;
    int64_t wait_deadline_ms = 0;
  };
  enum class FetcherPhase { kIdle, kWaiting };
  struct Fetcher {
    FetcherPhase phase = FetcherPhase::kIdle;
    int source = -1;
    OpTime after;
    int64_t term = 0;
    uint64_t fetch_id = 0;
    int64_t deadline_ms = 0;
    std::optional<FetchReply> reply;
  };
  struct Member {
    std::optional<Topology> topo;  // empty while crashed
    PersistentState persisted;
    std::vector<GlueEntry> log;
    size_t durable_count = 1;  // entries the journal has on disk
    int incarnation = 0;
    int64_t restart_ms = 0;
    int64_t paused_until_ms = 0;
    std::array<int64_t, kThreadKinds> stalled_until_ms = {};
    int64_t clock_offset_ms = 0;
    int64_t next_tick_ms = 0;
    int64_t next_flush_ms = 0;
    int64_t next_write_ms = 0;
    int64_t next_fetch_ms = 0;
    bool step_down_attempt = false;
    int64_t traced_term = 0;  // the term the trace last showed
    int rollback_source = -1;
    OpTime reported_applied;
    OpTime reported_durable;
    Writer writer;
    Fetcher fetcher;
  };

  Member& at(int member) { return members_[static_cast<size_t>(member)]; }
  const Member& at(int member) const { return members_[static_cast<size_t>(member)]; }
  bool up(int member) const { return at(member).topo.has_value(); }
  bool running(int member) const;
  bool writable(int member) const;
  bool catching_up(int member) const;
  bool has_fix(uint32_t fix) const {
    return options_.glue == GlueVariant::kFixed && (options_.left_out_fixes & fix) == 0;
  }
  OpTime durable_optime(const Member& m) const { return m.log[m.durable_count - 1].optime; }
  int64_t random(int64_t max_inclusive);

  void step();
  void deliver_due_messages();
  void deliver(const Message& m);
  bool reply_expired(int64_t request_sent_ms, int64_t timeout_ms) const;
  void send(int from, int to, Payload payload);
  void restart_due_members();
  void run_threads();
  bool thread_runnable(int member, ThreadKind thread) const;
  void run_thread(int member, ThreadKind thread);

  void drain(int member);
  void perform(int member, const Action& action);
  void interrupt_writes_if_state_changed(int member);
  void note_local_optimes(int member);
  OpTime append(int member, int64_t term, int64_t write_id);
  void append_entry(int member, const GlueEntry& entry);
  void write_new_primary_noop(int member);

  void writer_check(int member);
  void writer_append(int member);
  void writer_wait(int member);
  void fetcher_start(int member);
  void fetcher_apply(int member);
  bool batch_still_valid(int member) const;
  void apply_batch(int member, const FetchReply& reply);
  void report_position(int member);
  void rollback(int member);
  void on_fetch_request(int member, int from, const FetchRequest& request, int64_t sent_ms);
  void note_removed_writes(int member, const std::vector<int64_t>& removed);
  void trace_event(int member, const std::string& what);  // member -1: the whole set

  GlueOptions options_;
  ReplSetConfig config_;
  uint64_t rng_;
  int64_t start_ms_;
  int64_t now_ms_;
  uint64_t next_seq_ = 0;
  uint64_t next_fetch_id_ = 1;
  int64_t next_write_id_ = 1;
  bool writes_stopped_ = false;
  int64_t faults_end_ms_ = 0;
  std::vector<Member> members_;
  std::vector<std::vector<bool>> links_;
  std::priority_queue<Message, std::vector<Message>, std::greater<>> queue_;
  std::set<int64_t> acked_;
  std::vector<Finding> findings_;
  std::vector<std::string> trace_;
  GlueCounters counters_;
};

}  // namespace mongosim::repl::glue
