// The journal: an append-only file under --dbpath that makes the oplog durable. Every oplog
// entry (data changes and catalog changes alike: create, drop, createIndexes are "c" entries)
// is appended as a record; a rollback appends a truncation record. Replaying the records from
// an empty store rebuilds the catalog, the documents, the oplog and the session table, because
// the data is a function of the oplog (full-document updates, idempotent apply).
//
// Record format (little-endian): [u32 payload_bytes][u32 crc32c(payload)][payload: one BSON
// document]. Payloads: {k:"e", e:<oplog entry>} or {k:"t", after:{ts,t}} (drop every entry
// with an optime after `after`).
//
// Durability (mongod's journalCommitInterval; docs/mongodb-behaviour.md, Write concern): appends go
// to the page cache; a flusher thread fsyncs every kCommitIntervalMs, and wait_durable() forces an
// fsync at once. One fsync covers every writer waiting at that moment (group commit). durable() is
// the newest optime known to be on disk.
//
// Reading: a record cut short by the end of the file, or a bad checksum on the last record, is a
// torn tail (the process died mid-write): it is reported and dropped. A bad record followed by
// more data is corruption: read_journal throws JournalCorrupt naming the file and offset.
//
// Limit: kMaxJournalBytes by default. Past it, appends are refused before the change is made
// (CommandError OutOfDiskSpace naming the file); compaction is not implemented.
//
// Thread rules: append() is called under the Store's data mutex (so records are in oplog
// order); wait_durable(), durable() and truncate_after() from any thread. A write or fsync
// failure is fatal (the process aborts after logging): after a failed fsync the kernel may have
// dropped the pages, so continuing could acknowledge lost writes.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/optime.h"
#include "bson/value.h"

namespace mongosim::data {

inline constexpr uint64_t kMaxJournalBytes = uint64_t{1} << 30;        // 1 GiB
inline constexpr uint32_t kMaxJournalRecordBytes = 64u * 1024 * 1024;  // an entry <= 16 MiB
inline constexpr size_t kJournalHeaderBytes = 8;

class JournalCorrupt : public std::runtime_error {
 public:
  JournalCorrupt(const std::string& path, uint64_t offset, const std::string& what)
      : std::runtime_error("journal " + path + " is corrupt at byte offset " +
                           std::to_string(offset) + ": " + what),
        offset_(offset) {}
  uint64_t offset() const { return offset_; }

 private:
  uint64_t offset_;
};

struct JournalContents {
  std::vector<bson::Document> entries;  // oplog entries after applying truncations, in order
  uint64_t valid_bytes = 0;             // length of the intact prefix
  bool torn_tail = false;
  std::string torn_reason;  // what was wrong with the dropped tail
  uint64_t torn_offset = 0;
  size_t records = 0;
};

// Reads a journal file; a missing file reads as empty. Throws JournalCorrupt.
JournalContents read_journal(const std::string& path);

// Encodes one record (header + payload), for the writer and for tests that build files.
std::string encode_journal_record(const bson::Document& payload);

class Journal {
 public:
  static constexpr int64_t kCommitIntervalMs = 100;
  static constexpr int64_t kMaxDurableWaitMs = 60'000;

  // Opens (creating) `path`, cuts it to `valid_bytes` (dropping a torn tail), and starts the
  // flusher. `durable` is the optime the intact prefix ends at. Throws std::runtime_error
  // naming the file when it cannot be opened.
  Journal(std::string path, uint64_t valid_bytes, OpTime durable,
          uint64_t max_bytes = kMaxJournalBytes);
  ~Journal();  // stops the flusher after a last fsync
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Throws CommandError(OutOfDiskSpace) if `bytes` more would pass the limit. Call before
  // changing the data, so a refused write leaves no trace.
  void check_capacity(uint64_t bytes = 0) const;
  void append_entry(const bson::Document& entry, OpTime optime);
  // Records that every entry after `common_point` is gone, and fsyncs it before returning.
  void truncate_after(OpTime common_point);

  // Blocks until everything appended up to `optime` is fsynced; false if the journal is
  // stopping, a truncation intervened, or the bound ran out.
  bool wait_durable(OpTime optime);
  OpTime durable() const;
  uint64_t size_bytes() const;
  const std::string& path() const { return path_; }

 private:
  void write_record(const bson::Document& payload);
  void flush();
  void flusher_loop();

  const std::string path_;
  const uint64_t max_bytes_;
  int fd_ = -1;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t size_bytes_ = 0;
  OpTime appended_;
  OpTime durable_;
  uint64_t generation_ = 0;  // bumped by truncate_after so an older fsync cannot raise durable_
  bool flush_requested_ = false;
  bool stopping_ = false;

  std::mutex flush_mu_;  // one fsync at a time
  std::thread flusher_;
};

}  // namespace mongosim::data
