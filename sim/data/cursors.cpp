#include "data/cursors.h"

#include <algorithm>
#include <cassert>

#include "bson/codec.h"
#include "command/command.h"
#include "data/change_stream_cursor.h"

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

void throw_past_encoding_buffer() {
  throw CommandError(code::kBufBuilderTooLarge, "BufBuilder attempted to grow() to more than " +
                                                    std::to_string(kMaxEncodingBufferBytes) +
                                                    " bytes, past the 64MB limit.");
}

size_t result_document_bytes(const bson::Document& doc) {
  const std::optional<size_t> size = bson::encoded_size_within(doc, kMaxEncodingBufferBytes);
  if (!size) throw_past_encoding_buffer();
  if (*size > kMaxResultDocumentBytes) {
    throw CommandError(code::kBSONObjectTooLarge,
                       "BSONObj size: " + std::to_string(*size) +
                           " is invalid. Size must be between 0 and 16793600(16MB)");
  }
  return *size;
}

bson::Array CursorManager::take_batch(std::deque<bson::Document>& docs, int64_t batch_size) {
  bson::Array batch;
  size_t bytes = 0;
  while (!docs.empty() && (batch_size <= 0 || static_cast<int64_t>(batch.size()) < batch_size)) {
    const size_t doc_bytes = result_document_bytes(docs.front());
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
    if (cursors_.size() >= kMaxCursors) evict_least_recently_used(false);
    id = new_id();
    cursors_.emplace(id, Cursor{ns, std::move(docs), now_ms, nullptr, false});
  }
  return cursor_reply(id, ns, "firstBatch", std::move(batch));
}

bson::Document CursorManager::get_more(int64_t id, const std::string& ns, int64_t batch_size,
                                       int64_t now_ms) {
  std::lock_guard lock(mu_);
  auto it = cursors_.find(id);
  if (it == cursors_.end() || it->second.ns != ns || it->second.stream) {
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

int64_t CursorManager::open_stream(std::string ns, std::shared_ptr<ChangeStreamCursor> stream,
                                   int64_t now_ms) {
  assert(stream != nullptr);
  std::lock_guard lock(mu_);
  if (stream_count() >= kMaxStreamCursors && !evict_least_recently_used(true)) {
    throw CommandError(code::kOperationFailed, "too many open change stream cursors: all " +
                                                   std::to_string(kMaxStreamCursors) +
                                                   " are in use by a getMore");
  }
  if (cursors_.size() >= kMaxCursors) evict_least_recently_used(false);
  int64_t id = new_id();
  cursors_.emplace(id, Cursor{std::move(ns), {}, now_ms, std::move(stream), false});
  return id;
}

std::shared_ptr<ChangeStreamCursor> CursorManager::check_out_stream(int64_t id,
                                                                    const std::string& ns,
                                                                    int64_t now_ms) {
  std::lock_guard lock(mu_);
  auto it = cursors_.find(id);
  if (it == cursors_.end() || it->second.ns != ns) {
    throw CommandError(code::kCursorNotFound, "cursor id " + std::to_string(id) + " not found");
  }
  Cursor& c = it->second;
  if (!c.stream) return nullptr;
  if (c.checked_out) {
    throw CommandError(code::kCursorInUse,
                       "cursor id " + std::to_string(id) + " is already in use");
  }
  c.checked_out = true;
  c.last_used_ms = now_ms;
  return c.stream;
}

void CursorManager::check_in_stream(int64_t id, bool exhausted, int64_t now_ms) {
  std::lock_guard lock(mu_);
  auto it = cursors_.find(id);
  if (it == cursors_.end() || !it->second.stream) return;  // killed meanwhile
  if (exhausted) {
    cursors_.erase(it);
    return;
  }
  it->second.checked_out = false;
  it->second.last_used_ms = now_ms;
}

bool CursorManager::is_stream(int64_t id) const {
  std::lock_guard lock(mu_);
  auto it = cursors_.find(id);
  return it != cursors_.end() && it->second.stream != nullptr;
}

void CursorManager::close_streams(int32_t code, const std::string& message) {
  std::lock_guard lock(mu_);
  std::erase_if(cursors_, [&](const auto& kv) {
    if (!kv.second.stream) return false;
    if (kv.second.checked_out) kv.second.stream->interrupt(code, message);
    return true;
  });
}

bool CursorManager::kill(int64_t id, const std::string& ns) {
  std::lock_guard lock(mu_);
  auto it = cursors_.find(id);
  if (it == cursors_.end() || it->second.ns != ns) return false;
  if (it->second.stream && it->second.checked_out) {
    it->second.stream->interrupt(code::kCursorKilled,
                                 "cursor id " + std::to_string(id) + " killed");
  }
  cursors_.erase(it);
  return true;
}

void CursorManager::kill_namespace_prefix(const std::string& prefix) {
  std::lock_guard lock(mu_);
  std::erase_if(cursors_, [&](const auto& kv) {
    return !kv.second.stream && kv.second.ns.starts_with(prefix);
  });
}

void CursorManager::expire_idle(int64_t now_ms) {
  std::lock_guard lock(mu_);
  std::erase_if(cursors_, [&](const auto& kv) {
    return !kv.second.checked_out && now_ms - kv.second.last_used_ms >= kIdleTimeoutMs;
  });
}

size_t CursorManager::stream_count() const {
  return static_cast<size_t>(std::count_if(cursors_.begin(), cursors_.end(), [](const auto& kv) {
    return kv.second.stream != nullptr;
  }));
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

bool CursorManager::evict_least_recently_used(bool streams_only) {
  auto oldest = cursors_.end();
  for (auto it = cursors_.begin(); it != cursors_.end(); ++it) {
    if (it->second.checked_out || (streams_only && !it->second.stream)) continue;
    if (oldest == cursors_.end() || it->second.last_used_ms < oldest->second.last_used_ms) {
      oldest = it;
    }
  }
  if (oldest == cursors_.end()) return false;
  cursors_.erase(oldest);
  return true;
}

}  // namespace mongosim::data
