// Shared helpers for mongolock's integration tests: one mongosim per test binary (a one-member
// replica set from the test kit, started on first use), fresh database names, and Options
// suited to tests.
// Thread rules: shared_server() is safe from any thread (function-local static); the server
// belongs to the thread that first asked for it (the test runner's main thread).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "bson_ptr.h"
#include "mongolock/mongolock.h"
#include "testkit.h"

namespace mongolock::test {

using locklab::testkit::after;
using locklab::testkit::poll_until;
using locklab::testkit::ReplicaSet;

// How long a test waits for something the library does in the background.
inline constexpr std::chrono::milliseconds kEventually{15'000};

// A one-member set (the kit's, its own name) on 127.0.0.1 with the TTL monitor waking every second;
// nullptr when the build has no mongosim (MONGOSIM_PATH empty): callers skip. Throws
// std::runtime_error when the server does not come up.
std::unique_ptr<ReplicaSet> start_server();

// The binary's shared server (start_server() on first use); nullptr as start_server().
ReplicaSet* shared_server();

// A database name no other test uses.
std::string fresh_database();

// The lock document `name` of db.collection, read with a client of its own (an empty document
// when there is none).
detail::Bson read_lock_document(const std::string& uri, const std::string& db,
                                const std::string& collection, const std::string& name);

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
  // test_options() with a lease of expiry_ms that nothing extends: the test decides when it ends.
  static Options fixed_lease_options(int64_t expiry_ms) {
    Options options = test_options();
    options.expiry_ms = expiry_ms;
    options.auto_extend = false;
    return options;
  }
  // Waits until the index `name` exists on db.collection (a TTL index made by a Provider's
  // background thread), so what follows is the index's doing.
  void wait_for_index(const std::string& db, const char* collection, const char* name) {
    ASSERT_TRUE(poll_until(after(kEventually),
                           [&] {
                             try {
                               const std::string list =
                                   server_->member(0)
                                       .command(db, std::string(R"({"listIndexes": ")") +
                                                        collection + R"("})")
                                       .dump();
                               return list.find(name) != std::string::npos;
                             } catch (const std::runtime_error&) {
                               return false;  // the collection does not exist yet
                             }
                           }))
        << "the index " << name << " was never created";
  }
  ReplicaSet* server_ = nullptr;
};

// A ServerTest that sets the failCommand fail point: it is switched off after every test, so a
// failing assertion cannot leave it armed for the next test on the shared server.
class FailPointTest : public ServerTest {
 protected:
  void TearDown() override {
    if (server_ == nullptr) return;
    server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": "off"})");
  }
};

// A ServerTest that steps the member's clock (mongosimSetClockOffset); the offset goes back to 0
// after every test, so a failing assertion cannot leave the shared server's clock moved.
class ClockStepTest : public ServerTest {
 protected:
  void TearDown() override {
    if (server_ != nullptr) set_clock_offset(0);
  }
  void set_clock_offset(int64_t offset_ms) {
    server_->member(0).command("admin",
                               R"({"mongosimSetClockOffset": )" + std::to_string(offset_ms) + "}");
  }
};

}  // namespace mongolock::test
