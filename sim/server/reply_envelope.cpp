#include "server/reply_envelope.h"

#include "base/error_codes.h"

namespace mongosim::server {

namespace {

constexpr size_t kSignatureHashBytes = 20;

}  // namespace

std::vector<std::string> compute_error_labels(const LabelInputs& in) {
  if (in.override_labels) return *in.override_labels;
  std::vector<std::string> labels;
  bool retriable = (in.code && is_retriable_error(*in.code)) ||
                   (in.wce_code && is_retriable_error(*in.wce_code));
  if (in.retryable_write && retriable) {
    labels.emplace_back(label::kRetryableWriteError);
    if (in.wrote_nothing && in.code) labels.emplace_back(label::kNoWritesPerformed);
    return labels;
  }
  if (in.change_stream && in.code && !in.wce_code && is_resumable_change_stream_error(*in.code)) {
    labels.emplace_back(label::kResumableChangeStreamError);
  } else if (in.code && is_non_resumable_change_stream_error(*in.code)) {
    labels.emplace_back(label::kNonResumableChangeStreamError);
  }
  return labels;
}

bson::Document error_reply(int32_t code, const std::string& errmsg, const bson::Document& extra) {
  bson::Document reply{{"ok", bson::V(0.0)},
                       {"errmsg", bson::V(errmsg)},
                       {"code", bson::V(code)},
                       {"codeName", bson::V(std::string(code_name(code)))}};
  for (const auto& [key, value] : extra) {
    if (!reply.has(key)) reply.append(key, value);
  }
  return reply;
}

void append_ok(bson::Document& reply) {
  if (!reply.has("ok")) reply.append("ok", bson::V(1.0));
}

void append_labels(bson::Document& reply, const std::vector<std::string>& labels) {
  if (labels.empty()) return;
  bson::Array arr;
  for (const auto& l : labels) arr.push_back(bson::V(l));
  reply.set("errorLabels", bson::V(std::move(arr)));
}

void append_cluster_time(bson::Document& reply, bson::Timestamp cluster_time,
                         bson::Timestamp operation_time) {
  bson::Document signature{{"hash", bson::Value::binary(0, std::string(kSignatureHashBytes, '\0'))},
                           {"keyId", bson::V(int64_t{0})}};
  reply.set("$clusterTime",
            bson::V(bson::Document{{"clusterTime", bson::Value::timestamp(cluster_time)},
                                   {"signature", bson::V(std::move(signature))}}));
  reply.set("operationTime", bson::Value::timestamp(operation_time));
}

}  // namespace mongosim::server
