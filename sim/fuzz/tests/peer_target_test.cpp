// The peer fuzz target's fixture (sim/fuzz/peer_target.h) leads the member where its seeds claim:
// following a primary it applies the fetched batch, granted votes make it primary, and a fetch
// that says its history diverged starts the rollback conversation. A script of garbage replies
// ends the run without a crash.
//
// What this leaves out: the member's timing (heartbeats and elections run on their own timers,
// kPeerBudgetMs bounds a run; no assertion depends on how long anything took, only on which
// requests the peer saw and what the member applied), and whether mutations find anything
// (fuzz.peer.mutations runs them).
#include "fuzz/peer_target.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>

#include "bson/codec.h"
#include "fuzz/peer_seeds.h"

namespace mongosim::fuzz {
namespace {

const PeerSeed& seed(const std::string& name) {
  static const std::vector<PeerSeed> seeds = peer_seeds();
  for (const auto& s : seeds) {
    if (s.name == name) return s;
  }
  throw std::runtime_error("no peer seed " + name);
}

bool saw(const PeerRun& run, const std::string& command) {
  return std::find(run.received.begin(), run.received.end(), command) != run.received.end();
}

// Runs a seed until `until` holds, with a budget far beyond what any of these needs: the run
// ends at the condition, so the budget only turns a member that never gets there into a failure.
PeerRun run_seed(const std::string& name, std::function<bool(const PeerRun&)> until) {
  const std::string& script = seed(name).script;
  PeerRunOptions options;
  options.budget_ms = 20'000;
  options.until = std::move(until);
  return serve_peer_input(reinterpret_cast<const uint8_t*>(script.data()), script.size(), options);
}

std::string show(const PeerRun& run) {
  std::string out = "state " + std::to_string(static_cast<int>(run.final_state)) + ", applied " +
                    std::to_string(run.last_applied.ts.seconds) + ":" +
                    std::to_string(run.last_applied.ts.increment) + " term " +
                    std::to_string(run.last_applied.term) + ", received:";
  for (size_t i = 0; i < run.received.size() && i < 40; ++i) out += " " + run.received[i];
  return out;
}

TEST(PeerTarget, FollowingAPrimaryTheMemberAppliesTheFetchedBatch) {
  const PeerRun run = run_seed("follow-primary", [](const PeerRun& r) {
    return r.last_applied.ts.seconds == 4'000'000'000u && r.last_applied.ts.increment == 7;
  });
  EXPECT_TRUE(saw(run, "replSetFetchOplog")) << show(run);
  EXPECT_EQ(run.last_applied.ts.seconds, 4'000'000'000u) << show(run);
  EXPECT_EQ(run.last_applied.ts.increment, 7u) << show(run);
}

TEST(PeerTarget, GrantedVotesMakeTheMemberPrimary) {
  const PeerRun run = run_seed("win-election", [](const PeerRun& r) {
    return r.final_state == repl::MemberState::kPrimary;
  });
  EXPECT_TRUE(saw(run, "replSetRequestVotes")) << show(run);
  EXPECT_EQ(run.final_state, repl::MemberState::kPrimary) << show(run);
}

TEST(PeerTarget, ADivergedFetchStartsTheRollback) {
  const PeerRun run =
      run_seed("roll-back", [](const PeerRun& r) { return saw(r, "replSetRollbackFetch"); });
  EXPECT_TRUE(saw(run, "replSetRollbackOptimes")) << show(run);
  EXPECT_TRUE(saw(run, "replSetRollbackFetch")) << show(run);
}

// A refetch reply whose documents are not documents, lack an _id, were not asked for, or carry a
// version under another _id, or whose namespaces are not documents, is a malformed reply: the
// rollback gives up as after silence and the member lives on (such entries were read unchecked,
// an assertion or undefined behaviour; a version under another _id was inserted beside the one
// asked for, and the collection asserted).
TEST(PeerTarget, AMalformedRefetchReplyIsNoReply) {
  using bson::Array;
  using bson::Document;
  using bson::V;
  auto reply = [](Array documents, Array namespaces) {
    return Document{{"ok", V(1.0)},
                    {"documents", V(std::move(documents))},
                    {"namespaces", V(std::move(namespaces))}};
  };
  const Array fine_namespaces{V(Document{{"ns", V("fuzz.c")}, {"exists", V(true)}})};
  const Document garbage[] = {
      reply(Array{V(int32_t{1}), V(Document{{"ns", V("fuzz.c")}})}, Array{V("fuzz.c"), V(2)}),
      reply(Array{V(Document{{"ns", V("fuzz.c")},
                             {"_id", V(int32_t{3})},
                             {"doc", V(Document{{"_id", V(int32_t{1})}, {"x", V(1)}})}})},
            fine_namespaces),
      reply(Array{V(Document{{"ns", V("fuzz.c")},
                             {"_id", V(int32_t{1})},
                             {"doc", V(Document{{"_id", V(int32_t{1})}, {"x", V(1)}})}})},
            fine_namespaces),
      // A namespace the member did not ask about (it would have been dropped).
      reply(Array{}, Array{V(Document{{"ns", V("fuzz.other")}, {"exists", V(false)}})}),
  };
  for (const Document& refetch : garbage) {
    SCOPED_TRACE(bson::to_json(refetch));
    const std::string script = roll_back_script(refetch);
    PeerRunOptions options;
    options.budget_ms = 20'000;
    int fetches = 0;
    // The member's next request after its first refetch shows it survived the reply.
    options.until = [&](const PeerRun& r) {
      fetches = static_cast<int>(
          std::count(r.received.begin(), r.received.end(), std::string("replSetRollbackFetch")));
      return fetches >= 1 && r.received.back() != "replSetRollbackFetch";
    };
    const PeerRun run =
        serve_peer_input(reinterpret_cast<const uint8_t*>(script.data()), script.size(), options);
    EXPECT_GE(fetches, 1) << show(run);
  }
}

// A source whose optimes hold nothing in common (an empty reply) puts the common point before the
// commit point, which no member that follows the protocol can: the member stops in RECOVERING
// (needing a resync) with its process alive. It aborted.
TEST(PeerTarget, ASourceWithoutTheCommitPointLeavesTheMemberRecovering) {
  const std::string script = roll_back_script(bson::Document{{"ok", bson::V(1.0)}}, bson::Array{});
  PeerRunOptions options;
  options.budget_ms = 20'000;
  options.until = [](const PeerRun& r) { return r.final_state == repl::MemberState::kRecovering; };
  const PeerRun run =
      serve_peer_input(reinterpret_cast<const uint8_t*>(script.data()), script.size(), options);
  EXPECT_EQ(run.final_state, repl::MemberState::kRecovering) << show(run);
  EXPECT_TRUE(saw(run, "replSetRollbackOptimes")) << show(run);
}

}  // namespace
}  // namespace mongosim::fuzz
