// The harness's own Db (db/process_db.h: MongosimDb on loopback) for tests of the harness's
// pieces that act on a Db (nemesis, workers, clients, the external backend): `members` members
// of this build's mongosim on 127.0.0.1 on reserved ports, logs and data in `dir`, a 1 s election
// timeout. Started by the caller (Db::start waits until ready, the harness's definition).
//
//   Supervisor supervisor;  TempDir dir;
//   std::unique_ptr<Db> db = harness_db(dir.path(), 3, supervisor);  db->start();
//
// Thread rules: the Db's (db/db.h).
#pragma once

#include <memory>
#include <string>

#include "db/db.h"
#include "run/process.h"

namespace locklab::testkit {

// Throws std::runtime_error when this build has no mongosim.
std::unique_ptr<Db> harness_db(const std::string& dir, int members, Supervisor& supervisor);

}  // namespace locklab::testkit
