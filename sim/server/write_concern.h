// Write concern: parsing the writeConcern argument (docs/mongodb-behaviour.md, Write concern) and
// the interface that waits for it after a write (WriteConcernWaiter). The dispatcher calls the
// waiter with the optime the handler reported in CommandContext::last_write_optime; a replication
// layer replaces the single-node waiter with one that blocks on its commit point.
//
// Thread rules: parse_write_concern is pure; waiters are called from many connection threads.
#pragma once

#include <optional>

#include "base/optime.h"
#include "bson/value.h"
#include "command/command.h"

namespace mongosim::server {

// Reads body.writeConcern. `replication_enabled` false means a standalone, where w > 1 and tag
// modes are refused before the command runs. Throws CommandError (14, 9, 2) naming the field.
WriteConcern parse_write_concern(const bson::Document& body, bool replication_enabled);

// The {w, wtimeout, provenance} document errInfo.writeConcern shows.
bson::Document write_concern_document(const WriteConcern& wc);

// Builds a writeConcernError {code, codeName, errmsg, errInfo: {writeConcern}}
// (docs/mongodb-behaviour.md, Write concern).
bson::Document write_concern_error(int32_t code, const std::string& errmsg, const WriteConcern& wc);

class WriteConcernWaiter {
 public:
  virtual ~WriteConcernWaiter() = default;
  // Blocks until `optime` satisfies `wc` (or the wait gives up); returns the writeConcernError
  // to attach to the reply, or nullopt when satisfied. The write itself is never undone.
  // `optime` is empty when the command wrote nothing.
  virtual std::optional<bson::Document> wait(const WriteConcern& wc,
                                             const std::optional<OpTime>& optime) = 0;
};

// One data-bearing member: a write is satisfied as soon as it is applied. Asking for more
// members, or for a tag the config does not define, cannot be satisfied (100 / 79).
class SingleNodeWriteConcernWaiter final : public WriteConcernWaiter {
 public:
  std::optional<bson::Document> wait(const WriteConcern& wc,
                                     const std::optional<OpTime>& optime) override;
};

}  // namespace mongosim::server
