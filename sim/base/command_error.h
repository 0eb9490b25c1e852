// How a command fails: CommandError (becomes {ok:0, code, codeName, errmsg, ...extra} in the
// reply) and CloseConnection (the connection is dropped without a reply). Below the command
// contract (command/command.h) so the query layer can fail a command without seeing it. Brings
// the codes (base/error_codes.h) with it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "base/error_codes.h"
#include "bson/value.h"

namespace mongosim {

class CommandError : public std::runtime_error {
 public:
  CommandError(int32_t code, const std::string& message, bson::Document extra = {})
      : std::runtime_error(message), code_(code), extra_(std::move(extra)) {}
  int32_t code() const { return code_; }
  // Extra top-level reply fields (DuplicateKey's keyPattern/keyValue, errInfo...).
  const bson::Document& extra() const { return extra_; }

 private:
  int32_t code_;
  bson::Document extra_;
};

// Thrown to drop the client's connection without replying.
struct CloseConnection {};

}  // namespace mongosim
