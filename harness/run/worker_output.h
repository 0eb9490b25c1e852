// What the workers write, checked before it reaches the run's history. Each incarnation of a
// worker appends its events to a file of its own (workers/<id>.<incarnation>.jsonl, passed to it
// as --history); the harness follows every such file, validates each whole line and appends the
// good events to history.jsonl. A bad line is never merged: it becomes a problem naming the
// worker, the file, the line number and the text, and a harness `worker-output` event in the
// history; every other line, of this worker and of the others, is merged as usual.
//
// Why a file per incarnation and not the shared history: a line that is not JSON, or is cut
// short, names no process, so only the file it came from can say which worker wrote it; and a
// worker killed mid-write (kill-worker) leaves its fragment at the end of its own file, where it
// is recognised as torn instead of being glued to the next writer's line. Files rather than
// pipes: a worker never blocks on a harness busy with a fault, and the files stay in the run
// directory as evidence.
//
// A line is valid when it parses as a history event (checker/history.h) whose process is the
// worker's id, whose f is in the worker vocabulary (kWorkerFunctions), whose t lies between the
// moment the incarnation was started and the moment the line was read (CLOCK_MONOTONIC: a
// worker stamping another clock is caught here), whose fields follow the client's rules
// (checker/worker_event.h: the lock named, a token exactly when the client issues them), and
// which the history can hold: encoded as history.jsonl writes it (which may be longer than the
// worker's line: "1e14" becomes "100000000000000.0"), with its newline, it fits in
// kHistoryLineBytesMax. So a bad line is refused here, naming itself, and never reaches the
// history writer, where it would fail the whole run. Every message quotes a bounded excerpt of
// what it shows, so the harness's own worker-output event always fits too.
//
// Thread rules: the harness's main thread only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checker/history.h"
#include "checker/worker_event.h"

namespace locklab {

// The f values a worker may write (checker/history.h, process "w<N>").
const std::vector<std::string>& worker_functions();

// Validates one line (without its newline) written by `worker` of a client whose grants carry
// what `grants` says, whose t must lie in [not_before_ns, not_after_ns]. On failure returns
// nullopt and sets *error (bounded: it quotes at most kQuotedBytesMax bytes of any field).
std::optional<Event> validate_worker_line(std::string_view line, const std::string& worker,
                                          const GrantTokens& grants, int64_t not_before_ns,
                                          int64_t not_after_ns, std::string* error);

class WorkerOutputs {
 public:
  // Merged events go to `history`; the workers' files are created in `dir`; the workers are
  // of a client whose grants carry what `grants` says.
  WorkerOutputs(HistoryWriter& history, std::string dir, GrantTokens grants);
  ~WorkerOutputs();  // closes the files (without merging what is left: call close first)
  WorkerOutputs(const WorkerOutputs&) = delete;
  WorkerOutputs& operator=(const WorkerOutputs&) = delete;

  // Creates (empty) the file a new incarnation will append to and starts following it; the
  // previous incarnation's file must have been closed. Returns its path. The incarnation's
  // events must be stamped after this call.
  std::string open(const std::string& worker, int64_t incarnation);
  // Merges the whole lines every open file gained since the last call.
  void drain();
  // The worker's current incarnation ended: merges the rest of its file. An unterminated last
  // line is a torn fragment when `killed` (the harness sent SIGKILL: it may have landed inside
  // the write), and a truncated line (a problem) otherwise.
  void close(const std::string& worker, bool killed);
  // Records a problem that is not a line (a worker that died on its own...), also as a harness
  // worker-output event.
  void problem(const std::string& worker, const std::string& message);
  // How many events the worker's current (or last) incarnation has written so far, and how
  // many lines (good, bad or cut short) it has written.
  int64_t events(const std::string& worker) const;
  int64_t lines(const std::string& worker) const;
  // The file of the worker's current (or last) incarnation; "" before the first open.
  std::string file(const std::string& worker) const;

  const std::vector<std::string>& problems() const { return problems_; }
  size_t problem_count() const { return problem_count_; }
  size_t torn_fragments() const { return torn_fragments_; }

  static constexpr size_t kReadChunkBytes = 1 << 20;  // per file per drain
  // A worker's line as it reads, without its newline; what the history gets is bounded by
  // kHistoryLineBytesMax as it encodes (validate_worker_line).
  static constexpr size_t kLineBytesMax = kHistoryLineBytesMax;
  static constexpr size_t kProblemsKept = 100;
  static constexpr size_t kTextShownBytes = 200;    // of a bad line, in messages
  static constexpr size_t kErrorShownBytes = 2000;  // of what is wrong with it

 private:
  struct File {
    std::string worker;
    std::string path;
    int fd = -1;
    int64_t offset = 0;
    int64_t line = 0;  // lines read so far
    int64_t events = 0;
    int64_t opened_ns = 0;
    std::string partial;
    bool skipping = false;  // inside an over-long line: drop until its newline
  };

  HistoryWriter& history_;
  std::string dir_;
  GrantTokens grants_;
  std::map<std::string, File> files_;  // worker -> its current incarnation's file
  std::vector<std::string> problems_;
  size_t problem_count_ = 0;
  size_t torn_fragments_ = 0;

  void read(File& file);
  void take_line(File& file, std::string_view line);
  void bad_line(File& file, std::string_view line, const std::string& error);
  void note(const std::string& worker, const std::string& message);  // keeps and counts
};

}  // namespace locklab
