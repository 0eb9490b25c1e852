#include "harness_db.h"

#include <stdexcept>

#include "db/process_db.h"
#include "mongosim_node.h"

namespace locklab::testkit {

std::unique_ptr<Db> harness_db(const std::string& dir, int members, Supervisor& supervisor) {
  if (mongosim_program().empty()) throw std::runtime_error("this build has no mongosim");
  DbConfig c;
  c.members = members;
  c.data_dir = dir;
  c.log_dir = dir;
  c.election_timeout_ms = 1000;
  return std::make_unique<MongosimDb>(c, supervisor, mongosim_program(), Placement::kLoopback);
}

}  // namespace locklab::testkit
