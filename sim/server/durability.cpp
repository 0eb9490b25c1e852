#include "server/durability.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "base/command_error.h"
#include "base/log.h"
#include "bson/codec.h"

namespace mongosim::server {

namespace {

constexpr const char* kJournalDir = "journal";
constexpr const char* kMinValidFile = "minvalid.bson";
constexpr const char* kJournalFile = "oplog.journal";
constexpr const char* kReplicaStateFile = "replset.election.bson";
constexpr const char* kRollbackDir = "rollback";
constexpr int kMaxRollbackFileAttempts = 1000;

std::string errno_text() {
  return std::strerror(errno);
}

void fsync_path(const std::string& path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + errno_text());
  int rc = ::fsync(fd);
  std::string err = rc != 0 ? errno_text() : std::string();
  ::close(fd);
  if (rc != 0) throw std::runtime_error("cannot fsync " + path + ": " + err);
}

// Creates `path` if missing. A directory this call created is synced through its parent: a new
// directory entry survives a machine crash only once its parent directory is synced.
void make_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) == 0) {
    std::string parent = std::filesystem::path(path).parent_path().string();
    fsync_path(parent.empty() ? "." : parent, O_RDONLY | O_DIRECTORY);
    return;
  }
  if (errno != EEXIST) {
    throw std::runtime_error("cannot create directory " + path + ": " + errno_text());
  }
}

void write_all(int fd, const std::string& bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("cannot write " + path + ": " + errno_text());
    done += static_cast<size_t>(n);
  }
}

std::string uuid_text(const bson::Value& uuid, const std::string& fallback) {
  if (uuid.type() != bson::Type::kBinary || uuid.binary_bytes().size() != 16) return fallback;
  static const char* digits = "0123456789abcdef";
  std::string out;
  const std::string& bytes = uuid.binary_bytes();
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    auto b = static_cast<unsigned char>(bytes[i]);
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 15]);
  }
  return out;
}

// mongod's rollback file time format: 2026-01-01T12-34-56 (no colons, so any filesystem works).
std::string file_time(int64_t now_ms) {
  time_t secs = static_cast<time_t>(now_ms / 1000);
  tm parts{};
  gmtime_r(&secs, &parts);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H-%M-%S", &parts);
  return buf;
}

// A whole number in [min, max] (the file is ours, but a disk or an editor may have changed it: a
// term of 1e300 must stop the member, not be cast); missing: the fallback.
int64_t int_of(const bson::Document& doc, const char* name, int64_t fallback,
               const std::string& path, int64_t min = INT64_MIN, int64_t max = INT64_MAX) {
  const bson::Value* v = doc.get(name);
  if (v == nullptr) return fallback;
  const std::optional<int64_t> n = v->is_number() ? v->number_as_exact_int64() : std::nullopt;
  if (!n || *n < min || *n > max) {
    throw std::runtime_error("cannot read " + path + ": '" + name + "' is " + bson::to_json(*v) +
                             ", not a whole number in [" + std::to_string(min) + ", " +
                             std::to_string(max) + "]");
  }
  return *n;
}

}  // namespace

void write_file_atomically(const std::string& dir, const std::string& name,
                           const std::string& bytes) {
  std::string final_path = dir + "/" + name;
  std::string temp_path = final_path + ".tmp";
  int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + temp_path + ": " + errno_text());
  try {
    write_all(fd, bytes, temp_path);
    if (::fsync(fd) != 0)
      throw std::runtime_error("cannot fsync " + temp_path + ": " + errno_text());
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  if (::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    throw std::runtime_error("cannot rename " + temp_path + " to " + final_path + ": " +
                             errno_text());
  }
  fsync_path(dir, O_RDONLY | O_DIRECTORY);  // the rename itself must survive a crash
}

DbPath::DbPath(std::string dir) : dir_(std::move(dir)) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  make_dir(dir_);
  make_dir(dir_ + "/" + kJournalDir);
  std::string lock_path = dir_ + "/mongod.lock";
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) throw std::runtime_error("cannot open " + lock_path + ": " + errno_text());
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd_);
    throw std::runtime_error("Unable to lock the lock file: " + lock_path +
                             " (Resource temporarily unavailable). Another mongosim instance is "
                             "already running on the " +
                             dir_ + " directory");
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock_fd_, 0) == 0) (void)!::write(lock_fd_, pid.data(), pid.size());
}

DbPath::~DbPath() {
  journal_.reset();
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

void DbPath::recover(data::Store& store) {
  std::string path = dir_ + "/" + kJournalDir + "/" + kJournalFile;
  data::JournalContents contents = data::read_journal(path);
  if (contents.torn_tail) {
    log_event(Severity::kWarning, "STORAGE", 90101, "initandlisten",
              "Dropping the torn tail of the journal",
              bson::Document{{"file", bson::V(path)},
                             {"offset", bson::V(static_cast<int64_t>(contents.torn_offset))},
                             {"reason", bson::V(contents.torn_reason)}});
  }
  for (size_t i = 0; i < contents.entries.size(); ++i) {
    try {
      store.apply_oplog_entry(contents.entries[i]);
    } catch (const CommandError& e) {  // an entry the oplog cannot take: name where it is
      const std::string shown = bson::to_json(contents.entries[i]).substr(0, 300);
      throw std::runtime_error("cannot replay " + path + ": entry " + std::to_string(i + 1) +
                               " of " + std::to_string(contents.entries.size()) + " (" + shown +
                               "): " + e.what());
    }
  }
  OpTime last = store.last_applied();
  log_event(Severity::kInfo, "STORAGE", 90102, "initandlisten", "Recovered from the journal",
            bson::Document{{"file", bson::V(path)},
                           {"records", bson::V(static_cast<int64_t>(contents.records))},
                           {"entries", bson::V(static_cast<int64_t>(contents.entries.size()))},
                           {"lastOpTime", bson::V(last.to_document())}});
  journal_ = std::make_unique<data::Journal>(path, contents.valid_bytes, last);
  fsync_path(dir_ + "/" + kJournalDir,
             O_RDONLY | O_DIRECTORY);  // the journal file's entry
  store.attach_journal(journal_.get());
}

void DbPath::close(data::Store& store) {
  store.attach_journal(nullptr);
  journal_.reset();
}

std::optional<PersistedReplicaState> DbPath::load_replica_state() const {
  std::string path = dir_ + "/" + kReplicaStateFile;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bson::DecodeResult decoded =
      bson::decode_document(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (!decoded.doc) throw std::runtime_error("cannot read " + path + ": " + decoded.error);
  const bson::Document& d = *decoded.doc;
  PersistedReplicaState state;
  // Terms up to kMaxTerm (a member reaches at most a message's bound plus its own elections:
  // replication_fields.h); a vote for a member the config has (checked below, once it is read).
  state.election.term = int_of(d, "term", 0, path, 0, kMaxTerm);
  state.election.last_vote_term = int_of(d, "lastVoteTerm", -1, path, -1, kMaxTerm);
  state.election.last_vote_candidate =
      static_cast<int>(int_of(d, "lastVoteCandidate", -1, path, -1, INT32_MAX));
  if (const bson::Value* config = d.get("config"); config != nullptr && config->is_document()) {
    try {
      state.config = repl::parse_repl_set_config(config->as_document());
    } catch (const std::exception& e) {
      throw std::runtime_error("cannot read the replica-set config in " + path + ": " + e.what());
    }
  }
  const int members = state.config ? state.config->member_count() : 0;
  if (state.election.last_vote_candidate >= members) {
    throw std::runtime_error("cannot read " + path + ": 'lastVoteCandidate' is " +
                             std::to_string(state.election.last_vote_candidate) +
                             ", not a member of its config (" + std::to_string(members) +
                             " members)");
  }
  state.min_valid = load_min_valid();
  return state;
}

void DbPath::save_replica_state(const PersistedReplicaState& state) {
  bson::Document d{{"term", bson::V(state.election.term)},
                   {"lastVoteTerm", bson::V(state.election.last_vote_term)},
                   {"lastVoteCandidate", bson::V(int32_t{state.election.last_vote_candidate})}};
  if (state.config) d.append("config", bson::V(state.config->to_document()));
  std::lock_guard lock(save_mu_);
  write_file_atomically(dir_, kReplicaStateFile, bson::encode_document(d));
}

OpTime DbPath::load_min_valid() const {
  std::string path = dir_ + "/" + kMinValidFile;
  std::ifstream in(path, std::ios::binary);
  if (!in) return OpTime{};
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bson::DecodeResult decoded =
      bson::decode_document(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  const bson::Value* ts = decoded.doc ? decoded.doc->get("ts") : nullptr;
  if (ts == nullptr || ts->type() != bson::Type::kTimestamp) {
    throw std::runtime_error("cannot read " + path + ": no timestamp 'ts'");
  }
  return OpTime{ts->as_timestamp(), int_of(*decoded.doc, "t", -1, path, -1, kMaxTerm)};
}

void DbPath::save_min_valid(OpTime optime) {
  std::lock_guard lock(save_mu_);
  write_file_atomically(dir_, kMinValidFile, bson::encode_document(optime.to_document()));
}

std::string DbPath::write_rollback_file(const data::RemovedDocuments& removed, int64_t now_ms) {
  std::string root = dir_ + "/" + kRollbackDir;
  make_dir(root);
  std::string folder = root + "/" + uuid_text(removed.uuid, removed.ns);
  make_dir(folder);
  std::string bytes;
  for (const auto& doc : removed.documents) bson::encode_document(doc, bytes);
  std::string stem = folder + "/removed." + file_time(now_ms);
  for (int n = 0; n < kMaxRollbackFileAttempts; ++n) {
    std::string path = stem + "." + std::to_string(n) + ".bson";
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) throw std::runtime_error("cannot create " + path + ": " + errno_text());
    try {
      write_all(fd, bytes, path);
      if (::fsync(fd) != 0) throw std::runtime_error("cannot fsync " + path + ": " + errno_text());
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
    fsync_path(folder, O_RDONLY | O_DIRECTORY);
    return path;
  }
  throw std::runtime_error("too many rollback files named " + stem + ".*.bson");
}

}  // namespace mongosim::server
