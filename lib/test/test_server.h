// Shared helpers for mongolock's integration tests: one mongosim per test binary (started on
// first use), fresh database names, and Options suited to tests.
// Thread rules: shared_server() is safe from any thread (function-local static).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "mongolock/mongolock.h"
#include "mongosim_process.h"

namespace mongolock::test {

// nullptr when the build has no mongosim; the fixture then skips.
MongosimProcess* shared_server();

// A database name no other test uses.
std::string fresh_database();

// Polls `condition` until it holds or `deadline_after` passes; returns whether it held.
bool eventually(const std::function<bool()>& condition,
                std::chrono::milliseconds deadline_after = std::chrono::seconds(15));

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = shared_server();
    if (server_ == nullptr) GTEST_SKIP() << "mongosim is not part of this build (MONGOSIM_PATH)";
  }
  // Options that make tests quick and quiet: no index unless asked, short waits.
  static Options test_options() {
    Options options;
    options.create_index = false;
    options.busy_wait_min_ms = 1;
    options.busy_wait_max_ms = 20;
    return options;
  }
  MongosimProcess* server_ = nullptr;
};

}  // namespace mongolock::test
