// The fields a worker's event must carry beyond what any history event has (checker/history.h),
// judged per client: the one rule both the harness's reader of worker output
// (run/worker_output.h, at run time, per line) and the checkers' validation of a whole history
// (`locklab check`) apply, so a run cannot accept what a later check refuses.
//
// Rules:
//   - every lock operation (f acquire, extend, release, lost, lost-ignored) names its lock;
//   - an `acquire ok` of a client whose grants carry fencing tokens (its row in the client
//     table, client/clients.h) carries `token` and no value.no_token = true;
//   - an `acquire ok` of a client whose grants carry none has no `token` and says so with
//     value.no_token = true;
//   - when the history does not say what the client's grants carry (no client in its start
//     event: version 1, or a hand-made history), only the first rule applies.
//
// Thread rules: pure functions of their arguments; the client table is immutable.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "checker/history.h"

namespace locklab {

// What a client's grants carry.
struct GrantTokens {
  std::string client;          // for messages; "" when unknown
  std::optional<bool> tokens;  // true: fencing tokens; false: none; nullopt: not known

  // From the client table: the row named `client` decides; a client not in the table falls back
  // to `tokens_said` (the start event's value.tokens, when it has one).
  static GrantTokens of(std::string_view client, std::optional<bool> tokens_said);
};

// The lock operations: each names its lock.
bool is_lock_operation(std::string_view f);

// "" when the worker event follows the rules above, else "<field>: <what is wrong>" (the field
// as the history spells it: "lock", "token", "value.no_token").
std::string worker_event_error(const Event& event, const GrantTokens& grants);

}  // namespace locklab
