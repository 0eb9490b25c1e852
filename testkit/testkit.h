// locklab's test kit: the one way tests and benchmarks of sim/, lib/, harness/ and bench/
// start mongosim and wait for things. Nothing in production code depends on it; it uses the
// harness's own pieces where the harness has them (the process supervisor, port reservations, admin
// connections and its definition of a ready set), so a test's "ready" is the harness's.
//
//   poll_until.h    poll_until(deadline, done), after(timeout)
//   loopback.h      connect_loopback(port) (ports: the harness's db/port_reservation.h)
//   temp_dir.h      TempDir (removes itself)
//   mongosim_node.h MongosimNode: start on a port (and dbpath), kill, pause, resume, restart
//   replica_set.h   ReplicaSet: start N, initiate, wait ready, primary, wait_for_primary
//   own_process.h   wait_child_exit(child, deadline), own_thread_count()
//   harness_db.h    harness_db(dir, members, supervisor): the harness's own Db (MongosimDb)
//
// Thread rules: each file states its own; in short, nodes and sets belong to the thread that
// lives for the whole test, and commands may come from any thread.
#pragma once

#include "harness_db.h"
#include "loopback.h"
#include "mongosim_node.h"
#include "own_process.h"
#include "poll_until.h"
#include "replica_set.h"
#include "temp_dir.h"
