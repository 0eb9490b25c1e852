#include "data/cursors.h"

#include <cassert>

#include "bson/codec.h"
#include "command/command.h"

namespace mongosim::data {

namespace {

bson::Document cursor_reply(int64_t id, const std::string& ns, const char* batch_name,
                            bson::Array batch) {
  bson::Document cursor;
  cursor.append(batch_name, bson::V(std::move(batch)));
  cursor.append("id", bson::V(id));
  cursor.append("ns", bson::V(ns));
  return bson::Document{{"cursor", bson::V(std::move(cursor))}};
}

}  // namespace

bson::Array CursorManager::take_batch(std::deque<bson::Document>& docs, int64_t batch_size) {
  bson::Array batch;
  size_t bytes = 0;
  while (!docs.empty() && (batch_size <= 0 || static_cast<int64_t>(batch.size()) < batch_size)) {
    size_t doc_bytes = bson::encode_document(docs.front()).size();
    if (!batch.empty() && bytes + doc_bytes > kMaxBatchBytes) break;
    bytes += doc_bytes;
    batch.push_back(bson::V(std::move(docs.front())));
    docs.pop_front();
  }
  return batch;
}

bson::Document CursorManager::open(std::string ns, std::deque<bson::Document> docs,
                                   int64_t batch_size, bool single_batch, int64_t now_ms) {
  bson::Array batch = take_batch(docs, batch_size);
  int64_t id = 0;
  if (!docs.empty() && !single_batch) {
    std::lock_guard lock(mu_);
    if (cursors_.size() >= kMaxCursors) evict_least_recently_used();
    id = new_id();
    cursors_.emplace(id, Cursor{ns, std::move(docs), now_ms});
  }
  return cursor_reply(id, ns, "firstBatch", std::move(batch));
}

bson::Document CursorManager::get_more(int64_t id, const std::string& ns, int64_t batch_size,
                                       int64_t now_ms) {
  std::lock_guard lock(mu_);
  auto it = cursors_.find(id);
  if (it == cursors_.end() || it->second.ns != ns) {
    throw CommandError(code::kCursorNotFound, "cursor id " + std::to_string(id) + " not found");
  }
  bson::Array batch = take_batch(it->second.docs, batch_size);
  it->second.last_used_ms = now_ms;
  int64_t reply_id = id;
  if (it->second.docs.empty()) {
    cursors_.erase(it);
    reply_id = 0;
  }
  return cursor_reply(reply_id, ns, "nextBatch", std::move(batch));
}

bool CursorManager::kill(int64_t id, const std::string& ns) {
  std::lock_guard lock(mu_);
  auto it = cursors_.find(id);
  if (it == cursors_.end() || it->second.ns != ns) return false;
  cursors_.erase(it);
  return true;
}

void CursorManager::kill_namespace_prefix(const std::string& prefix) {
  std::lock_guard lock(mu_);
  std::erase_if(cursors_, [&](const auto& kv) { return kv.second.ns.starts_with(prefix); });
}

void CursorManager::expire_idle(int64_t now_ms) {
  std::lock_guard lock(mu_);
  std::erase_if(cursors_,
                [&](const auto& kv) { return now_ms - kv.second.last_used_ms >= kIdleTimeoutMs; });
}

size_t CursorManager::size() const {
  std::lock_guard lock(mu_);
  return cursors_.size();
}

int64_t CursorManager::new_id() {
  for (;;) {
    auto id = static_cast<int64_t>(rng_() >> 1);
    if (id != 0 && !cursors_.contains(id)) return id;
  }
}

void CursorManager::evict_least_recently_used() {
  assert(!cursors_.empty());
  auto oldest = cursors_.begin();
  for (auto it = cursors_.begin(); it != cursors_.end(); ++it) {
    if (it->second.last_used_ms < oldest->second.last_used_ms) oldest = it;
  }
  cursors_.erase(oldest);
}

}  // namespace mongosim::data
