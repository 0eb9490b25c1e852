// Small statistics over samples: nearest-rank quantiles, mean and Jain's fairness index.
// Pure functions; quantile() wants its input sorted ascending.
#pragma once

#include <cstdint>
#include <vector>

namespace lockbench {

// Nearest rank: the smallest sample with at least q of the samples at or below it (q in [0, 1]).
// 0 for no samples.
double quantile(const std::vector<double>& sorted, double q);
double mean(const std::vector<double>& samples);
// Jain's index (sum x)^2 / (n * sum x^2): 1 when every x is equal, 1/n when one takes all.
// 1 for all-zero input (nobody got anything: equal shares); n > 0.
double jain_index(const std::vector<int64_t>& shares);

}  // namespace lockbench
