// HandOverClock (lib/src/hand_over_clock.h) on its own: the anchor of a hand-over's lease clock
// and which hand-overs a waiter may take, as pure state over the replies and stream deliveries
// a waiter sees. Model: each call is one thing the waiter learned, in the order it learned them;
// the server, the stream and time are left out (notify_test runs them for real, where a stale
// delivery after a paused waiter only happens by chance).
#include "hand_over_clock.h"

#include <gtest/gtest.h>

namespace mongolock::test {
namespace {

using detail::HandOverClock;
using std::chrono::milliseconds;

const HandOverClock::SteadyTime kT0{};
const HandOverClock::SteadyTime kT1 = kT0 + milliseconds(10);
const HandOverClock::SteadyTime kT2 = kT0 + milliseconds(20);

TEST(HandOverClock, NothingToTakeBeforeAHandOverIsSeen) {
  HandOverClock clock;
  clock.sent(kT0);
  clock.reply_not_held(kT0, 5);
  EXPECT_EQ(clock.take(), std::nullopt);
}

TEST(HandOverClock, AStreamedHandOverIsAnchoredAtTheLatestNotHeldReply) {
  HandOverClock clock;
  clock.sent(kT0);
  clock.reply_not_held(kT0, 5);
  clock.sent(kT1);
  clock.reply_not_held(kT1, 6);
  clock.streamed(7);
  const auto taken = clock.take();
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->token, 7);
  EXPECT_EQ(taken->anchor, kT1);
  EXPECT_EQ(clock.take(), std::nullopt) << "a hand-over is taken once";
}

TEST(HandOverClock, BeforeAnyReplyTheFirstSentAttemptIsTheAnchor) {
  HandOverClock clock;
  clock.sent(kT0);
  clock.sent(kT1);  // its reply was lost (resolved)
  clock.streamed(3);
  const auto taken = clock.take();
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->anchor, kT0);
}

TEST(HandOverClock, AReplyThatShowsTheHandOverLeavesTheAnchorWhereItWas) {
  HandOverClock clock;
  clock.sent(kT0);
  clock.reply_not_held(kT0, 5);
  clock.sent(kT1);
  clock.reply_held(6);  // ran after the hand-over: its send is no anchor
  const auto taken = clock.take();
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->token, 6);
  EXPECT_EQ(taken->anchor, kT0);
}

// The stream delivered a hand-over, the waiter was slow to take it, the hold lapsed and another
// holder came: the reply that shows that holder proves the hand-over ran before it, so it is over.
TEST(HandOverClock, AHandOverFromBeforeANotHeldReplyIsDropped) {
  HandOverClock clock;
  clock.sent(kT0);
  clock.reply_not_held(kT0, 5);
  clock.streamed(6);
  clock.sent(kT2);
  clock.reply_not_held(kT2, 7);
  EXPECT_EQ(clock.take(), std::nullopt) << "a lapsed hand-over taken with a later anchor";
  clock.streamed(7);  // the token that reply showed is no hand-over after it either
  EXPECT_EQ(clock.take(), std::nullopt);
}

TEST(HandOverClock, OfTwoHandOversSeenTheLaterIsTaken) {
  HandOverClock clock;
  clock.sent(kT0);
  clock.reply_not_held(kT0, 5);
  clock.streamed(8);
  clock.reply_held(6);
  const auto taken = clock.take();
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->token, 8);
}

// A hand-over taken once is not taken again when a later reply or delivery shows it (its claim
// ended: a lapsed hand-over still names the waiter holder until someone takes the lock); a later
// hand-over to the same waiter, with a higher token, is.
TEST(HandOverClock, AHandOverAlreadyTakenIsNotTakenAgain) {
  HandOverClock clock;
  clock.sent(kT0);
  clock.reply_not_held(kT0, 5);
  clock.streamed(7);
  ASSERT_TRUE(clock.take().has_value());
  clock.sent(kT1);
  clock.reply_held(7);
  EXPECT_EQ(clock.take(), std::nullopt) << "the taken hand-over was taken again";
  clock.streamed(7);
  EXPECT_EQ(clock.take(), std::nullopt) << "the taken hand-over was taken again";
  clock.sent(kT2);
  clock.reply_not_held(kT2, 7);
  clock.streamed(9);
  const auto taken = clock.take();
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->token, 9);
  EXPECT_EQ(taken->anchor, kT2);
}

}  // namespace
}  // namespace mongolock::test
