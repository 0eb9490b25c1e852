// The session transaction table (docs/mongodb-behaviour.md, Retryable writes): for each logical
// session, the newest txnNumber and the statements of it that wrote, so a retried retryable write
// is answered from the record instead of running twice. Also the session check-out that serialises
// commands on one lsid.
//
// Invariants: a session's record only ever moves to a higher txnNumber; a statement is recorded
// only if it wrote (its oplog entry carries the same lsid/txnNumber/stmtId), under the same
// data-lock hold as the write, so the record and the data can never disagree.
//
// Thread rules: SessionTable is guarded by the Store's data mutex. SessionCheckout is
// internally synchronised and is taken before the data mutex, never while holding it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "base/optime.h"
#include "bson/value.h"

namespace mongosim::data {

// What an executed statement did, enough to rebuild its reply.
struct ExecutedStatement {
  char op = 'n';                           // i (insert or upsert), u, d
  std::optional<bson::Value> upserted_id;  // update/findAndModify upserts
  bool find_and_modify = false;
  std::optional<bson::Document> pre_image;   // findAndModify: the matched document
  std::optional<bson::Document> post_image;  // findAndModify: the document written
  OpTime optime;
};

class SessionTable {
 public:
  static constexpr size_t kMaxSessions = 100'000;

  // The key of an lsid document: the bytes of its `id` UUID. Throws CommandError for a
  // malformed lsid.
  static std::string key_of(const bson::Value& lsid);

  // Starts or continues txn_number on the session. Throws TransactionTooOld (225) if a newer
  // txnNumber has started; forgets the old statements when a newer one starts.
  void begin(const std::string& key, int64_t txn_number);

  // The record of stmt_id in the session's current transaction, if it executed.
  const ExecutedStatement* executed(const std::string& key, int64_t txn_number,
                                    int32_t stmt_id) const;

  void record(const std::string& key, int64_t txn_number, int32_t stmt_id,
              ExecutedStatement statement);

  // Rollback (session records roll back with their writes; docs/mongodb-behaviour.md, Oplog and
  // rollback): forgets every statement written after `common_point`, and a session whose current
  // transaction only had such statements, so a retry re-executes. Returns the number of statements
  // forgotten.
  size_t forget_after(OpTime common_point);

 private:
  struct Session {
    int64_t txn_number = -1;
    std::map<int32_t, ExecutedStatement> executed;
  };
  std::map<std::string, Session> sessions_;
};

// Serialises commands that carry the same lsid (mongod's session check-out).
class SessionCheckout {
 public:
  static constexpr int64_t kMaxWaitMs = 60'000;

  class Lease {
   public:
    Lease() = default;
    Lease(SessionCheckout* owner, std::string key) : owner_(owner), key_(std::move(key)) {}
    Lease(Lease&& other) noexcept : owner_(other.owner_), key_(std::move(other.key_)) {
      other.owner_ = nullptr;
    }
    Lease& operator=(Lease&& other) noexcept {
      if (this != &other) {
        if (owner_ != nullptr) owner_->release(key_);
        owner_ = other.owner_;
        key_ = std::move(other.key_);
        other.owner_ = nullptr;
      }
      return *this;
    }
    ~Lease();

   private:
    SessionCheckout* owner_ = nullptr;
    std::string key_;
  };

  // Blocks until no other command holds the session; throws ExceededTimeLimit after kMaxWaitMs.
  Lease acquire(const std::string& key);

 private:
  void release(const std::string& key);
  std::mutex mu_;
  std::condition_variable released_;
  std::map<std::string, bool> busy_;  // only checked-out sessions are present
};

}  // namespace mongosim::data
