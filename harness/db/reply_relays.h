// The reply-delay lever of a netns run (fault `reply-delay`): the members' replies to one worker
// arrive late while its requests go out at once, so a command executes on time and its
// reply is what waits. The kernel's netem qdisc would do this but is not available everywhere
// (it is a module many VM kernels lack), so the delay is made in user space.
//
// In each worker's network namespace: a locklab-relay process (nemesis/reply_relay.h) listening
// on 127.0.0.1:kRelayPort, and an nft table "<prefix>-relay" whose nat output chain redirects
// the worker's TCP connections to the members (dport 27017, within the run's subnet) to it. The
// relay connects on to each connection's original destination with SO_MARK kRelayMark, which
// the chain lets through unredirected. add_delay()/remove_delay() write the file the relay reads
// the delay from for each reply chunk it receives; chunks are delivered in order, none before its
// time.
//
// Invariants: every worker of the run has its relay and table before any worker starts (a
// connection opened earlier would bypass the relay for its whole life); a relay that ends on its
// own is the run's error (owner_of() names it), never ignored. The tables go with the
// namespaces (Network::teardown); stop() ends the relays.
//
// Thread rules: the harness's main thread (spawns go through its Supervisor: run/process.h).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "db/partitions.h"
#include "run/process.h"

namespace locklab {

// What a fault asks of a backend that can delay replies.
class ReplyDelays {
 public:
  virtual ~ReplyDelays() = default;
  // Opens one window of delay_ms (1..kDelayMaxMs) on the replies that reach `worker`;
  // remove_delay() closes it. Windows are counted, as partition cuts are: while several are
  // open the longest is in force (closing one never shortens another that is still open), and
  // with none open nothing is held. Throws std::out_of_range for a worker without a relay,
  // std::invalid_argument for a delay out of range, std::logic_error for closing a window that
  // is not open, std::runtime_error when the delay file cannot be written.
  virtual void add_delay(const std::string& worker, int64_t delay_ms) = 0;
  virtual void remove_delay(const std::string& worker, int64_t delay_ms) = 0;
};

class ReplyRelays : public ReplyDelays {
 public:
  static constexpr int kRelayPort = 27999;
  static constexpr int kMemberPort = 27017;
  static constexpr uint32_t kRelayMark = 0x4c4c;  // "LL"
  static constexpr int64_t kReadyTimeoutMs = 10'000;
  static constexpr int64_t kDelayMaxMs = 600'000;

  // program: the locklab-relay binary. dir: where the delay files live (the run's temp dir).
  // log_dir: where each relay's output goes (relay-<worker>.log). subnet: "10.77.0.0/24".
  ReplyRelays(Supervisor& supervisor, std::string program, std::string prefix, std::string dir,
              std::string log_dir, std::string subnet);
  ReplyRelays(const ReplyRelays&) = delete;
  ReplyRelays& operator=(const ReplyRelays&) = delete;

  // Starts the worker's relay inside its namespace, waits until it listens (its "ready" line)
  // and writes the redirect table. Throws std::runtime_error naming the worker, with the relay's
  // output, when it ends or stays silent for kReadyTimeoutMs, or when nft refuses the table.
  void start(const NetHost& worker);
  void add_delay(const std::string& worker, int64_t delay_ms) override;
  void remove_delay(const std::string& worker, int64_t delay_ms) override;
  // "the reply relay of w1 (see <log>)" when pid is one of the relays, else nullopt.
  std::optional<std::string> owner_of(pid_t pid) const;
  // SIGTERM to every relay, up to grace_ms each, then SIGKILL. Never throws; safe twice.
  void stop(int64_t grace_ms);

  std::string table() const { return prefix_ + "-relay"; }

 private:
  struct Relay {
    pid_t pid = 0;
    std::string delay_file;
    std::string log;
    std::multiset<int64_t> open_ms;  // the delays of the windows open now
  };
  Supervisor& supervisor_;
  std::string program_;
  std::string prefix_;
  std::string dir_;
  std::string log_dir_;
  std::string subnet_;
  std::map<std::string, Relay> relays_;  // by worker role

  void wait_ready(const std::string& worker, const Relay& relay);
  static void write_in_force(const Relay& relay);
};

// The nft script of the redirect table (pure; for tests and start()).
std::string nft_relay_script(const std::string& table, const std::string& subnet, int member_port,
                             int relay_port, uint32_t mark);

}  // namespace locklab
