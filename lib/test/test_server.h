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
  // Waits until the index `name` exists on db.collection (a TTL index made by a Provider's
  // background thread), so what follows is the index's doing.
  void wait_for_index(const std::string& db, const char* collection, const char* name) {
    ASSERT_TRUE(eventually([&] {
      try {
        const std::string list =
            server_->command(db, std::string(R"({"listIndexes": ")") + collection + R"("})");
        return list.find(name) != std::string::npos;
      } catch (const std::runtime_error&) {
        return false;  // the collection does not exist yet
      }
    })) << "the index "
        << name << " was never created";
  }
  MongosimProcess* server_ = nullptr;
};

// A ServerTest that sets the failCommand fail point: it is switched off after every test, so a
// failing assertion cannot leave it armed for the next test on the shared server.
class FailPointTest : public ServerTest {
 protected:
  void TearDown() override {
    if (server_ == nullptr) return;
    server_->command("admin", R"({"configureFailPoint": "failCommand", "mode": "off"})");
  }
};

}  // namespace mongolock::test
