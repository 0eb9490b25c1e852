// The replication glue's safety rules, against real mongosim processes with --dbpath (real TCP,
// SIGSTOP pauses, SIGKILL, fail points to hold a thread at one point):
// - a write paused between its writability check and its oplog append on a primary that is then
//   deposed cannot append in the new term and so cannot make the new primary's write look
//   majority-committed (the deposed-primary schedule);
// - an oplog batch fetched across an election is dropped, not applied after the new primary's
//   no-op (the member used to abort on the journal's optime-order assertion);
// - a write that changes nothing, under w:"majority", waits for the member's newest optime;
// - a primary in catch-up fetches from its catch-up target and becomes writable;
// - replSetStepDown compares the secondaries against the oplog's newest entry;
// - after a rollback, a member below its minValid refuses majority reads.
//
// What these tests leave out: each drives one interleaving chosen with fail points and pauses,
// not a search over interleavings; clocks are the machine's (the fetch test sets one member's back
// a few seconds with mongosimSetClockOffset); no disk faults; no member crash mid-write.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>  // std::jthread: joined even when an assertion returns early

#include "server/tests/sim_set.h"

namespace mongosim::testing {
namespace {

constexpr int32_t kOperationFailed = 96;
constexpr int64_t kClockBackMs = 5000;
const Document kW3{{"w", V(int32_t{3})}, {"wtimeout", V(int32_t{20000})}};
const Document kW1{{"w", V(int32_t{1})}};
const Document kMajority{{"w", V("majority")}, {"wtimeout", V(int32_t{5000})}};

// Every member refuses replSetFetchOplog from the others (errorCode), so nobody can fetch from it.
Document refuse_fetches() {
  return Document{{"failCommands", V(bson::Array{V("replSetFetchOplog")})},
                  {"errorCode", V(kOperationFailed)}};
}

// A member refuses rollback and fetch requests from the others (errorCode): nobody can roll
// back against it or fetch from it.
Document refuse_rollback_and_fetches() {
  return Document{
      {"failCommands", V(bson::Array{V("replSetRollbackOptimes"), V("replSetRollbackFetch"),
                                     V("replSetFetchOplog")})},
      {"errorCode", V(kOperationFailed)}};
}

// Whether member i logged that an operation is held at a pausing fail point.
bool paused_at_fail_point(SimSet& set, int i) {
  return set.member(i).log_text().find("Fail point enabled: pausing") != std::string::npos;
}

// The host member i fetches from now, per its replSetGetStatus ("" when none or no answer).
std::string sync_source(SimSet& set, int i) {
  auto status = set.command(i, Document{{"replSetGetStatus", V(1)}});
  if (!reply_is_ok(status)) return "";
  const bson::Value* host = status->get("syncSourceHost");
  return host != nullptr && host->is_string() ? host->as_string() : "";
}

bool is_writable_primary(SimSet& set, int i) {
  auto h = set.hello(i);
  return h && h->get("isWritablePrimary")->truthy();
}

// Asks member i to stand for election until it is PRIMARY (writable or still catching up).
// One replSetStepUp can lose in a slow run (a vote request that times out, an election another
// member started first) and mongod answers it so too; the tests need the member elected, not
// the first request's luck.
bool step_up(SimSet& set, int i) {
  auto is_primary = [&] {  // myState is PRIMARY (1) during catch-up too; hello is not writable
    auto status = set.command(i, Document{{"replSetGetStatus", V(1)}});
    return reply_is_ok(status) && status->get("myState")->number_as_double() == 1;
  };
  return poll_until(after(kDurableConvergeTimeout), [&] {
    return is_primary() || reply_is_ok(set.command(i, Document{{"replSetStepUp", V(1)}}));
  });
}

bool has_id(SimSet& set, int i, const std::string& id_json) {
  auto ids = set.ids(i);
  return ids && std::find(ids->begin(), ids->end(), id_json) != ids->end();
}

// Schedule A: the primary A's writer is paused between its check and its append; B wins a
// later term with C's vote; C then lags (paused) and nobody can fetch from B, so B's write W1 can
// only look majority-committed if A reports an optime of B's term. A's writer is released once
// the wall clock has passed W1's second, so anything A would append then sorts after W1. Then
// B dies: if W1 was acknowledged it must survive on the member elected next. While the writer
// is held, commands to A may wait for the data lock (before the fix it held it), so the test
// sends A nothing it must wait for but the fail point's release.
TEST(ReplState, DeposedPrimarysPausedWriteCannotCountTowardTheNewPrimarysMajority) {
  SimSet set(durable_set(3));
  int a = set.primary();
  ASSERT_GE(a, 0);
  int b = (a + 1) % 3;
  int c = (a + 2) % 3;
  ASSERT_TRUE(write_ok(set.insert(a, Document{{"_id", V("base")}}, kW3))) << set.logs();

  fail_point(set, a, "hangBeforeOplogAppend", V("alwaysOn"));
  std::optional<Document> w0;
  std::jthread writer([&] { w0 = set.insert(a, Document{{"_id", V("w0")}}, kW1); });
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    return paused_at_fail_point(set, a);
  })) << set.logs();

  ASSERT_TRUE(step_up(set, b)) << set.logs();
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    return is_writable_primary(set, b);
  })) << set.logs();
  set.pause(c);
  fail_point(set, b, "failCommand", V("alwaysOn"), refuse_fetches());
  std::optional<Document> w1;
  std::jthread new_primary_writer([&] {
    w1 = set.insert(b, Document{{"_id", V("w1")}},
                    Document{{"w", V("majority")}, {"wtimeout", V(int32_t{8000})}});
  });
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] { return has_id(set, b, "\"w1\""); }))
      << set.logs();
  wait_for_next_second();
  fail_point(set, a, "hangBeforeOplogAppend", V("off"));
  new_primary_writer.join();
  writer.join();
  bool w1_acknowledged = write_ok(w1);

  set.kill(b);
  set.resume(c);
  std::optional<Document> last;
  int next = set.wait_for_majority_write(&last);
  ASSERT_GE(next, 0) << "no majority write; last reply " << show(last) << "\n" << set.logs();
  if (w1_acknowledged) {
    EXPECT_TRUE(has_id(set, next, "\"w1\""))
        << "W1 was acknowledged w:majority and is lost; w1 reply " << show(w1) << "\n"
        << set.logs();
  }
  // The paused write was in flight when its member stepped down: it is interrupted (11602)
  // with nothing written, instead of appending in a term its member never led.
  ASSERT_TRUE(w0.has_value()) << set.logs();
  EXPECT_FALSE(reply_is_ok(w0)) << show(w0);
  const bson::Value* code = w0->get("code");
  EXPECT_TRUE(code != nullptr && code->number_as_double() == 11602) << show(w0);
}

// Schedule B: X's fetch from the primary S is held (blockConnection) while the third member Y is
// paused, so the held fetch is X's. With the fetch in flight, X's clock is set back a few seconds
// and S writes an entry nobody else has, in a later second than everything before. X then refuses
// rollback and fetch requests, so S, deposed, cannot roll that entry back (against X) before the
// held fetch has read it. Y resumes; X wins the next term with Y's vote and, with no catch-up,
// writes its new-primary no-op: a newer optime with an older timestamp. The held fetch then returns
// S's entry. X must drop that batch (and say so in its log), not apply it. Applying such a batch is
// what aborted members on the journal's optime-order assertion (scenario replset-random-mix at seed
// 3221192417); against that code (b9676d2) this schedule ends with X dead of that assertion. The
// clock step comes after the fetch is held: a member whose clock jumps may drop its sync source for
// a while, and then no fetch of X's would be in flight. Model: the drop is checked where the
// schedule makes it happen; X's clock step makes its timers fire late or early (they run on its
// offset wall clock, as mongod's run on its wall clock), so the set may go through further
// elections before it takes the closing majority write, and that write may be indeterminate on the
// way (wait_for_majority_write's comment). The hold stands for a slow network; the steps between
// the hold and its end must fit in it (kBlockMs). The drop message is not tied to S's batch:
// the fail point holds every fetch, so X's next fetch (or Y's) may be the one dropped. What
// shows that this schedule delivers S's entry to X as primary is the same test against
// b9676d2's mongosim, where X dies of the journal's optime-order assertion; here, an applied
// entry out of optime order would abort X the same way and fail the test.
TEST(ReplState, FetchBatchInFlightAcrossAnElectionIsDroppedNotApplied) {
  SimSet set(durable_set(3, {{"catchUpTimeoutMillis", 0}, {"chainingAllowed", false}}));
  int s = set.primary();
  ASSERT_GE(s, 0);
  int x = (s + 1) % 3;
  int y = (s + 2) % 3;
  ASSERT_TRUE(write_ok(set.insert(s, Document{{"_id", V("base")}}, kW3))) << set.logs();
  // Without chaining X fetches from S, so its held fetch is one S answers.
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    return sync_source(set, x) == set.member(s).host();
  })) << set.logs();

  constexpr int32_t kBlockMs = 1800;  // below the fetcher's 2 s network timeout
  const Document hold_fetches{{"failCommands", V(bson::Array{V("replSetFetchOplog")})},
                              {"blockConnection", V(true)},
                              {"blockTimeMS", V(kBlockMs)}};
  wait_for_next_second();
  set.pause(y);
  int64_t held_before = fail_point(set, s, "failCommand", V("alwaysOn"), hold_fetches);
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    return fail_point(set, s, "failCommand", V("alwaysOn"), hold_fetches) > held_before;
  })) << set.logs();
  ASSERT_TRUE(
      reply_is_ok(set.command(x, Document{{"mongosimSetClockOffset", V(int64_t{-kClockBackMs})}})));
  ASSERT_TRUE(write_ok(set.insert(s, Document{{"_id", V("stale")}}, kW1))) << set.logs();
  // S will step down on hearing X's term; it must not roll "stale" back against X before the
  // held fetch reads S's oplog, or the batch comes back without it.
  fail_point(set, x, "failCommand", V("alwaysOn"), refuse_rollback_and_fetches());
  set.resume(y);
  // X may already be standing (its clock step can fire its election timer): either way it
  // becomes primary.
  ASSERT_TRUE(step_up(set, x)) << set.logs();

  // The held batch comes back to X as primary: X drops it, or (before the fix) dies.
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    return !set.member(x).running() ||
           set.member(x).log_text().find("Dropped a fetched oplog batch") != std::string::npos;
  })) << set.logs();
  ASSERT_TRUE(set.member(x).running()) << set.logs();
  fail_point(set, s, "failCommand", V("off"));
  fail_point(set, x, "failCommand", V("off"));
  set.command(x, Document{{"mongosimSetClockOffset", V(int64_t{0})}});
  std::optional<Document> last;
  ASSERT_GE(set.wait_for_majority_write(&last), 0)
      << "no majority write; last reply " << show(last) << "\n"
      << set.logs();
  for (int i = 0; i < set.size(); ++i) EXPECT_TRUE(set.member(i).running()) << set.logs();
}

// The majority waiter judges a write by the term it was written in. A writes W in term T and
// pauses before its write-concern wait; B, which never received W, wins term T+1 with C's vote
// (or a later one, should its step-up be retried; T+1 below); A rolls W back against B, then
// wins term T+2 and commits a newer entry. When A's waiter resumes, the commit point (T+2, ...) is
// past W's optime (T, ts) in optime order although W is gone: a waiter that took the member's term
// when it began waiting (T+2) acknowledges W at majority, a lost acknowledged write. Judged by W's
// own term it answers PrimarySteppedDown. Model: real processes and a real rollback; the fail point
// stands for a connection thread descheduled between its append and its wait (late execution). No
// catch-up, so B cannot fetch W as a new primary.
TEST(ReplState, MajorityWaiterJudgesAWriteByItsOwnTerm) {
  SimSet set(durable_set(3, {{"catchUpTimeoutMillis", 0}}));
  int a = set.primary();
  ASSERT_GE(a, 0);
  int b = (a + 1) % 3;
  int c = (a + 2) % 3;
  ASSERT_TRUE(write_ok(set.insert(a, Document{{"_id", V("base")}}, kW3))) << set.logs();
  stop_fetcher(set, b);
  stop_fetcher(set, c);
  fail_point(set, a, "hangBeforeWaitingForWriteConcern", V("alwaysOn"));
  std::optional<Document> w;
  std::jthread writer([&] {
    w = set.insert(a, Document{{"_id", V("w")}},
                   Document{{"w", V("majority")}, {"wtimeout", V(int32_t{60000})}});
  });
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    return paused_at_fail_point(set, a);
  })) << set.logs();

  ASSERT_TRUE(step_up(set, b)) << set.logs();
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    return is_writable_primary(set, b);
  })) << set.logs();
  fail_point(set, b, "stopReplProducer", V("off"));
  fail_point(set, c, "stopReplProducer", V("off"));
  // A rolls W back against B and catches up with B's term.
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    return set.state(a) == "SECONDARY" && !has_id(set, a, "\"w\"");
  })) << set.logs();
  ASSERT_TRUE(step_up(set, a)) << set.logs();
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    return is_writable_primary(set, a);
  })) << set.logs();
  // Every write pauses at the fail point, so A's own new-primary no-op is the newer entry: wait
  // until it is majority-committed (the commit point is in A's new term).
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    auto status = set.command(a, Document{{"replSetGetStatus", V(1)}});
    if (!reply_is_ok(status)) return false;
    const Document& optimes = status->get("optimes")->as_document();
    const Document& committed = optimes.get("lastCommittedOpTime")->as_document();
    return committed.get("t")->number_as_double() == status->get("term")->number_as_double();
  })) << set.logs();

  fail_point(set, a, "hangBeforeWaitingForWriteConcern", V("off"));
  writer.join();
  ASSERT_TRUE(w.has_value()) << set.logs();
  EXPECT_FALSE(write_ok(w) && !has_id(set, a, "\"w\""))
      << "W acknowledged at majority after it was rolled back: " << show(w);
  const bson::Value* wce = w->get("writeConcernError");
  ASSERT_TRUE(wce != nullptr && wce->is_document()) << show(w);
  EXPECT_EQ(wce->as_document().get("code")->number_as_double(), 189) << show(w);
}

// C: an update that matches nothing, an update to an identical document and a findAndModify
// that finds nothing write no oplog entry; under w:"majority" they must still wait until the
// member's newest optime is majority-committed (mongod waits for the client's last optime),
// or a primary could answer "no match" from data that is then rolled back.
TEST(ReplState, WritesThatChangeNothingWaitForTheNewestOptimeUnderMajority) {
  SimSet set(durable_set(3));
  int p = set.primary();
  ASSERT_GE(p, 0);
  ASSERT_TRUE(write_ok(set.insert(p, Document{{"_id", V("same")}, {"v", V(1)}}, kW3)));
  // The secondaries stay connected (the primary keeps its majority) but replicate nothing.
  for (int i = 0; i < 3; ++i) {
    if (i != p) stop_fetcher(set, i);
  }
  ASSERT_TRUE(write_ok(set.insert(p, Document{{"_id", V("uncommitted")}}, kW1)));
  const Document majority_short{{"w", V("majority")}, {"wtimeout", V(int32_t{1000})}};
  auto no_match = set.command(
      p,
      Document{
          {"update", V("c")},
          {"updates",
           V(bson::Array{V(Document{{"q", V(Document{{"_id", V("none")}})},
                                    {"u", V(Document{{"$set", V(Document{{"v", V(2)}})}})}})})},
          {"writeConcern", V(majority_short)}},
      "db");
  auto identical = set.command(
      p,
      Document{
          {"update", V("c")},
          {"updates",
           V(bson::Array{V(Document{{"q", V(Document{{"_id", V("same")}})},
                                    {"u", V(Document{{"$set", V(Document{{"v", V(1)}})}})}})})},
          {"writeConcern", V(majority_short)}},
      "db");
  auto fam_miss = set.command(p,
                              Document{{"findAndModify", V("c")},
                                       {"query", V(Document{{"_id", V("none")}})},
                                       {"update", V(Document{{"$set", V(Document{{"v", V(3)}})}})},
                                       {"writeConcern", V(majority_short)}},
                              "db");
  for (int i = 0; i < 3; ++i) {
    if (i != p) fail_point(set, i, "stopReplProducer", V("off"));
  }
  for (const auto* reply : {&no_match, &identical, &fam_miss}) {
    ASSERT_TRUE(reply_is_ok(*reply)) << show(*reply);
    EXPECT_TRUE((*reply)->has("writeConcernError"))
        << "answered at once although the newest optime is not majority-committed: "
        << show(*reply);
  }
}

// A write that changed nothing reports as its operationTime the optime its write concern waited
// for (mongod's last op, set to the system's), not a newer one appended while it waited: a
// client takes a majority-acknowledged write's operationTime as majority committed. Here B is
// written (w: 0, which waits for nothing) while the no-op update is held before its wait.
TEST(ReplState, AWriteThatChangedNothingReportsTheOptimeItWaitedFor) {
  SimSet set(durable_set(1));
  const int p = set.primary();
  ASSERT_GE(p, 0);
  auto a = set.insert(p, Document{{"_id", V("a")}}, kW1);
  ASSERT_TRUE(write_ok(a)) << show(a);
  const bson::Value* a_time = a->get("operationTime");
  ASSERT_NE(a_time, nullptr) << show(a);
  fail_point(set, p, "hangBeforeWaitingForWriteConcern", V("alwaysOn"));
  std::optional<Document> no_match;
  std::jthread writer([&] {
    no_match = set.command(
        p,
        Document{
            {"update", V("c")},
            {"updates",
             V(bson::Array{V(Document{{"q", V(Document{{"_id", V("none")}})},
                                      {"u", V(Document{{"$set", V(Document{{"v", V(2)}})}})}})})},
            {"writeConcern", V(Document{{"w", V("majority")}})}},
        "db");
  });
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    return paused_at_fail_point(set, p);
  })) << set.logs();
  auto b = set.insert(p, Document{{"_id", V("b")}}, Document{{"w", V(int32_t{0})}});
  ASSERT_TRUE(write_ok(b)) << show(b);
  fail_point(set, p, "hangBeforeWaitingForWriteConcern", V("off"));
  writer.join();
  ASSERT_TRUE(write_ok(no_match)) << show(no_match);
  const bson::Value* waited = no_match->get("operationTime");
  ASSERT_NE(waited, nullptr) << show(no_match);
  EXPECT_EQ(waited->as_timestamp(), a_time->as_timestamp())
      << "reported a newer optime than its write concern covered: " << show(no_match);
}

// F: a one-member set just initiated on a --dbpath has no oplog entry yet; its newest optime is
// the set's initiation optime, which no journal record holds. A write that changes nothing under
// w:"majority" (no wtimeout) or j:true must still be acknowledged at once, as mongod's is (its
// last op is its "initiating set" no-op, already journaled); it used to wait 60 s for the
// journal and answer writeConcernError 64. The set is initiated by hand: SimSet's readiness
// check writes a document, after which the bug cannot show. RawClient gives up after 10 s, so a
// wait that hangs fails the test with no reply.
TEST(ReplState, WritesThatChangeNothingOnAFreshOneMemberSetAreAcknowledgedAtOnce) {
  locklab::testkit::TempDir dir;
  MongosimNode node({.args = {"--replSet", "rs-fresh-noop"}, .dbpath = dir.file("db")});
  const Document member{{"_id", V(int32_t{0})}, {"host", V(node.host())}};
  auto init = command(
      node, Document{{"replSetInitiate", V(Document{{"_id", V("rs-fresh-noop")},
                                                    {"members", V(bson::Array{V(member)})}})}});
  ASSERT_TRUE(reply_is_ok(init)) << show(init);
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    auto h = command(node, Document{{"hello", V(int32_t{1})}});
    return h && h->get("isWritablePrimary") != nullptr && h->get("isWritablePrimary")->truthy();
  })) << node.log_text();
  const Document none{{"_id", V("none")}};
  const Document set_v{{"$set", V(Document{{"v", V(1)}})}};
  for (const Document& wc :
       {Document{{"w", V("majority")}}, Document{{"w", V(int32_t{1})}, {"j", V(true)}}}) {
    const std::vector<Document> no_ops = {
        Document{{"drop", V("missing")}, {"writeConcern", V(wc)}},
        Document{{"update", V("c")},
                 {"updates", V(bson::Array{V(Document{{"q", V(none)}, {"u", V(set_v)}})})},
                 {"writeConcern", V(wc)}},
        Document{{"delete", V("c")},
                 {"deletes", V(bson::Array{V(Document{{"q", V(none)}, {"limit", V(int32_t{1})}})})},
                 {"writeConcern", V(wc)}},
        Document{{"findAndModify", V("c")},
                 {"query", V(none)},
                 {"update", V(set_v)},
                 {"writeConcern", V(wc)}},
    };
    for (const Document& cmd : no_ops) {
      auto reply = command(node, cmd, "db");
      ASSERT_TRUE(write_ok(reply)) << bson::to_json(cmd) << " -> " << show(reply);
    }
  }
  // Nothing above wrote: the oplog is still empty, so each command met the case under test.
  auto oplog = command(node, Document{{"find", V("oplog.rs")}, {"limit", V(int32_t{1})}}, "local");
  ASSERT_TRUE(reply_is_ok(oplog)) << show(oplog);
  EXPECT_TRUE(oplog->get("cursor")->as_document().get("firstBatch")->as_array().empty())
      << show(oplog);
}

// E: X wins an election while the old primary P holds an entry nobody else has (fetches from
// every member are refused until then). With the default catch-up timeout (-1, no limit) X must
// fetch that entry from P, finish catch-up and become writable; it used to stay an unwritable
// primary forever because the fetcher only ran on secondaries.
TEST(ReplState, PrimaryInCatchUpFetchesFromItsTargetAndBecomesWritable) {
  SimSet set(durable_set(3));
  int p = set.primary();
  ASSERT_GE(p, 0);
  int x = (p + 1) % 3;
  int y = (p + 2) % 3;
  ASSERT_TRUE(write_ok(set.insert(p, Document{{"_id", V("base")}}, kW3))) << set.logs();
  // A fetch P already holds (it waits up to maxAwaitMs for a new entry) is past failCommand's
  // check and would deliver "ahead" to its sender, who would then refuse X its vote. So the
  // secondaries' fetchers are stopped first (stop_fetcher returns once the round in flight is
  // over), the refusal is set, and only then are they let go: every later fetch is refused.
  for (int i : {x, y}) stop_fetcher(set, i);
  for (int i : {p, x, y}) fail_point(set, i, "failCommand", V("alwaysOn"), refuse_fetches());
  for (int i : {x, y}) fail_point(set, i, "stopReplProducer", V("off"));
  auto ahead = set.insert(p, Document{{"_id", V("ahead")}}, kW1);
  ASSERT_TRUE(write_ok(ahead)) << show(ahead);
  bson::Timestamp ahead_ts = ahead->get("opTime")->as_document().get("ts")->as_timestamp();
  // X must know, from P's heartbeats, that P is ahead: that is what makes it catch up.
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    auto status = set.command(x, Document{{"replSetGetStatus", V(1)}});
    if (!reply_is_ok(status)) return false;
    for (const auto& m : status->get("members")->as_array()) {
      const Document& d = m.as_document();
      if (d.get("name")->as_string() != set.member(p).host()) continue;
      bson::Timestamp ts = d.get("optime")->as_document().get("ts")->as_timestamp();
      return !(ts < ahead_ts);
    }
    return false;
  })) << set.logs();
  ASSERT_TRUE(step_up(set, x)) << set.logs();
  fail_point(set, p, "failCommand", V("off"));
  ASSERT_TRUE(
      poll_until(after(std::chrono::seconds(15)), [&] { return is_writable_primary(set, x); }))
      << "the new primary never left catch-up\n"
      << set.logs();
  EXPECT_TRUE(has_id(set, x, "\"ahead\""));
  for (int i : {x, y}) fail_point(set, i, "failCommand", V("off"));
  EXPECT_TRUE(write_ok(set.insert(x, Document{{"_id", V("after")}}, kMajority))) << set.logs();
}

// replSetStepDown right after a w:1 write that no secondary can have (their fetchers are
// stopped): the secondaries are not caught up with the oplog's newest entry, so the step-down
// must time out (262) and the member stays primary. Comparing against an applied optime that
// lags the oplog by a tick let it hand over and lose the write.
TEST(ReplState, StepDownCountsTheNewestOplogEntryNotALaggingAppliedOptime) {
  SimSet set(durable_set(3));
  int p = set.primary();
  ASSERT_GE(p, 0);
  ASSERT_TRUE(write_ok(set.insert(p, Document{{"_id", V("base")}}, kW3))) << set.logs();
  for (int i = 0; i < 3; ++i) {
    if (i != p) stop_fetcher(set, i);
  }
  ASSERT_TRUE(write_ok(set.insert(p, Document{{"_id", V("last")}}, kW1)));
  auto step_down = set.command(p, Document{{"replSetStepDown", V(int32_t{30})},
                                           {"secondaryCatchUpPeriodSecs", V(int32_t{1})}});
  ASSERT_TRUE(step_down.has_value()) << set.logs();
  EXPECT_FALSE(reply_is_ok(step_down)) << "stepped down without a caught-up successor";
  for (int i = 0; i < 3; ++i) {
    if (i != p) fail_point(set, i, "stopReplProducer", V("off"));
  }
  std::optional<Document> last;
  int next = set.wait_for_majority_write(&last);
  ASSERT_GE(next, 0) << "no majority write; last reply " << show(last) << "\n" << set.logs();
  EXPECT_TRUE(has_id(set, next, "\"last\"")) << set.logs();
}

// D: after a rollback that refetched documents, the member's data matches no single point of
// its oplog until it has applied through the source's newest entry at refetch time (minValid).
// Its fetcher is stopped right after the rollback (stopReplProducer, skipping the one fetch that
// finds the divergence), so it stays below minValid: it must refuse majority reads (134) and
// have minValid on disk; once fetching resumes it serves them again.
TEST(ReplState, RolledBackMemberRefusesMajorityReadsUntilItReachesMinValid) {
  SimSet set(durable_set(3));
  int old_primary = set.primary();
  ASSERT_GE(old_primary, 0);
  ASSERT_TRUE(write_ok(set.insert(old_primary, Document{{"_id", V("base")}}, kW3)));
  // No fetch in flight can carry the w:1 write to a secondary: their fetchers are stopped first.
  for (int i = 0; i < 3; ++i) {
    if (i != old_primary) stop_fetcher(set, i);
  }
  ASSERT_TRUE(write_ok(set.insert(old_primary, Document{{"_id", V("lost")}}, kW1)));
  fail_point(set, old_primary, "stopReplProducer", V(Document{{"skip", V(1)}}));
  set.pause(old_primary);
  for (int i = 0; i < 3; ++i) {
    if (i != old_primary) fail_point(set, i, "stopReplProducer", V("off"));
  }
  int next = -1;
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    next = set.primary();
    return next >= 0 && next != old_primary;
  })) << set.logs();
  ASSERT_FALSE(has_id(set, next, "\"lost\"")) << "the w:1 write reached the new primary";
  ASSERT_TRUE(write_ok(set.insert(next, Document{{"_id", V("new")}}, kMajority))) << set.logs();
  set.resume(old_primary);
  ASSERT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    return set.member(old_primary).log_text().find("Rollback summary") != std::string::npos;
  })) << set.logs();

  const Document majority_find{{"find", V("c")},
                               {"readConcern", V(Document{{"level", V("majority")}})},
                               {"$readPreference", V(Document{{"mode", V("secondaryPreferred")}})}};
  auto refused = set.command(old_primary, majority_find, "db");
  ASSERT_TRUE(refused.has_value()) << set.logs();
  EXPECT_FALSE(reply_is_ok(refused)) << "majority read below minValid: " << show(refused);
  const bson::Value* code = refused->get("code");
  EXPECT_TRUE(code != nullptr && code->number_as_double() == 134) << show(refused);
  EXPECT_TRUE(std::filesystem::exists(set.member(old_primary).dbpath() + "/minvalid.bson"));

  fail_point(set, old_primary, "stopReplProducer", V("off"));
  EXPECT_TRUE(poll_until(after(kDurableConvergeTimeout), [&] {
    return reply_is_ok(set.command(old_primary, majority_find, "db"));
  })) << set.logs();
}

}  // namespace
}  // namespace mongosim::testing
