#include "data/session_table.h"

#include <cassert>
#include <chrono>

#include "command/command.h"

namespace mongosim::data {

namespace {

std::string hex_of(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 15]);
  }
  return out;
}

}  // namespace

std::string SessionTable::key_of(const bson::Value& lsid) {
  if (!lsid.is_document()) {
    throw CommandError(code::kTypeMismatch,
                       "BSON field 'OperationSessionInfo.lsid' is the wrong "
                       "type '" +
                           std::string(bson::type_name(lsid.type())) + "', expected type 'object'");
  }
  const bson::Value* id = lsid.as_document().get("id");
  if (id == nullptr) {
    throw CommandError(40414,
                       "BSON field 'OperationSessionInfo.lsid.id' is missing but a "
                       "required field");
  }
  if (id->type() != bson::Type::kBinary || id->binary_subtype() != 4) {
    throw CommandError(code::kTypeMismatch,
                       "BSON field 'OperationSessionInfo.lsid.id' is the wrong type, expected "
                       "type 'uuid'");
  }
  return id->binary_bytes();
}

void SessionTable::begin(const std::string& key, int64_t txn_number) {
  auto it = sessions_.find(key);
  if (it == sessions_.end()) {
    // Past the bound, forget an arbitrary idle session: mongod reaps idle sessions after
    // logicalSessionTimeoutMinutes, so a retry after eviction re-executes, as there.
    if (sessions_.size() >= kMaxSessions) sessions_.erase(sessions_.begin());
    it = sessions_.emplace(key, Session{}).first;
  }
  Session& s = it->second;
  if (txn_number < s.txn_number) {
    throw CommandError(code::kTransactionTooOld,
                       "Cannot start transaction " + std::to_string(txn_number) + " on session " +
                           hex_of(key) + " because a newer transaction with txnNumber " +
                           std::to_string(s.txn_number) + " has already started on this session.");
  }
  if (txn_number > s.txn_number) {
    s.txn_number = txn_number;
    s.executed.clear();
  }
}

const ExecutedStatement* SessionTable::executed(const std::string& key, int64_t txn_number,
                                                int32_t stmt_id) const {
  auto it = sessions_.find(key);
  if (it == sessions_.end() || it->second.txn_number != txn_number) return nullptr;
  auto st = it->second.executed.find(stmt_id);
  return st == it->second.executed.end() ? nullptr : &st->second;
}

size_t SessionTable::forget_after(OpTime common_point) {
  size_t forgotten = 0;
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    auto& executed = it->second.executed;
    size_t before = executed.size();
    std::erase_if(executed, [&](const auto& kv) { return common_point < kv.second.optime; });
    forgotten += before - executed.size();
    // The transaction number itself came from a rolled-back write: forget the session, so the
    // client's retry (same or older txnNumber) is not refused as too old.
    if (before > 0 && executed.empty()) {
      it = sessions_.erase(it);
    } else {
      ++it;
    }
  }
  return forgotten;
}

void SessionTable::record(const std::string& key, int64_t txn_number, int32_t stmt_id,
                          ExecutedStatement statement) {
  auto it = sessions_.find(key);
  assert(it != sessions_.end() && it->second.txn_number == txn_number);
  (void)txn_number;
  it->second.executed[stmt_id] = std::move(statement);
}

SessionCheckout::Lease::~Lease() {
  if (owner_ != nullptr) owner_->release(key_);
}

SessionCheckout::Lease SessionCheckout::acquire(const std::string& key) {
  std::unique_lock lock(mu_);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kMaxWaitMs);
  bool free = released_.wait_until(lock, deadline, [&] { return !busy_.contains(key); });
  if (!free) {
    throw CommandError(code::kExceededTimeLimit,
                       "timed out waiting to check out the session for this command");
  }
  busy_.emplace(key, true);
  return Lease(this, key);
}

void SessionCheckout::release(const std::string& key) {
  {
    std::lock_guard lock(mu_);
    busy_.erase(key);
  }
  released_.notify_all();
}

}  // namespace mongosim::data
