#include "data/oplog.h"

#include <algorithm>
#include <cassert>

namespace mongosim::data {

std::string_view update_kind_name(UpdateKind kind) {
  switch (kind) {
    case UpdateKind::kReplacement:
      return "replacement";
    case UpdateKind::kOperators:
      return "operators";
    case UpdateKind::kPipeline:
      return "pipeline";
  }
  return "replacement";
}

std::optional<UpdateKind> parse_update_kind(std::string_view name) {
  for (UpdateKind k : {UpdateKind::kReplacement, UpdateKind::kOperators, UpdateKind::kPipeline}) {
    if (update_kind_name(k) == name) return k;
  }
  return std::nullopt;
}

bson::Document OplogEntry::to_document() const {
  bson::Document d{{"ts", bson::Value::timestamp(optime.ts)},
                   {"t", bson::V(optime.term)},
                   {"v", bson::V(int64_t{2})},
                   {"op", bson::V(std::string(1, op))},
                   {"ns", bson::V(ns)}};
  if (!ui.is_null()) d.append("ui", ui);
  d.append("o", bson::V(o));
  if (o2) d.append("o2", bson::V(*o2));
  if (op == 'u') d.append("updateKind", bson::V(std::string(update_kind_name(update_kind))));
  d.append("wall", bson::Value::date(wall_ms));
  if (statement) {
    d.append("lsid", statement->lsid);
    d.append("txnNumber", bson::V(statement->txn_number));
    d.append("stmtId", bson::V(statement->stmt_id));
  }
  return d;
}

Oplog::Oplog(size_t max_entries) : max_entries_(max_entries) {
  assert(max_entries > 0 && max_entries <= kMaxEntries);
}

OpTime Oplog::next_optime(int64_t now_ms, int64_t term) const {
  auto now_secs = static_cast<uint32_t>(std::max<int64_t>(now_ms / 1000, 0));
  OpTime next;
  next.term = std::max(term, last_.term);
  if (now_secs > last_.ts.seconds) {
    next.ts = bson::Timestamp{now_secs, 1};
  } else {
    next.ts = bson::Timestamp{last_.ts.seconds, last_.ts.increment + 1};
  }
  return next;
}

void Oplog::append(OplogEntry entry) {
  assert(last_.is_null() || (last_ < entry.optime && last_.ts < entry.optime.ts));
  set_last(entry.optime);
  last_wall_ms_ = entry.wall_ms;
  publish();
  entries_.push_back(std::move(entry));
  while (entries_.size() > max_entries_) {
    dropped_through_ = entries_.front().optime.ts;
    entries_.pop_front();
  }
}

size_t Oplog::truncate_after(OpTime common_point) {
  size_t removed = 0;
  while (!entries_.empty() && common_point < entries_.back().optime) {
    entries_.pop_back();
    ++removed;
  }
  if (entries_.empty()) {
    // Everything up to the common point was capped away; the log still ends there.
    set_last(common_point);
  } else {
    set_last(entries_.back().optime);
    last_wall_ms_ = entries_.back().wall_ms;
  }
  publish();
  return removed;
}

}  // namespace mongosim::data
