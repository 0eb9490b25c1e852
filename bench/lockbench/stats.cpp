#include "stats.h"

#include <cassert>
#include <cmath>
#include <numeric>

namespace lockbench {

double quantile(const std::vector<double>& sorted, double q) {
  assert(q >= 0 && q <= 1);
  if (sorted.empty()) return 0;
  const auto n = static_cast<double>(sorted.size());
  const auto rank = static_cast<size_t>(std::max(1.0, std::ceil(q * n)));
  return sorted[rank - 1];
}

double mean(const std::vector<double>& samples) {
  if (samples.empty()) return 0;
  return std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
}

double jain_index(const std::vector<int64_t>& shares) {
  assert(!shares.empty());
  double sum = 0;
  double squares = 0;
  for (int64_t x : shares) {
    sum += static_cast<double>(x);
    squares += static_cast<double>(x) * static_cast<double>(x);
  }
  if (squares == 0) return 1;
  return sum * sum / (static_cast<double>(shares.size()) * squares);
}

}  // namespace lockbench
