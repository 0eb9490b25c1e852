// `locklab explore`: a search for failing experiments. Case i of an exploration is the scenario
// RapidCheck's generator (explore/generators.h) draws from a random source keyed by (seed, i) at
// a size growing with i, run with a seed derived from (seed, i): the sequence depends on the
// seed and the pins only, so a shard (cases i = I mod N) and a single case (--case i) reproduce
// alone. Each case runs for real (explore/case_runner.h) and is judged on the pinned properties
// (--properties: the scenario's [check] properties, those of the pin that apply to its
// workload; explore/space.h), or on every property that applies. The first case of each finding (a
// set of violated properties, or a member's death) is shrunk (explore/shrink.h) and confirmed; the
// result is written as an ordinary scenario with the run directory of a failing run beside it.
//
// Output directory (--out, default results/explore/<UTC time>):
//   cases/<i>.toml, cases/<i>/       each case's scenario and run directory (those of cases that
//                                    found nothing are removed unless --keep-runs)
//   shrink/<finding>-<seed>/...      the shrinking runs (passing ones removed)
//   repros/<finding>-<seed>.toml     the shrunk scenario: expect = "invalid" and the properties
//                                    (member died: expect = "valid", what a fixed member gives),
//                                    a comment saying what it shows and the commands
//   repros/<finding>-<seed>/         a failing run of it, with timeline.html
//   cases.jsonl                      one line per case: index, seed, size, outcome, seconds
//   summary.json, summary.md         the figures (explore/summary.h)
// Progress goes to stderr, one line per case.
//
// Exit code (explore_verdict, explore/summary.h): 0 nothing found and every case judged, 1 a
// finding, 2 bad arguments, an error of the explorer itself or any case not judged (a harness
// error: "nothing found" would claim it), 130 interrupted (after writing the summary). --merge:
// the same over the merged summary, and 2 also when a shard was interrupted or is missing.
// Thread rules: the process's main thread; one exploration per process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "explore/space.h"

namespace locklab {

struct ExploreOptions {
  ExplorePins pins;
  int cases = 100;               // cases in the whole sequence (all shards)
  std::optional<uint64_t> seed;  // unset: drawn, printed and stored
  int64_t time_budget_ms = 0;    // 0: none; no case starts after it
  int shard_index = 0;           // --shard I/N
  int shard_count = 1;
  std::optional<int> only_case;  // --case I: run case I only (a reproduce string)
  int max_size = 100;            // the largest RapidCheck size a case is drawn at
  int shrink_reruns = 2;         // K
  int confirm_runs = 5;          // N
  int64_t shrink_budget_ms = 600'000;
  bool keep_runs = false;
  bool first_finding = false;  // start no case after the first that found something
  bool within_claims = false;  // pins.clients' one client's claims fill the pins (claims.h)
  std::string out_dir;
  std::string command_line;  // as typed, for the repro's comment
};

int explore_command(const ExploreOptions& options);

// `locklab explore --merge DIR...`: one summary of several shards' summaries, written to
// `out_dir` (summary.json and summary.md). Exit code as explore_command's.
int merge_command(const std::vector<std::string>& dirs, const std::string& out_dir);

// The RapidCheck size case `index` is drawn at: 0..100 over the cases, as RapidCheck's own runner
// grows it, but over at most kSizeRampCasesMax cases and then again from 0, so a long
// exploration (make soak asks for a million cases and stops at its time budget) reaches large
// cases within minutes; capped at options.max_size.
inline constexpr int kSizeRampCasesMax = 100;
int case_size(const ExploreOptions& options, int index);

// Parses "I/N" (0 <= I < N <= 1000); throws std::invalid_argument naming the option.
std::pair<int, int> parse_shard(const std::string& text);
// Parses "90s", "5m", "2h" or plain seconds (digits, an optional fraction); throws
// std::invalid_argument naming the option.
int64_t parse_duration_ms(const std::string& text, const std::string& option);

}  // namespace locklab
