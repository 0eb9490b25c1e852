#include "context.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <set>
#include <thread>

#include "commands.h"
#include "hold_spec.h"
#include "mongolock/errors.h"
#include "validation.h"

namespace mongolock::detail {

namespace {

constexpr int kIndexAttemptsMax = 3;
constexpr auto kIndexRetryPause = std::chrono::seconds(1);
constexpr int64_t kServerSelectionTimeoutMsMax = 30'000;
constexpr int64_t kStreamAwaitMsMax = 1000;  // a notify stream's maxAwaitTimeMS

// mongoc's DEBUG/INFO lines (monitor chatter) would flood workers' stderr; keep warnings.
void log_handler(mongoc_log_level_t level, const char* domain, const char* message, void*) {
  if (level > MONGOC_LOG_LEVEL_WARNING) return;
  std::fprintf(stderr, "mongolock: mongoc %s: %s\n", domain, message);
}

void init_driver_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    mongoc_init();
    mongoc_log_set_handler(log_handler, nullptr);
  });
}

bool is_transient_code(int code) {
  static constexpr std::array<int, 15> kCodes = {
      6,      // HostUnreachable
      7,      // HostNotFound
      89,     // NetworkTimeout
      91,     // ShutdownInProgress
      112,    // WriteConflict
      189,    // PrimarySteppedDown
      262,    // ExceededTimeLimit
      9001,   // SocketException
      10107,  // NotWritablePrimary
      11000,  // DuplicateKey (concurrent upsert of a missing document)
      11600,  // InterruptedAtShutdown
      11602,  // InterruptedDueToReplStateChange
      13435,  // NotPrimaryNoSecondaryOk
      13436,  // NotPrimaryOrSecondary
      10058,  // LegacyNotPrimary
  };
  return std::find(kCodes.begin(), kCodes.end(), code) != kCodes.end();
}

// WriteConcernFailed: the write was applied but not replicated in time (mongos and some
// drivers report it as a top-level command error): the write may stand.
constexpr int kWriteConcernFailed = 64;

Outcome classify_error(const bson_error_t& error) {
  switch (error.domain) {
    case MONGOC_ERROR_SERVER_SELECTION:
      return Outcome::kNotSent;
    case MONGOC_ERROR_SERVER:
      return error.code == kWriteConcernFailed ? Outcome::kUnknown : Outcome::kRefused;
    case MONGOC_ERROR_WRITE_CONCERN:
      return Outcome::kUnknown;
    case MONGOC_ERROR_COMMAND:
    case MONGOC_ERROR_BSON:
      return Outcome::kRefused;
    case MONGOC_ERROR_CLIENT:
      return error.code == MONGOC_ERROR_CLIENT_AUTHENTICATE ? Outcome::kRefused : Outcome::kUnknown;
    default:
      return Outcome::kUnknown;  // stream, protocol: the command may have run
  }
}

// A write command that returned ok:1 can still carry writeErrors or a writeConcernError.
void check_write_reply(Reply& reply) {
  if (auto code = find_int64(*reply.doc, "writeErrors.0.code")) {
    reply.outcome = Outcome::kRefused;
    reply.code = static_cast<int>(*code);
    reply.transient = is_transient_code(reply.code);
    reply.message = find_utf8(*reply.doc, "writeErrors.0.errmsg").value_or("write error");
    return;
  }
  if (auto code = find_int64(*reply.doc, "writeConcernError.code")) {
    reply.outcome = Outcome::kUnknown;
    reply.code = static_cast<int>(*code);
    reply.message = find_utf8(*reply.doc, "writeConcernError.errmsg").value_or("write concern");
  }
}

Bson make_write_opts(const Options& options) {
  Bson opts = make_bson();
  bson_t concern;
  bson_append_document_begin(opts.get(), "writeConcern", -1, &concern);
  if (options.write_concern.is_majority()) {
    bson_append_utf8(&concern, "w", -1, "majority", -1);
  } else {
    bson_append_int32(&concern, "w", -1, options.write_concern.members_count);
  }
  bson_append_int64(&concern, "wtimeout", -1, options.write_timeout_ms);
  bson_append_document_end(opts.get(), &concern);
  return opts;
}

const char* read_concern_level(ReadConcern concern) {
  switch (concern) {
    case ReadConcern::kLocal:
      return "local";
    case ReadConcern::kLinearizable:
      return "linearizable";
    case ReadConcern::kMajority:
      break;
  }
  return "majority";
}

Bson make_read_opts(const Options& options) {
  Bson opts = make_bson();
  bson_t concern;
  bson_append_document_begin(opts.get(), "readConcern", -1, &concern);
  bson_append_utf8(&concern, "level", -1, read_concern_level(options.read_concern), -1);
  bson_append_document_end(opts.get(), &concern);
  return opts;
}

// Bounds the driver's waits by the lease unless the URI chose its own.
void bound_timeouts(mongoc_uri_t* uri, const Options& options) {
  const auto expiry = static_cast<int32_t>(std::min<int64_t>(options.expiry_ms, INT32_MAX));
  if (!mongoc_uri_has_option(uri, MONGOC_URI_SOCKETTIMEOUTMS)) {
    mongoc_uri_set_option_as_int32(uri, MONGOC_URI_SOCKETTIMEOUTMS, expiry);
  }
  if (!mongoc_uri_has_option(uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS)) {
    const auto selection = static_cast<int32_t>(
        std::clamp<int64_t>(options.expiry_ms / 2, 100, kServerSelectionTimeoutMsMax));
    mongoc_uri_set_option_as_int32(uri, MONGOC_URI_SERVERSELECTIONTIMEOUTMS, selection);
  }
}

std::string cluster_key_of(const mongoc_uri_t* uri) {
  std::string key;
  for (const mongoc_host_list_t* host = mongoc_uri_get_hosts(uri); host; host = host->next) {
    key += host->host_and_port;
    key += ',';
  }
  if (const char* set = mongoc_uri_get_replica_set(uri)) key += set;
  return key;
}

// Keys (cluster/database/collection) whose index this process created or is creating.
std::mutex& index_registry_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::set<std::string>& index_registry() {
  static std::set<std::string> keys;
  return keys;
}

}  // namespace

Context::Context(const std::string& uri_text, std::string database, Options options)
    : options_(options.validated()),
      database_(std::move(database)),
      pool_wait_ms_(std::min(options_.expiry_ms / 2, kPoolWaitMsMax)),
      creator_pid_(getpid()),
      provider_id_(new_acquisition_id()) {
  check_utf8_text("database name", database_, 63);
  if (database_.empty()) throw InvalidArgument("mongolock: database name is empty");
  init_driver_once();
  bson_error_t error;
  mongoc_uri_t* uri = mongoc_uri_new_with_error(uri_text.c_str(), &error);
  if (uri == nullptr) {
    throw InvalidArgument("mongolock: bad MongoDB URI '" + uri_text + "': " + error.message);
  }
  bound_timeouts(uri, options_);
  if (!options_.app_name.empty() && mongoc_uri_get_appname(uri) == nullptr) {
    mongoc_uri_set_appname(uri, options_.app_name.c_str());
  }
  const std::string cluster_key = cluster_key_of(uri);
  pool_ = mongoc_client_pool_new(uri);
  mongoc_uri_destroy(uri);
  if (pool_ == nullptr)
    throw InvalidArgument("mongolock: cannot build a client pool for " + uri_text);
  owns_pool_ = true;
  mongoc_client_pool_set_error_api(pool_, MONGOC_ERROR_API_VERSION_2);
  write_opts_ = make_write_opts(options_);
  read_opts_ = make_read_opts(options_);
  start_index_creation(cluster_key);
}

Context::Context(mongoc_client_pool_t* pool, std::string database, Options options)
    : options_(options.validated()),
      database_(std::move(database)),
      pool_(pool),
      pool_wait_ms_(std::min(options_.expiry_ms / 2, kPoolWaitMsMax)),
      creator_pid_(getpid()),
      provider_id_(new_acquisition_id()) {
  if (pool_ == nullptr) throw InvalidArgument("mongolock: client pool is null");
  if (database_.empty()) throw InvalidArgument("mongolock: database name is empty");
  check_utf8_text("database name", database_, 63);
  init_driver_once();
  mongoc_client_pool_set_error_api(pool_, MONGOC_ERROR_API_VERSION_2);
  write_opts_ = make_write_opts(options_);
  read_opts_ = make_read_opts(options_);
  start_index_creation("pool@" + std::to_string(reinterpret_cast<uintptr_t>(pool_)));
}

Context::~Context() {
  if (in_forked_child()) {
    // A forked child: the index threads and the pool's sockets are the parent's. Leave both.
    for (std::jthread& thread : index_threads_) new std::jthread(std::move(thread));
    static_cast<void>(watcher_.release());
    return;
  }
  watcher_.reset();        // stops the change stream before the pool goes away
  index_threads_.clear();  // requests stop and joins before the pool goes away
  if (owns_pool_) mongoc_client_pool_destroy(pool_);
}

bool Context::in_forked_child() const {
  return getpid() != creator_pid_;
}

ReleaseWatcher* Context::release_watcher() {
  if (in_forked_child()) return nullptr;
  std::lock_guard guard(watcher_mutex_);
  if (!watcher_) {
    ReleaseWatcher::Params params;
    params.pool = pool_;
    params.database = database_;
    params.collection = options_.collection;
    params.provider_id = provider_id_;
    // The destructor waits for the getMore in flight; the watcher lowers this to a quarter of
    // the pool's socketTimeoutMS (expiry_ms unless the URI sets it: bound_timeouts).
    params.await_ms = std::clamp<int64_t>(options_.expiry_ms / 4, 25, kStreamAwaitMsMax);
    params.reopen_pause_ms = std::clamp<int64_t>(options_.busy_wait_max_ms, 50, 5000);
    watcher_ = std::make_unique<ReleaseWatcher>(std::move(params));
  }
  return watcher_.get();
}

ReleaseWatcher* Context::release_watcher_if_made() {
  if (in_forked_child()) return nullptr;
  std::lock_guard guard(watcher_mutex_);
  return watcher_.get();
}

bool Context::try_reserve_hold() {
  if (holds_.fetch_add(1) < kHoldsPerProviderMax) return true;
  holds_.fetch_sub(1);
  return false;
}

void Context::release_hold() {
  holds_.fetch_sub(1);
}

namespace {

// mongoc_client_pool_pop waits without a bound when every client is in use.
mongoc_client_t* pop_within(mongoc_client_pool_t* pool, int64_t wait_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    if (mongoc_client_t* client = mongoc_client_pool_try_pop(pool)) return client;
    if (std::chrono::steady_clock::now() >= deadline) return nullptr;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

}  // namespace

Reply Context::write(const bson_t& command) {
  return run(command, SendMode::kWrite);
}
Reply Context::write_once(const bson_t& command) {
  return run(command, SendMode::kWriteOnce);
}
Reply Context::read(const bson_t& command) {
  return run(command, SendMode::kRead);
}

IndexTarget Context::index_target(bool rw) const {
  return rw ? IndexTarget{options_.rw_collection, kTtlIndexName}
            : IndexTarget{options_.collection, kReapIndexName};
}

Reply Context::make_index(const IndexTarget& target) {
  return write(*index_command(target.collection, "reapAt", target.name, options_.reap_after_s));
}

// listIndexes on the target judged by judge_indexes; nullopt (with `detail`) when it failed. A
// collection that does not exist yet has no index.
std::optional<IndexVerdict> Context::judge_collection(const IndexTarget& target, bool rw,
                                                      std::string& detail) {
  constexpr int kNamespaceNotFound = 26;
  const IndexRule rule{database_ + "." + target.collection, options_.reap_after_s,
                       options_.create_index, !rw};
  Reply reply = run(*list_indexes_command(target.collection), SendMode::kPlain);
  if (reply.outcome == Outcome::kOk) return judge_indexes(*reply.doc, rule);
  if (reply.outcome == Outcome::kRefused && reply.code == kNamespaceNotFound) {
    return judge_indexes(*make_bson(), rule);
  }
  detail = "listIndexes on " + rule.collection_path + " failed: " + reply.message;
  return std::nullopt;
}

Context::IndexCheck Context::check_indexes(bool rw, std::string& detail,
                                           const std::stop_token& stop) {
  constexpr int kIndexExists = 68;
  constexpr int kOptionsConflict = 85;
  constexpr int kKeySpecsConflict = 86;
  constexpr int kUnauthorized = 13;
  std::atomic<bool>& final_verdict = rw ? rw_indexes_final_ : plain_indexes_final_;
  if (final_verdict.load()) return IndexCheck::kClean;
  const IndexTarget target = index_target(rw);
  // Judge; when the Provider's own index is missing, make it and judge again. Whoever creates it
  // first fixes its expireAfterSeconds, so it is made before any acquire goes into the
  // collection: a tombstone is never written under an index whose value is not yet known.
  for (int round = 0; round < 2; ++round) {
    if (stop.stop_requested()) {
      detail = "stopped during the index check";
      return IndexCheck::kUnchecked;
    }
    std::optional<IndexVerdict> verdict = judge_collection(target, rw, detail);
    if (!verdict) return IndexCheck::kUnchecked;
    switch (verdict->kind) {
      case IndexVerdictKind::kUsable:
        final_verdict.store(true);
        return IndexCheck::kClean;
      case IndexVerdictKind::kRefused:
        detail = std::move(verdict->detail);
        return IndexCheck::kRefused;
      case IndexVerdictKind::kIncomplete:
        detail = std::move(verdict->detail);
        return IndexCheck::kUnchecked;
      case IndexVerdictKind::kUsableUntilIndexed:
        break;
    }
    if (round == 1) break;
    if (stop.stop_requested()) {
      detail = "stopped during the index check";
      return IndexCheck::kUnchecked;
    }
    Reply made = make_index(target);
    const bool index_there = made.outcome == Outcome::kOk || made.code == kIndexExists ||
                             made.code == kOptionsConflict || made.code == kKeySpecsConflict;
    if (index_there) continue;  // judge what is there now
    if (made.outcome == Outcome::kRefused && made.domain == MONGOC_ERROR_SERVER &&
        made.code == kUnauthorized) {
      // This Provider may not create indexes (no privilege): it acquires on what it sees and
      // asks again next attempt (mongolock.h [index]). Any other refusal may pass (an
      // interruption, a stepping-down primary): nothing is sent until the index is there.
      return IndexCheck::kClean;
    }
    detail = "createIndexes on " + database_ + "." + target.collection + " failed: " + made.message;
    return IndexCheck::kUnchecked;
  }
  detail = "the TTL index " + std::string(target.name) + " on " + database_ + "." +
           target.collection + " was created but listIndexes does not show it";
  return IndexCheck::kUnchecked;
}

namespace {

// One command through the driver. kWriteOnce uses the generic command API, which neither adds
// a txnNumber nor retries (it is neither a read nor a write command to libmongoc) but sends the
// writeConcern given in opts; kPlain is the same with no options (listIndexes, on the primary).
bool run_on_client(mongoc_client_t* client, const char* database, const bson_t& command,
                   SendMode mode, const bson_t* write_opts, const bson_t* read_opts, bson_t* reply,
                   bson_error_t* error) {
  switch (mode) {
    case SendMode::kRead:
      return mongoc_client_read_command_with_opts(client, database, &command, nullptr, read_opts,
                                                  reply, error);
    case SendMode::kWrite:
      return mongoc_client_write_command_with_opts(client, database, &command, write_opts, reply,
                                                   error);
    case SendMode::kPlain:
      return mongoc_client_command_with_opts(client, database, &command, nullptr, nullptr, reply,
                                             error);
    case SendMode::kWriteOnce:
      break;
  }
  return mongoc_client_command_with_opts(client, database, &command, nullptr, write_opts, reply,
                                         error);
}

}  // namespace

Reply Context::run(const bson_t& command, SendMode mode) {
  const bool is_write = mode == SendMode::kWrite || mode == SendMode::kWriteOnce;
  if (in_forked_child()) {
    // The pool's sockets are shared with the parent: one request from here would interleave
    // with the parent's on the same connection.
    Reply reply;
    reply.outcome = Outcome::kRefused;
    reply.doc = make_bson();
    reply.message = "this Provider was made in another process (fork); make a new one here";
    return reply;
  }
  mongoc_client_t* client = pop_within(pool_, pool_wait_ms_);
  if (client == nullptr) {
    Reply reply;
    reply.outcome = Outcome::kNotSent;
    reply.doc = make_bson();
    reply.message = "no pooled client became free within " + std::to_string(pool_wait_ms_) + " ms";
    return reply;
  }
  BsonReply raw_reply;
  bson_error_t error;
  const bool ok = run_on_client(client, database_.c_str(), command, mode, write_opts_.get(),
                                read_opts_.get(), raw_reply.out(), &error);
  mongoc_client_pool_push(pool_, client);
  Reply reply;
  reply.doc = raw_reply.copy();
  if (ok) {
    reply.outcome = Outcome::kOk;
    if (is_write) check_write_reply(reply);
    if (is_write && options_.write_concern.is_majority()) note_operation_time(reply);
    return reply;
  }
  reply.outcome = classify_error(error);
  reply.domain = static_cast<int>(error.domain);
  reply.code = static_cast<int>(error.code);
  reply.message = error.message;
  reply.transient = reply.outcome == Outcome::kRefused && is_transient_code(reply.code);
  return reply;
}

void Context::note_operation_time(Reply& reply) {
  bson_iter_t iter;
  if (reply.outcome != Outcome::kOk ||
      !bson_iter_init_find(&iter, reply.doc.get(), "operationTime") ||
      !BSON_ITER_HOLDS_TIMESTAMP(&iter)) {
    return;  // not acknowledged (a write concern error), or no cluster time (a standalone)
  }
  uint32_t seconds = 0;
  uint32_t increment = 0;
  bson_iter_timestamp(&iter, &seconds, &increment);
  reply.operation_time = (ClusterTime{seconds} << 32) | increment;
}

void Context::start_index_creation(const std::string& cluster_key) {
  if (!options_.create_index) return;
  const std::array<IndexTarget, 2> targets = {index_target(false), index_target(true)};
  for (const IndexTarget& target : targets) {
    const std::string key = cluster_key + "/" + database_ + "/" + target.collection;
    {
      std::lock_guard guard(index_registry_mutex());
      if (!index_registry().insert(key).second) continue;
    }
    index_threads_.emplace_back(
        [this, key, target](std::stop_token stop) { create_index(key, target, stop); });
  }
}

void Context::create_index(const std::string& key, const IndexTarget& target,
                           std::stop_token stop) {
  constexpr int kIndexExists = 68;
  constexpr int kOptionsConflict = 85;
  constexpr int kKeySpecsConflict = 86;
  std::string last_error;
  for (int attempt = 0; attempt < kIndexAttemptsMax && !stop.stop_requested(); ++attempt) {
    Reply reply = make_index(target);
    if (reply.outcome == Outcome::kOk || reply.code == kIndexExists) return;
    if (reply.code == kOptionsConflict || reply.code == kKeySpecsConflict) {
      // Another Provider made it with another reap_after_s (or key): it stays as it is.
      // check_indexes() judges it before every acquire: a shorter expireAfterSeconds than
      // this Provider's reap_after_s refuses acquires, a longer one is fine.
      std::fprintf(stderr, "mongolock: TTL index %s on %s.%s exists with other options: %s\n",
                   target.name, database_.c_str(), target.collection.c_str(),
                   reply.message.c_str());
      return;
    }
    last_error = reply.message;
    std::mutex mutex;
    std::condition_variable_any wake;
    std::unique_lock lock(mutex);
    wake.wait_for(lock, stop, kIndexRetryPause, [] { return false; });
  }
  {
    std::lock_guard guard(index_registry_mutex());
    index_registry().erase(key);  // let a later Provider try again
  }
  if (!stop.stop_requested()) {
    std::fprintf(stderr,
                 "mongolock: TTL index on %s.%s not created in the background (acquires make it "
                 "first, mongolock.h [index]): %s\n",
                 database_.c_str(), target.collection.c_str(), last_error.c_str());
  }
}

}  // namespace mongolock::detail
