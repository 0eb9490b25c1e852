// A Store with its registry, clock and fail points, driven the way the server core drives it:
// build a CommandContext from a JSON command and call the registered handler.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "bson/codec.h"
#include "bson/value.h"
#include "command/command.h"
#include "data/store.h"

namespace mongosim::data::testing {

using bson::Document;
using bson::Value;

inline Document J(std::string_view json) {
  return bson::from_json(json);
}

struct Reply {
  Document doc;
  std::optional<OpTime> last_write;
};

class StoreFixture : public ::testing::Test {
 protected:
  StoreFixture() { make_store(60); }

  void make_store(int64_t ttl_sleep_secs) {
    if (store_) store_->stop();
    StoreOptions options;
    options.clock = &clock_;
    options.failpoints = &failpoints_;
    ttl_sleep_secs_ = ttl_sleep_secs;
    // The monitor asks for its sleep under its lock, right before it sleeps.
    options.ttl_monitor_sleep_secs = [this] {
      if (on_ttl_sleep_) on_ttl_sleep_();
      return ttl_sleep_secs_;
    };
    if (customize_) customize_(options);
    registry_ = std::make_unique<CommandRegistry>();
    store_ = std::make_unique<Store>(std::move(options));
    store_->register_commands(*registry_);
  }

  // How long before it runs a command counts as received (its maxTimeMS counts from then): a test
  // sets an hour to find a command's deadline already passed, with no timing involved.
  std::chrono::milliseconds received_ago_{0};

  // Runs a command on `db`; CommandError and CloseConnection propagate.
  Reply run_full(const std::string& db, const Document& body) {
    CommandContext ctx;
    ctx.db = db;
    ctx.body = body;
    const CommandSpec* spec = registry_->find(body.first_key());
    if (spec == nullptr) throw CommandError(code::kCommandNotFound, "no such command");
    ctx.name = spec->name;
    if (const Value* lsid = body.get("lsid")) ctx.lsid = *lsid;
    if (const Value* txn = body.get("txnNumber")) ctx.txn_number = txn->as_int64();
    ctx.now_ms = clock_.now_ms();
    ctx.received_at = std::chrono::steady_clock::now() - received_ago_;
    Document reply = spec->handler(ctx);
    return Reply{std::move(reply), ctx.last_write_optime};
  }
  Document run(const std::string& db, const Document& body) { return run_full(db, body).doc; }
  Document run(const Document& body) { return run("db", body); }
  Document run(std::string_view json) { return run("db", J(json)); }

  // Runs a command expected to fail; returns the error.
  CommandError fail(std::string_view json, const std::string& db = "db") {
    try {
      Document d = run(db, J(json));
      ADD_FAILURE() << "expected an error, got " << bson::to_json(d);
    } catch (const CommandError& e) {
      return e;
    }
    return CommandError(0, "");
  }

  // All documents of db.coll in natural order, through find.
  bson::Array all(const std::string& coll, const std::string& db = "db") {
    Document r =
        run(db, Document{{"find", bson::V(coll)}, {"batchSize", bson::V(int64_t{100000})}});
    return r.get("cursor")->as_document().get("firstBatch")->as_array();
  }

  ServerClock clock_;
  FailPoints failpoints_;
  int64_t ttl_sleep_secs_ = 60;
  std::function<void()> on_ttl_sleep_;  // called each time the TTL monitor is about to sleep
  std::function<void(StoreOptions&)> customize_;  // applied to the options by make_store
  std::unique_ptr<CommandRegistry> registry_;
  std::unique_ptr<Store> store_;
};

inline std::string js(const Value& v) {
  return bson::to_json(v);
}
inline std::string js(const Document& d) {
  return bson::to_json(d);
}

}  // namespace mongosim::data::testing

namespace mongosim::data::testing {

// Type-exact comparison against extended JSON, with both sides printed on failure.
inline ::testing::AssertionResult Same(const Document& actual, std::string_view expected_json) {
  Document expected = J(expected_json);
  if (actual.identical(expected)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "actual " << js(actual) << "\nexpected " << js(expected);
}
inline ::testing::AssertionResult Same(const Value& actual, std::string_view expected_json) {
  if (!actual.is_document())
    return ::testing::AssertionFailure() << "not a document: " << js(actual);
  return Same(actual.as_document(), expected_json);
}

inline const Document& cursor_of(const Document& reply) {
  return reply.get("cursor")->as_document();
}

}  // namespace mongosim::data::testing
