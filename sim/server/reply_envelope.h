// The reply envelope every command gets (docs/mongodb-behaviour.md: Reply envelope; Error labels):
// ok, errmsg/code/codeName for errors, error labels, and $clusterTime/operationTime on replica-set
// members.
//
// Pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/optime.h"
#include "bson/value.h"

namespace mongosim::server {

namespace label {
inline constexpr const char* kRetryableWriteError = "RetryableWriteError";
inline constexpr const char* kNoWritesPerformed = "NoWritesPerformed";
inline constexpr const char* kResumableChangeStreamError = "ResumableChangeStreamError";
inline constexpr const char* kNonResumableChangeStreamError = "NonResumableChangeStreamError";
}  // namespace label

struct LabelInputs {
  bool retryable_write = false;     // txnNumber present, no autocommit, retryable command
  std::optional<int32_t> code;      // top-level error code, if the command failed
  std::optional<int32_t> wce_code;  // writeConcernError code, if any
  std::optional<std::vector<std::string>> override_labels;  // failCommand errorLabels
  bool wrote_nothing = false;  // the last optime did not move during the command
  bool change_stream = false;  // an aggregate with $changeStream or a change stream's getMore
};

// RetryableWriteError when the code or wce code is retriable on a retryable write, plus
// NoWritesPerformed when nothing was written; otherwise ResumableChangeStreamError for a change
// stream's command failing with a resumable code (without a write-concern error), and
// NonResumableChangeStreamError for 280/286. A fail point's errorLabels replace all of that
// (docs/mongodb-behaviour.md, Error labels; Change streams).
std::vector<std::string> compute_error_labels(const LabelInputs& in);

// {ok: 0.0, errmsg, code, codeName, <extra>}.
bson::Document error_reply(int32_t code, const std::string& errmsg,
                           const bson::Document& extra = {});

// Appends ok: 1.0 after the handler's fields (unless the handler already set ok).
void append_ok(bson::Document& reply);

void append_labels(bson::Document& reply, const std::vector<std::string>& labels);

// $clusterTime {clusterTime, signature {hash: 20 zero bytes, keyId: 0}} and operationTime,
// exactly what an auth-less mongod sends (docs/mongodb-behaviour.md, Reply envelope).
void append_cluster_time(bson::Document& reply, bson::Timestamp cluster_time,
                         bson::Timestamp operation_time);

}  // namespace mongosim::server
