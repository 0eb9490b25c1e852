// The hand-over floor: the best a FIFO lock could do against this server, on this machine, in
// this run. N threads of one process pass an in-process FIFO baton; each hand-over is one
// majority findAndModify round trip ({$inc: {token: 1}, $set: {holder}} on one document: the
// least a server-recorded hand-over with a fencing token costs). A thread holds hold_ms, writes,
// gives the baton to the longest waiter, does gap_ms of other work and asks again: the loop of a
// cell's contender. It leaves out everything a lock adds to that: the lock's own grant and queue
// logic on the server, a waiter's own commands, the notify stream, lease extension, a second
// process; a lock that records each hand-over with a majority write is not expected to beat it.
// Its longest wait over the cells' FIFO bound is what this machine, in this run, lets that figure
// be: a lock well above the bound where this floor is below it has overhead of its own; where
// this floor is above it too, the machine is the limit. It is one worst wait, not a bound: at
// hold 0 it varies several-fold between runs (and can exceed a lock's); its turns' median is
// the steady figure.
// With asks_written, each thread also writes its ask before it takes its place in the baton's
// queue: one majority findAndModify ($inc asks) on the same document, the least a lock whose
// waiters are recorded on the server (a queue in the lock's document) adds per acquisition. The
// ask is written before the thread queues, so it overlaps the other threads' turns and costs the
// server's time, not a turn's; the wait counts from before it, as a lock's acquire() does.
// The window closes asks, not turns: the asks queued when it ends are still served (at most
// N - 1 more turns) and counted whole (nobody gives up at its end, so nothing but turns delays
// them; a cell counts a wait its end cut off only to the end, the rest being withdrawals).
// Invariants: the server's token at the end equals the writes sent (add_up); grants follow the
// order of asks (FIFO by construction, checked: fifo); a hand-over wakes the grantee alone.
// Thread rules: call from one thread with no cell running; it starts and joins its own threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lockbench {

inline constexpr int kHandOverFloorContenders = 32;  // the contention for its targets
inline constexpr int kHandOverFloorContendersMax = 256;

struct HandOverFloorSpec {
  int contenders = kHandOverFloorContenders;
  int64_t hold_ms = 0;
  int64_t gap_ms = 0;
  double seconds = 0;
  int members = 1;
  bool asks_written = false;
};

struct HandOverFloor {
  HandOverFloorSpec spec;
  int64_t acquisitions = 0;
  int64_t writes_sent = 0;       // warm-ups + one per acquisition
  int64_t token_counted = 0;     // the document's token at the end, as the server has it
  int64_t asks_sent = 0;         // asks_written: one per acquisition
  int64_t asks_counted = 0;      // the document's asks at the end, as the server has it
  bool add_up = false;           // token_counted == writes_sent, asks_counted == asks_sent
  int last_writer = -1;          // the thread (0..N-1) of the last hand-over write
  bool fifo = false;             // every grant went to the earliest ask still waiting
  std::vector<double> turns_ms;  // grant to next grant, in order
  std::vector<double> waits_ms;  // ask to grant, every acquisition
};

// Throws std::invalid_argument for a spec out of range and std::runtime_error naming the command
// when a write fails (every thread is stopped and joined first).
HandOverFloor measure_hand_over_floor(const std::string& uri, const std::string& database,
                                      const std::string& lock_name, const HandOverFloorSpec& spec);

}  // namespace lockbench
