// Live view of a running history: follows history.jsonl as the workers append to it, counts
// completed operations and knows who holds which lock right now. The nemesis asks it for the
// current holder (target "holder"); the terminal shows its one-line summary.
//
// It reads whole lines only (a line still being written is left for the next poll) and at most
// kReadChunkBytes per poll, so a fast history cannot stall the run loop.
// Thread rules: the harness's main thread only.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace locklab {

class ProgressTracker {
 public:
  explicit ProgressTracker(std::string history_path);

  void poll();
  int64_t operations() const { return operations_; }  // acquire ok, all workers
  int64_t worker_events() const { return worker_events_; }  // any event of a worker
  int holds() const { return static_cast<int>(holders_.size()); }
  // A worker holding a lock now (the most recent acquirer), or "" when none.
  std::string current_holder() const;
  // "holder" (holds a lock), "waiting" (an acquire invoked, not completed) or "idle", as far
  // as the history read so far says.
  std::string role(const std::string& worker) const;
  // "12.3s ops 120 holds 1 faults 1" (no newline).
  std::string line(int64_t elapsed_ms, int active_faults) const;

  static constexpr size_t kReadChunkBytes = 1 << 20;

 private:
  std::string path_;
  int64_t offset_ = 0;
  int64_t operations_ = 0;
  int64_t worker_events_ = 0;
  std::map<std::string, int64_t> holders_;  // worker -> time of its acquire ok
  std::map<std::string, int64_t> waiting_;  // worker -> time of its pending acquire invoke
  std::string partial_;
};

// Writes the progress line in place on a terminal (stderr); does nothing when stderr is not a
// terminal.
class ProgressDisplay {
 public:
  ProgressDisplay();
  void show(const std::string& line);
  void finish();  // ends the line so later output starts on a fresh one

 private:
  bool tty_ = false;
  bool shown_ = false;
};

}  // namespace locklab
