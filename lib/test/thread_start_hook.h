// Makes the hold scheduler's next thread creations fail (lib/src/hold_scheduler.h: the library
// holds only a weak reference to the counter, which this test file defines).
//
// Thread rules: any thread; the count is atomic.
#pragma once

namespace mongolock::test {

// The next `count` thread creations of every HoldScheduler fail as if the system had no threads
// left (std::system_error); 0 turns it off.
void fail_next_thread_starts(int count);

}  // namespace mongolock::test
