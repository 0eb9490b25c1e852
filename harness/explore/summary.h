// An exploration's summary: kept as JSON (summary.json), rendered as Markdown (summary.md), and
// merged across shards.
//
// Shape: {"command", "seed", "properties" (the --properties pin, in report order; [] = every
// property that applies), "shards": [{"index", "count", "cases", "elapsed_s"}], "cases",
// "elapsed_s" (summed over shards: runner time), "cases_per_minute", "outcomes": {verdict:
// count}, "findings_by_property": {property: cases}, "faults_covered": {kind: windows},
// "first_failure_case", "interrupted", "findings": [{"key", "case", "case_seed", "reproduce",
// "shrink": {"steps", "candidates", "runs", "complete", "seconds"}, "original_size",
// "final_size", "confirmed": {"failed", "runs"}, "repro"}], "harness_errors": [{"case",
// "detail"}]}; a merged summary adds "shards_missing": the split's shard indexes none of the
// merged summaries held ([] when the merge covers the whole exploration).
// Invariant: cases == the sum of outcomes. Pure functions; any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace locklab {

// An empty summary for a shard.
nlohmann::json new_summary(const std::string& command, uint64_t seed, int shard_index,
                           int shard_count);
// Recomputes cases_per_minute from cases and elapsed_s.
void finish_summary(nlohmann::json& summary);
// Merges shard summaries into one. Throws std::invalid_argument when they come from different
// explorations (seeds or properties differ) or a summary lacks a key.
nlohmann::json merge_summaries(const std::vector<nlohmann::json>& summaries);
std::string summary_markdown(const nlohmann::json& summary);

// What a summary lets an exploration claim, as its exit code and its last line: 1 when it found
// something; else 2 when any case was not judged (a harness error, or a client that did not run),
// a run was interrupted, or a merge lacks shards of its split: "nothing found" would then claim
// cases nobody ran or judged; else 0. The line counts the cases, how many were judged and not,
// the findings, and says "interrupted" or "shards missing". A run's own interruption exits 130:
// the caller's to decide.
struct ExploreVerdict {
  int exit_code = 0;
  std::string line;
};
ExploreVerdict explore_verdict(const nlohmann::json& summary);

}  // namespace locklab
