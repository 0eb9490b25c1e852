// The mongosim set the harness's integration tests start: `members` members on 127.0.0.1 with
// free ports, logs and data in `dir`, a 1 s election timeout. One definition, so every test's
// set is the harness's own MongosimDb with the same settings.
#pragma once

#include <memory>
#include <string>

#include "db/admin.h"
#include "db/process_db.h"
#include "programs.h"

namespace locklab::testing {

inline std::unique_ptr<Db> local_db(const std::string& dir, int members, Supervisor& supervisor) {
  DbConfig c;
  c.members = members;
  c.data_dir = dir;
  c.log_dir = dir;
  c.election_timeout_ms = 1000;
  return std::make_unique<MongosimDb>(c, supervisor, std::string(LOCKLAB_BIN_DIR) + "/mongosim",
                                      Placement::kLoopback);
}

}  // namespace locklab::testing
