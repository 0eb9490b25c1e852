// A RapidCheck stateful test of the notify queue's commands (commands.h) against a model: four
// waiters' queued attempts, plain attempts, releases with and without the hand-over, leaves and
// tombstones of waiter ids in random order, each sent as built to mongosim; after each, the
// lock document's holder and queue must be the model's, every new grant's token above the last,
// and a hand-over named in grantW.
//
// Model: one lock, one client, commands one at a time (the server runs each atomically); keep
// and grace far beyond a case, so no entry lapses and no head is passed for the grace (queue_test
// covers both on the clock). Left out: concurrency, failover and lost replies (the library's
// resolutions are the Tombstone command here, sent by the test), waiters' wake-ups and leases
// (notify_test).
#include <gtest/gtest.h>
#include <mongoc/mongoc.h>
#include <rapidcheck/gtest.h>
#include <rapidcheck/state.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bson_ptr.h"
#include "commands.h"
#include "test_server.h"

namespace mongolock::test {
namespace {

using detail::Bson;
using detail::HoldRequest;
using detail::QueueTicket;

constexpr int kWaiters = 4;
constexpr int64_t kExpiryMs = 60'000;
constexpr int64_t kLongMs = 600'000;  // keep and grace that cannot pass during a case
const Owner kOwner{"host", 1, "queue model test"};

struct QueueModel {
  std::optional<std::string> holder;  // an attempt's id ("a<n>") or a waiter's ("w<k>")
  std::vector<std::string> queue;     // waiter ids in order
  std::set<std::string> tombstoned;   // waiter ids
  int attempts = 0;                   // attempt ids are "a0", "a1", ...

  // The head a queued attempt sees: the first entry whose waiter is not tombstoned.
  std::optional<std::string> head() const {
    for (const std::string& entry : queue) {
      if (tombstoned.count(entry) == 0) return entry;
    }
    return std::nullopt;
  }
  void erase(const std::string& waiter) {
    queue.erase(std::remove(queue.begin(), queue.end(), waiter), queue.end());
  }
  // The release of `holder` with the hand-over: the first entry that is not the holder's own
  // and not tombstoned gets the lock; none: free.
  void hand_over() {
    for (const std::string& entry : queue) {
      if (entry == holder || tombstoned.count(entry) != 0) continue;
      holder = entry;
      erase(entry);
      return;
    }
    holder.reset();
  }
};

struct System {
  mongoc_client_t* client = nullptr;
  std::string db;
  int64_t last_token = 0;

  Bson run(const Bson& command) {
    detail::BsonReply reply;
    bson_error_t error;
    const bool ok = mongoc_client_command_simple(client, db.c_str(), command.get(), nullptr,
                                                 reply.out(), &error);
    RC_ASSERT(ok);
    return reply.copy();
  }
  Bson document() {
    Bson reply =
        run(Bson(BCON_NEW("find", BCON_UTF8("locks"), "filter", "{", "_id", BCON_UTF8("L"), "}")));
    auto doc = detail::find_document(*reply, "cursor.firstBatch.0");
    return doc ? std::move(*doc) : detail::make_bson();
  }
  // The document must be the model's `expected`; a holder that changed to a new grant has a
  // higher token than every earlier grant.
  void check(const QueueModel& before, const QueueModel& expected) {
    Bson doc = document();
    RC_ASSERT(detail::find_utf8(*doc, "holder") == expected.holder);
    std::vector<std::string> queue;
    detail::for_each_document(*doc, "queue", [&](const bson_t& entry) {
      queue.push_back(detail::find_utf8(entry, "w").value_or("?"));
      return true;
    });
    RC_ASSERT(queue == expected.queue);
    if (expected.holder && expected.holder != before.holder) {
      const int64_t token = detail::find_int64(*doc, "token").value_or(0);
      RC_ASSERT(token > last_token);
      last_token = token;
      if (expected.holder->front() == 'w') {
        RC_ASSERT(detail::find_utf8(*doc, "grantW") == expected.holder);
      }
    }
  }
};

using Command = rc::state::Command<QueueModel, System>;

std::string waiter_name(int index) {
  return "w" + std::to_string(index);
}

// A command's effect on the model is `apply`; `run` sends it and checks the document against a
// copy of the model with the effect applied.
template <typename Self>
struct Checked : Command {
  void run(const QueueModel& model, System& system) const override {
    QueueModel expected = model;
    static_cast<const Self*>(this)->apply(expected);
    static_cast<const Self*>(this)->send(model, system);
    system.check(model, expected);
  }
};

struct Attempt : Checked<Attempt> {
  std::string waiter = waiter_name(*rc::gen::inRange(0, kWaiters));
  void apply(QueueModel& model) const override {
    const std::string id = "a" + std::to_string(model.attempts++);
    const std::optional<std::string> head = model.head();
    const bool turn = !head || head == waiter;
    if (!model.holder && turn) {
      model.holder = id;
      model.erase(waiter);
      if (head) model.erase(*head);
    } else if (model.holder != waiter &&
               std::find(model.queue.begin(), model.queue.end(), waiter) == model.queue.end()) {
      model.queue.push_back(waiter);  // a waiter holding by a hand-over is not queued again
    }
  }
  void send(const QueueModel& model, System& system) const {
    const std::string id = "a" + std::to_string(model.attempts);
    const Owner owner{"host-" + waiter, 2, waiter};
    const QueueTicket ticket{waiter, "p", kLongMs, kLongMs, kExpiryMs, &owner};
    HoldRequest request{"locks", "L", id, &kOwner, kExpiryMs, 0};
    request.ticket = &ticket;
    system.run(detail::acquire_command(request));
  }
  void show(std::ostream& os) const override { os << "Attempt(" << waiter << ")"; }
};

struct PlainAttempt : Checked<PlainAttempt> {
  void apply(QueueModel& model) const override {
    const std::string id = "a" + std::to_string(model.attempts++);
    if (!model.holder) model.holder = id;
  }
  void send(const QueueModel& model, System& system) const {
    const std::string id = "a" + std::to_string(model.attempts);
    system.run(detail::acquire_command(HoldRequest{"locks", "L", id, &kOwner, kExpiryMs, 0}));
  }
  void show(std::ostream& os) const override { os << "PlainAttempt"; }
};

struct Release : Checked<Release> {
  bool hand_over = *rc::gen::arbitrary<bool>();
  void checkPreconditions(const QueueModel& model) const override {
    RC_PRE(model.holder.has_value());
  }
  void apply(QueueModel& model) const override {
    if (hand_over) {
      model.hand_over();
    } else {
      model.holder.reset();
    }
  }
  void send(const QueueModel& model, System& system) const {
    HoldRequest request{"locks", "L", *model.holder, &kOwner, kExpiryMs, 0};
    request.hand_over = hand_over;
    Bson reply = system.run(detail::release_command(request));
    RC_ASSERT(detail::release_removed_hold(*reply));
    // A hand-over release's reply names the waiter it handed the lock to (every waiter here is
    // of Provider "p"); a release that freed the lock, or a plain one, names nobody.
    QueueModel after = model;
    apply(after);
    const std::optional<detail::HandOverSeen> seen = detail::hand_over_in_release(*reply, "p");
    RC_ASSERT((seen ? std::optional<std::string>(seen->waiter) : std::nullopt) ==
              (hand_over ? after.holder : std::nullopt));
  }
  void show(std::ostream& os) const override { os << "Release(hand_over=" << hand_over << ")"; }
};

struct Leave : Checked<Leave> {
  std::string waiter = waiter_name(*rc::gen::inRange(0, kWaiters));
  void apply(QueueModel& model) const override {
    if (model.holder == waiter) model.hand_over();
    model.erase(waiter);
  }
  void send(const QueueModel&, System& system) const {
    system.run(detail::leave_queue_command("locks", "L", waiter));
  }
  void show(std::ostream& os) const override { os << "Leave(" << waiter << ")"; }
};

struct Tombstone : Checked<Tombstone> {
  std::string waiter = waiter_name(*rc::gen::inRange(0, kWaiters));
  void apply(QueueModel& model) const override {
    if (model.holder == waiter) model.holder.reset();  // a resolution frees, it hands nothing over
    model.tombstoned.insert(waiter);
  }
  void send(const QueueModel&, System& system) const {
    HoldRequest request{"locks", "L", waiter, &kOwner, kExpiryMs, kLongMs};
    Bson reply = system.run(detail::resolve_command(request, /*rw=*/false));
    RC_ASSERT(detail::find_int64(*reply, "n") == detail::kResolveStatements);
  }
  void show(std::ostream& os) const override { os << "Tombstone(" << waiter << ")"; }
};

RC_GTEST_PROP(QueueModelTest, QueueCommandsMatchTheModel, ()) {
  ReplicaSet* server = shared_server();
  RC_PRE(server != nullptr);
  System system;
  system.client = mongoc_client_new(server->uri().c_str());
  RC_ASSERT(static_cast<bool>(system.client));
  system.db = fresh_database();
  QueueModel model;
  try {
    rc::state::check(model, system,
                     rc::state::gen::execOneOfWithArgs<Attempt, Attempt, Attempt, PlainAttempt,
                                                       Release, Release, Leave, Tombstone>());
  } catch (...) {
    mongoc_client_destroy(system.client);
    throw;
  }
  mongoc_client_destroy(system.client);
}

}  // namespace
}  // namespace mongolock::test
