// The mongosim cluster the harness's integration tests start: `members` members on 127.0.0.1
// with free ports, logs and data in `dir`, a 1 s election timeout. One definition, so every
// test's cluster is the harness's own Cluster with the same settings.
#pragma once

#include <string>

#include "cluster.h"
#include "programs.h"

namespace locklab::testing {

inline ClusterOptions local_cluster_options(const std::string& dir, int members) {
  ClusterOptions o;
  o.program = std::string(LOCKLAB_BIN_DIR) + "/mongosim";
  o.data_dir = dir;
  o.log_dir = dir;
  o.election_timeout_ms = 1000;
  for (int m = 0; m < members; ++m) o.members.push_back({"", "127.0.0.1", pick_free_port()});
  return o;
}

}  // namespace locklab::testing
