// A deterministic simulation of an N-member replica set for testing the topology logic: every
// member is a repl::Topology with a toy oplog, connected by a simulated network (link matrix,
// seeded delay and loss) on a simulated clock.
// Clients write to every member that says it is a writable primary; the simulator records
// which writes were acknowledged with w:"majority" and which were rolled back, and checks the
// safety properties after every event. Same options and fault calls => same run.
//
// Thread rules: single-threaded, like the simulations it imitates.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "repl/rollback_plan.h"
#include "repl/topology.h"

namespace mongosim::repl::sim {

struct SimEntry {
  OpTime optime;
  int64_t write_id = 0;  // 0: a no-op
  bool operator==(const SimEntry& other) const = default;
};

// One splitmix64 step: advances `state` and returns a uniform value in [0, max_inclusive]
// (0 when max_inclusive <= 0). Both simulations draw every random choice from it, so a seed
// names a run exactly.
inline int64_t splitmix_draw(uint64_t& state, int64_t max_inclusive) {
  state += 0x9E3779B97F4A7C15ull;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  if (max_inclusive <= 0) return 0;
  return static_cast<int64_t>(z % static_cast<uint64_t>(max_inclusive + 1));
}

// The replica-set config both simulations start from: members m0..m<n-1> on port 27017, the
// given timers, and per-member priorities when `priorities` is not empty (one per member).
ReplSetConfig simulated_config(int members, int64_t election_timeout_ms,
                               int64_t heartbeat_interval_ms,
                               const std::vector<double>& priorities = {});

struct SimOptions {
  int members = 3;
  uint64_t seed = 1;
  int64_t election_timeout_ms = 10000;
  int64_t heartbeat_interval_ms = 2000;
  std::vector<double> priorities = {};  // empty: every member priority 1
  int64_t max_delay_ms = 5;             // one-way message delay is uniform in [1, max_delay_ms]
  int64_t write_interval_ms = 250;      // a client write to each writable primary this often
  int64_t step_ms = 10;                 // simulated clock resolution
};

// Everything a test asserts on.
struct SimReport {
  std::vector<std::string> violations;  // safety properties broken, with time and member
  int elections_won = 0;
  int rollbacks = 0;
  int resyncs = 0;
  int64_t writes = 0;
  std::set<int64_t> majority_acked;  // write ids acknowledged as majority-committed
  std::set<int64_t> rolled_back;     // write ids removed by a rollback
  std::map<int64_t, int> primary_of_term;
};

class ClusterSim {
 public:
  static constexpr size_t kMaxFetchBatch = 64;
  static constexpr int64_t kFetchIntervalMs = 50;
  static constexpr size_t kMaxMessagesInFlight = 100'000;

  explicit ClusterSim(const SimOptions& options);

  void run_for(int64_t duration_ms);
  int64_t now_ms() const { return now_ms_; }

  // Faults. Links are symmetric; a cut link drops messages sent and in flight.
  void isolate(int member);
  void split(uint32_t group_mask);  // members whose bit is set vs the rest
  void ring();                      // each member reaches only its two ring neighbours
  void bridge();                    // two halves joined only through member 0
  void heal();
  void set_loss_percent(int percent) { loss_percent_ = percent; }
  void pause(int member, int64_t duration_ms);
  void stop_writes(bool stopped) { writes_stopped_ = stopped; }
  // Commands; they return the CommandError code they got, or 0.
  int32_t step_down(int member, const StepDownRequest& request);
  int32_t freeze(int member, int64_t secs);

  int writable_primary() const;  // the only writable primary, -1 if none, -2 if several
  int member_count() const { return static_cast<int>(members_.size()); }
  const Topology& topology(int member) const { return members_[static_cast<size_t>(member)].topo; }
  const std::vector<SimEntry>& log(int member) const {
    return members_[static_cast<size_t>(member)].log;
  }
  // No member is frozen or in a stepdown window after this time.
  int64_t latest_freeze_end_ms() const { return freeze_end_bound_ms_; }
  // After heal and quiet: what keeps the set from being converged (one writable primary, one
  // term, identical logs holding every majority-acknowledged write). Empty when converged.
  std::vector<std::string> convergence_problems() const;
  const SimReport& report() const { return report_; }

 private:
  struct FetchRequest {
    OpTime last;
    OpTime applied;
    // The requester's: a source in an older term adopts it (docs/mongodb-behaviour.md, Elections).
    int64_t term = 0;
  };
  struct FetchResponse {
    int64_t term = 0;
    OpTime committed;
    bool diverged = false;
    std::vector<SimEntry> entries = {};  // after `last`, or the whole log when diverged
  };
  struct StepUpRequest {};
  struct VoteReply {
    VoteRequest sent;
    VoteResponse response;
  };
  using Payload = std::variant<HeartbeatRequest, HeartbeatResponse, VoteRequest, VoteReply,
                               FetchRequest, FetchResponse, StepUpRequest>;
  struct Message {
    int64_t deliver_ms;
    uint64_t seq;
    int from;
    int to;
    Payload payload;
    bool operator>(const Message& other) const {
      return deliver_ms != other.deliver_ms ? deliver_ms > other.deliver_ms : seq > other.seq;
    }
  };
  struct Member {
    Topology topo;
    std::vector<SimEntry> log;
    int64_t paused_until_ms = 0;
    int64_t next_fetch_ms = 0;
    std::optional<FetchResponse> divergence = {};  // the reply that showed our log diverged
    int64_t last_term = 0;
    std::map<int64_t, int> votes = {};  // term -> candidate, as persisted
  };

  void step();
  void deliver(const Message& m);
  void send(int from, int to, Payload payload);
  void drain(int member);
  void perform(int member, const Action& action);
  void check_member(int member);
  void client_writes();
  void fetch(int member);
  void on_fetch_request(int member, int from, const FetchRequest& request);
  void on_fetch_response(int member, int from, FetchResponse response);
  void rollback(int member, int source);
  void record_acks(int member);
  void append(int member, int64_t write_id);
  bool linked(int a, int b) const;
  int64_t random(int64_t max_inclusive);
  void violation(const std::string& what);

  SimOptions options_;
  uint64_t rng_;
  int64_t now_ms_ = 0;
  uint64_t next_seq_ = 0;
  std::vector<Member> members_;
  std::vector<std::vector<bool>> links_;
  int loss_percent_ = 0;
  bool writes_stopped_ = false;
  int64_t next_write_ms_ = 0;
  int64_t next_write_id_ = 1;
  int64_t freeze_end_bound_ms_ = 0;
  std::priority_queue<Message, std::vector<Message>, std::greater<>> queue_;
  std::map<int64_t, std::pair<int, OpTime>> pending_acks_;  // write id -> (primary, optime)
  std::map<OpTime, int64_t> committed_;  // every entry some member saw as committed
  SimReport report_;
};

}  // namespace mongosim::repl::sim
