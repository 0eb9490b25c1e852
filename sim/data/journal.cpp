#include "data/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "base/crc32c.h"
#include "base/error_codes.h"
#include "bson/codec.h"
#include "command/command.h"

namespace mongosim::data {

namespace {

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint32_t get_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

[[noreturn]] void fatal(const std::string& what) {
  // A journal that cannot be written or synced cannot back any acknowledgement (fsyncgate):
  // stop rather than keep answering.
  std::fprintf(stderr, "mongosim: fatal journal error: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// An entry's or a truncation's optime as this journal wrote it: a timestamp and a whole term in
// [-1, kMaxTerm]. Anything else is not a record this journal wrote (a missing term read as -1
// would order before every entry, and a truncation after it would drop them all).
OpTime optime_of(const bson::Document& doc) {
  const bson::Value* ts = doc.get("ts");
  const bson::Value* term = doc.get("t");
  if (ts == nullptr || ts->type() != bson::Type::kTimestamp) {
    throw std::invalid_argument("optime without a timestamp 'ts'");
  }
  const std::optional<int64_t> whole =
      term != nullptr && term->is_number() ? term->number_as_exact_int64() : std::nullopt;
  if (!whole || *whole < -1 || *whole > kMaxTerm) {
    throw std::invalid_argument("optime whose term 't' is not a whole number in [-1, 2^62]");
  }
  return OpTime{ts->as_timestamp(), *whole};
}

bool all_zero(const std::string& bytes, size_t from) {
  for (size_t i = from; i < bytes.size(); ++i) {
    if (bytes[i] != 0) return false;
  }
  return true;
}

// Applies one decoded payload to the entry list; throws std::invalid_argument if it is not a
// journal record.
void apply_payload(const bson::Document& payload, std::vector<bson::Document>& entries) {
  const bson::Value* kind = payload.get("k");
  if (kind == nullptr || !kind->is_string()) throw std::invalid_argument("record without 'k'");
  if (kind->as_string() == "e") {
    const bson::Value* e = payload.get("e");
    if (e == nullptr || !e->is_document()) throw std::invalid_argument("entry record without 'e'");
    entries.push_back(e->as_document());
    return;
  }
  if (kind->as_string() == "t") {
    const bson::Value* after = payload.get("after");
    if (after == nullptr || !after->is_document()) {
      throw std::invalid_argument("truncation record without 'after'");
    }
    OpTime common = optime_of(after->as_document());
    while (!entries.empty() && common < optime_of(entries.back())) entries.pop_back();
    return;
  }
  throw std::invalid_argument("unknown record kind '" + kind->as_string() + "'");
}

}  // namespace

std::string encode_journal_record(const bson::Document& payload) {
  std::string body = bson::encode_document(payload);
  std::string out;
  out.reserve(kJournalHeaderBytes + body.size());
  put_u32(out, static_cast<uint32_t>(body.size()));
  put_u32(out, server::crc32c(reinterpret_cast<const uint8_t*>(body.data()), body.size()));
  out += body;
  return out;
}

JournalContents read_journal(const std::string& path) {
  JournalContents out;
  std::ifstream in(path, std::ios::binary);
  if (!in) return out;  // no journal yet
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t offset = 0;
  auto torn = [&](const std::string& reason) {
    out.torn_tail = true;
    out.torn_reason = reason;
    out.torn_offset = offset;
  };
  while (offset < bytes.size()) {
    size_t remaining = bytes.size() - offset;
    if (all_zero(bytes, offset)) {
      torn("zero-filled tail of " + std::to_string(remaining) + " bytes");
      break;
    }
    if (remaining < kJournalHeaderBytes) {
      torn("record header cut short (" + std::to_string(remaining) + " bytes)");
      break;
    }
    uint32_t length = get_u32(data + offset);
    uint32_t crc = get_u32(data + offset + 4);
    if (length == 0 || length > kMaxJournalRecordBytes) {
      throw JournalCorrupt(path, offset,
                           "record length " + std::to_string(length) + " is outside (0, " +
                               std::to_string(kMaxJournalRecordBytes) + "]");
    }
    if (remaining - kJournalHeaderBytes < length) {
      torn("record of " + std::to_string(length) + " bytes cut short by the end of the file");
      break;
    }
    const uint8_t* payload = data + offset + kJournalHeaderBytes;
    bool last = remaining - kJournalHeaderBytes == length;
    if (server::crc32c(payload, length) != crc) {
      if (last) {
        torn("checksum mismatch in the last record");
        break;
      }
      throw JournalCorrupt(path, offset, "checksum mismatch (more records follow)");
    }
    bson::DecodeResult decoded = bson::decode_document(payload, length);
    if (!decoded.doc) throw JournalCorrupt(path, offset, "bad BSON: " + decoded.error);
    try {
      apply_payload(*decoded.doc, out.entries);
    } catch (const std::invalid_argument& e) {
      throw JournalCorrupt(path, offset, e.what());
    }
    ++out.records;
    offset += kJournalHeaderBytes + length;
  }
  out.valid_bytes = offset;
  return out;
}

Journal::Journal(std::string path, uint64_t valid_bytes, OpTime durable, uint64_t max_bytes)
    : path_(std::move(path)), max_bytes_(max_bytes), appended_(durable), durable_(durable) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw std::runtime_error("cannot open journal " + path_ + ": " + std::strerror(errno));
  }
  if (::ftruncate(fd_, static_cast<off_t>(valid_bytes)) != 0 ||
      ::lseek(fd_, static_cast<off_t>(valid_bytes), SEEK_SET) < 0 || ::fdatasync(fd_) != 0) {
    std::string err = std::strerror(errno);
    ::close(fd_);
    throw std::runtime_error("cannot prepare journal " + path_ + ": " + err);
  }
  size_bytes_ = valid_bytes;
  flusher_ = std::thread([this] { flusher_loop(); });
}

Journal::~Journal() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  flush();
  ::close(fd_);
}

void Journal::check_capacity(uint64_t bytes) const {
  std::lock_guard lock(mu_);
  if (size_bytes_ + bytes + kJournalHeaderBytes > max_bytes_) {
    throw CommandError(code::kOutOfDiskSpace,
                       "journal " + path_ + " has reached its limit of " +
                           std::to_string(max_bytes_) +
                           " bytes; writes are refused (journal compaction is not implemented)");
  }
}

void Journal::write_record(const bson::Document& payload) {
  std::string record = encode_journal_record(payload);
  size_t done = 0;
  while (done < record.size()) {
    ssize_t n = ::write(fd_, record.data() + done, record.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fatal("write to " + path_ + " failed: " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  size_bytes_ += record.size();
}

void Journal::append_entry(const bson::Document& entry, OpTime optime) {
  std::lock_guard lock(mu_);
  assert(appended_ < optime && "journal entries are appended in optime order");
  write_record(bson::Document{{"k", bson::V("e")}, {"e", bson::V(entry)}});
  appended_ = optime;
}

void Journal::truncate_after(OpTime common_point) {
  std::lock_guard flush_lock(flush_mu_);
  {
    std::lock_guard lock(mu_);
    write_record(
        bson::Document{{"k", bson::V("t")}, {"after", bson::V(common_point.to_document())}});
    ++generation_;
    appended_ = common_point;
  }
  if (::fdatasync(fd_) != 0) fatal("fsync of " + path_ + " failed: " + std::strerror(errno));
  std::lock_guard lock(mu_);
  durable_ = common_point;
  cv_.notify_all();
}

void Journal::flush() {
  std::lock_guard flush_lock(flush_mu_);
  OpTime target;
  uint64_t generation = 0;
  {
    std::lock_guard lock(mu_);
    flush_requested_ = false;
    if (appended_ == durable_) return;
    target = appended_;
    generation = generation_;
  }
  if (::fdatasync(fd_) != 0) fatal("fsync of " + path_ + " failed: " + std::strerror(errno));
  {
    std::lock_guard lock(mu_);
    if (generation != generation_ || !(durable_ < target)) return;
    durable_ = target;
  }
  cv_.notify_all();
}

void Journal::flusher_loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, std::chrono::milliseconds(kCommitIntervalMs),
                 [this] { return stopping_ || flush_requested_; });
    if (stopping_) break;
    lock.unlock();
    flush();
    lock.lock();
  }
}

bool Journal::wait_durable(OpTime optime) {
  std::unique_lock lock(mu_);
  if (optime <= durable_) return true;
  flush_requested_ = true;  // j:true forces the commit now instead of at the next interval
  cv_.notify_all();
  // A truncation (rollback) may have removed the entry: then it never becomes durable.
  uint64_t generation = generation_;
  cv_.wait_for(lock, std::chrono::milliseconds(kMaxDurableWaitMs),
               [&] { return optime <= durable_ || stopping_ || generation != generation_; });
  return optime <= durable_ && generation == generation_;
}

OpTime Journal::durable() const {
  std::lock_guard lock(mu_);
  return durable_;
}

uint64_t Journal::size_bytes() const {
  std::lock_guard lock(mu_);
  return size_bytes_;
}

}  // namespace mongosim::data
