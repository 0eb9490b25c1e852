// The test-only clock offset of one member (clock-skew faults): the mongosimSetClockOffset
// admin command and the --clockOffsetMillis flag both move this member's ServerClock, which
// $$NOW, $currentDate, the TTL monitor, lastWriteDate and the replication timers read.
//
// What a jump does to the replication timers (they read the same clock; mongod's use a steady
// clock, so this is where mongosim differs):
// - forward: at the next tick every other member's last heartbeat looks older than
//   electionTimeoutMillis, so this member sees no majority, forgets the primary and re-arms its
//   election timer instead of standing (CannotSeeMajority); its heartbeats are all due at once and
//   the first replies bring the others back up. The set keeps its primary. Rarely, a heartbeat
//   reply from another secondary lands between the jump and that tick: then this member sees a
//   majority with an expired timer and stands, and may win one unnecessary election (term + 1).
//   Either way the set ends with one primary and keeps replicating.
// - backward: timers armed before the jump lie |offset| in the future, so this member sends no
//   heartbeats and calls no election until its clock catches up with them; the others see it as
//   down meanwhile.
//
// Pure functions; the command handler serialises concurrent setters.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "bson/value.h"

namespace mongosim::server {

// ±10 years of 365 days: far beyond any skew a test injects, small enough that now + offset
// stays a valid date for every consumer.
inline constexpr int64_t kMaxClockOffsetMs = int64_t{10} * 365 * 24 * 3600 * 1000;

// Reads {mongosimSetClockOffset: <integer ms>}: int32, int64 or a double holding an integer,
// within ±kMaxClockOffsetMs. Throws CommandError 2 (BadValue) naming the field otherwise.
int64_t parse_clock_offset_value(const bson::Value& value);

// Parses the --clockOffsetMillis flag's text; returns an error text or empty.
std::string parse_clock_offset_flag(std::string_view text, int64_t& offset_ms);

// Sets the offset and returns {previousOffsetMillis, offsetMillis}.
bson::Document set_clock_offset(ServerClock& clock, int64_t offset_ms);

}  // namespace mongosim::server
