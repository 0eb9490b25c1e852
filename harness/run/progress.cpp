#include "run/progress.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "checker/history.h"

namespace locklab {

ProgressTracker::ProgressTracker(std::string history_path) : path_(std::move(history_path)) {}

void ProgressTracker::poll() {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return;
  in.seekg(offset_);
  std::string chunk(kReadChunkBytes, '\0');
  in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  chunk.resize(static_cast<size_t>(in.gcount()));
  offset_ += static_cast<int64_t>(chunk.size());
  partial_ += chunk;
  size_t start = 0;
  for (size_t end; (end = partial_.find('\n', start)) != std::string::npos; start = end + 1) {
    std::string error;
    std::optional<Event> e =
        parse_json_line(std::string_view(partial_).substr(start, end - start), &error);
    if (!e) continue;  // the checkers report malformed lines; the live view skips them
    if (e->process != "harness" && e->process != "nemesis") ++worker_events_;
    if (e->f == "acquire") {
      if (e->type == EventType::kInvoke) {
        waiting_[e->process] = e->t_ns;
      } else {
        waiting_.erase(e->process);
      }
    }
    if (e->f == "acquire" && e->type == EventType::kOk) {
      ++operations_;
      holders_[e->process] = e->t_ns;
    } else if ((e->f == "release" && e->type == EventType::kInvoke) || e->f == "lost") {
      holders_.erase(e->process);
    } else if (e->process == "harness" && e->f == "exit" && e->value.is_object()) {
      holders_.erase(e->value.value("worker", ""));
      waiting_.erase(e->value.value("worker", ""));
    }
  }
  partial_.erase(0, start);
}

std::string ProgressTracker::current_holder() const {
  std::string best;
  int64_t best_t = -1;
  for (const auto& [worker, t] : holders_) {
    if (t > best_t) {
      best = worker;
      best_t = t;
    }
  }
  return best;
}

std::string ProgressTracker::role(const std::string& worker) const {
  if (holders_.count(worker)) return "holder";
  if (waiting_.count(worker)) return "waiting";
  return "idle";
}

std::string ProgressTracker::line(int64_t elapsed_ms, int active_faults) const {
  std::ostringstream out;
  out << elapsed_ms / 1000 << '.' << (elapsed_ms % 1000) / 100 << "s  ops " << operations_
      << "  holds " << holders_.size() << "  faults " << active_faults;
  return out.str();
}

ProgressDisplay::ProgressDisplay() : tty_(isatty(STDERR_FILENO) == 1) {}

void ProgressDisplay::show(const std::string& line) {
  if (!tty_) return;
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  shown_ = true;
}

void ProgressDisplay::finish() {
  if (tty_ && shown_) std::fprintf(stderr, "\n");
  shown_ = false;
}

}  // namespace locklab
