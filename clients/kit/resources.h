// The resources the workloads guard, as the seed-lock clients write them: the same documents and
// the same server-side checks as locklab-worker's, so the harness's final reads and the
// checkers judge every client alike.
//   fenced   collection "fenced", document "R<lock>": updateOne with upsert, filter
//            {_id, token: {$lte: T}} (just {_id} with fencing off), update $set token, $inc
//            count, $push {id, token} onto `writes` (last kFencedWritesKept kept). A duplicate
//            key means the token check refused the write (the document holds a higher token).
//   counter  collection "counter", document "counter": read at majority, then $set count.
//
// Thread rules: one per workload thread (it owns a Connection).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "connection.h"

namespace locklab::clients {

enum class WriteOutcome { kAccepted, kRejected, kUnknown };

class Resources {
 public:
  Resources(const std::string& uri, const std::string& database, int write_concern_w, bool fencing);

  WriteOutcome fenced_write(const std::string& resource, int64_t token, const std::string& id,
                            std::string* error);
  // The counter's value (0 when the document does not exist yet); nullopt on error.
  std::optional<int64_t> read_counter(std::string* error);
  WriteOutcome write_counter(int64_t count, std::string* error);

 private:
  Connection connection_;
  bool fencing_;

  WriteOutcome upsert_one(const char* collection, const Json& filter, const Json& update,
                          std::string* error);
};

}  // namespace locklab::clients
