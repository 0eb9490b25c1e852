// The worker protocol's --write-concern flag as a CLI11 check, for the two programs that speak
// the protocol in C++ (locklab-worker and the seed clients' kit): "majority" or "1".."7", the
// text parse_write_concern_flag (client/workload.h) accepts; anything else is refused naming it.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "client/workload.h"

namespace locklab {

inline CLI::Validator write_concern_validator() {
  return CLI::Validator(
      [](std::string& text) {
        return parse_write_concern_flag(text)
                   ? std::string()
                   : "expected majority or 1.." + std::to_string(kWriteConcernMembersMax) +
                         ", got \"" + text + "\"";
      },
      "majority|1..7");
}

}  // namespace locklab
