#include "release_watcher.h"

#include <pthread.h>

#include <algorithm>
#include <cassert>
#include <limits>
#include <system_error>
#include <utility>

#include "bson_ptr.h"

namespace mongolock::detail {

namespace {

// The stream's pipeline (docs/mongolock-wire.md, notify): events of a lock document with no
// holder whose first queue entry is this Provider's, and events that may be a hand-over to a
// waiter of this Provider (grantP): an update that changed the token, or a replacement (a
// pipeline update that rewrote most of the document is logged, and streamed, as one). Reduced to
// what dispatch() reads.
Bson stream_pipeline(const std::string& provider_id) {
  const char* provider = provider_id.c_str();
  Bson handed_over(BCON_NEW("$or", "[", "{", "operationType", BCON_UTF8("update"),
                            "fullDocument.grantP", BCON_UTF8(provider),
                            "updateDescription.updatedFields.token", "{", "$exists",
                            BCON_BOOL(true), "}", "}", "{", "operationType", BCON_UTF8("replace"),
                            "fullDocument.grantP", BCON_UTF8(provider), "}", "]"));
  return Bson(BCON_NEW(
      "pipeline", "[", "{", "$match", "{", "$or", "[", "{", "fullDocument.holder", BCON_NULL, "}",
      BCON_DOCUMENT(handed_over.get()), "]", "}", "}", "{", "$addFields", "{", "_mlHead", "{",
      "$arrayElemAt", "[", "{", "$ifNull", "[", BCON_UTF8("$fullDocument.queue"), "[", "]", "]",
      "}", BCON_INT32(0), "]", "}", "}", "}", "{", "$match", "{", "$or", "[", "{",
      "fullDocument.holder", BCON_NULL, "_mlHead.p", BCON_UTF8(provider), "}",
      BCON_DOCUMENT(handed_over.get()), "]", "}", "}", "{", "$project", "{", "_mlHead",
      BCON_INT32(1), "documentKey", BCON_INT32(1), "fullDocument.holder", BCON_INT32(1),
      "fullDocument.token", BCON_INT32(1), "fullDocument.grantW", BCON_INT32(1), "}", "}", "]"));
}

Bson stream_options(int64_t await_ms, std::optional<ClusterTime> start) {
  Bson options(
      BCON_NEW("fullDocument", BCON_UTF8("updateLookup"), "maxAwaitTimeMS", BCON_INT64(await_ms)));
  if (start) {
    BSON_APPEND_TIMESTAMP(options.get(), "startAtOperationTime",
                          static_cast<uint32_t>(*start >> 32), static_cast<uint32_t>(*start));
  }
  return options;
}

}  // namespace

ReleaseWatcher::Registration::Registration(ReleaseWatcher& watcher, std::string waiter)
    : watcher_(watcher), waiter_(std::move(waiter)) {}

ReleaseWatcher::Registration::~Registration() {
  std::lock_guard guard(watcher_.mutex_);
  watcher_.wakes_.erase(waiter_);
  if (watcher_.wakes_.empty()) watcher_.last_waiter_left_ = std::chrono::steady_clock::now();
}

std::optional<int64_t> ReleaseWatcher::Registration::take_grant() {
  std::lock_guard guard(watcher_.mutex_);
  return std::exchange(watcher_.wakes_.at(waiter_).grant_token, std::nullopt);
}

uint64_t ReleaseWatcher::Registration::wakes() const {
  std::lock_guard guard(watcher_.mutex_);
  return watcher_.wakes_.at(waiter_).wakes;
}

bool ReleaseWatcher::Registration::streaming() const {
  std::lock_guard guard(watcher_.mutex_);
  return watcher_.streaming_ && !watcher_.stale_locked(std::chrono::steady_clock::now());
}

void ReleaseWatcher::Registration::wait(uint64_t seen, SteadyTime until,
                                        const std::stop_token& stop) const {
  std::unique_lock lock(watcher_.mutex_);
  const auto done = [&] { return watcher_.stopping_ || watcher_.wakes_.at(waiter_).wakes != seen; };
  // A waiter counting on a live stream looks again whenever the stream would turn stale (each
  // reply moves that on) and returns if it has; one already polling (no stream, or a stale
  // one) sleeps its polling interval out.
  const bool counting_on_stream =
      watcher_.streaming_ && !watcher_.stale_locked(std::chrono::steady_clock::now());
  while (true) {
    SteadyTime check = until;
    if (counting_on_stream) {
      check = std::min(until, watcher_.last_heard_ + stale_after(watcher_.await_ms_));
    }
    if (woken_.wait_until(lock, stop, check, done)) return;
    const SteadyTime now = std::chrono::steady_clock::now();
    if (stop.stop_requested() || now >= until) return;
    if (counting_on_stream && watcher_.stale_locked(now)) return;
  }
}

ReleaseWatcher::ReleaseWatcher(Params params)
    : params_(std::move(params)), await_ms_(params_.await_ms) {}

ReleaseWatcher::~ReleaseWatcher() {
  {
    std::lock_guard guard(mutex_);
    stopping_ = true;
    for (auto& [id, waiter] : wakes_) waiter.woken->notify_all();
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::unique_ptr<ReleaseWatcher::Registration> ReleaseWatcher::register_waiter(
    const std::string& waiter, ClusterTime known) {
  std::lock_guard guard(mutex_);
  if (stopping_ || thread_failed_ || wakes_.size() >= kWaitersMax) return nullptr;
  if (!thread_.joinable()) {
    try {
      thread_ = std::thread([this] { run(); });
    } catch (const std::system_error&) {
      thread_failed_ = true;  // no stream in this Provider: its waiters poll
      return nullptr;
    }
  }
  std::unique_ptr<Registration> registration(new Registration(*this, waiter));
  wakes_.emplace(waiter, Waiter{0, &registration->woken_, std::nullopt, known});
  changed_.notify_all();  // the thread may be waiting for a first waiter
  return registration;
}

ReleaseWatcher::State ReleaseWatcher::state() const {
  std::lock_guard guard(mutex_);
  return {streaming_, streams_opened_, events_unclaimed_};
}

bool ReleaseWatcher::missed_since(const State& before, ClusterTime known) const {
  std::lock_guard guard(mutex_);
  // An unclaimed hand-over from a release's reply needs no stream to have been missed.
  if (events_unclaimed_ != before.unclaimed) return true;
  if (!streaming_) return false;  // its opening covers the waiter (registered now) or wakes it
  if (before.streaming && streams_opened_ == before.opened) return false;  // open throughout
  return !(stream_start_ && known != 0 && *stream_start_ <= known);
}

void ReleaseWatcher::run() {
  pthread_setname_np(pthread_self(), "mongolock-watch");  // at most 15 characters
  while (wait_for_waiters()) {
    mongoc_client_t* client = mongoc_client_pool_try_pop(params_.pool);
    if (client == nullptr) {
      pause(std::chrono::milliseconds(params_.reopen_pause_ms));  // every client is in use
      continue;
    }
    const std::optional<int64_t> await_ms = await_ms_for(*client);
    if (!await_ms) {
      mongoc_client_pool_push(params_.pool, client);
      give_up_streaming();
      return;
    }
    {
      std::lock_guard guard(mutex_);
      await_ms_ = *await_ms;
    }
    const Ended ended = serve(client);
    mongoc_client_pool_push(params_.pool, client);
    {
      std::lock_guard guard(mutex_);
      last_stream_broke_ = ended != Ended::kIdle;
    }
    // After an open with a start failed (a start the oplog no longer reaches, or any other
    // failure), the next opens at once at the newest entry: the waiters are polling.
    if (ended == Ended::kBroken) pause(std::chrono::milliseconds(params_.reopen_pause_ms));
  }
}

std::optional<ClusterTime> ReleaseWatcher::next_start_locked() const {
  if (last_stream_broke_) return std::nullopt;
  // A waiter with no cluster time is woken by the opening (set_streaming) whatever the start.
  ClusterTime start = std::numeric_limits<ClusterTime>::max();
  for (const auto& [id, waiter] : wakes_) {
    if (waiter.covered_from != 0) start = std::min(start, waiter.covered_from);
  }
  if (start == std::numeric_limits<ClusterTime>::max()) return std::nullopt;
  return start;
}

std::optional<int64_t> ReleaseWatcher::await_ms_for(const mongoc_client_t& client) const {
  // Every client of a pool carries the pool's URI (mongoc_client_get_uri takes a non-const
  // client in its declaration but only reads it).
  const mongoc_uri_t* uri = mongoc_client_get_uri(const_cast<mongoc_client_t*>(&client));
  constexpr int32_t kDriverMaxPoolSize = 100;  // libmongoc's default
  if (mongoc_uri_get_option_as_int32(uri, MONGOC_URI_MAXPOOLSIZE, kDriverMaxPoolSize) < 2) {
    return std::nullopt;
  }
  const int32_t socket_timeout_ms =
      mongoc_uri_get_option_as_int32(uri, MONGOC_URI_SOCKETTIMEOUTMS, 0);
  if (socket_timeout_ms <= 0) return params_.await_ms;
  return std::clamp<int64_t>(socket_timeout_ms / 4, 1, params_.await_ms);
}

void ReleaseWatcher::give_up_streaming() {
  std::lock_guard guard(mutex_);
  thread_failed_ = true;  // register_waiter refuses from now on: later waiters poll
  // Those registered already poll: no stream ever opened, so none of them counts on one.
  assert(!streaming_);
}

bool ReleaseWatcher::wait_for_waiters() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return stopping_ || !wakes_.empty(); });
  return !stopping_;
}

// Opens the stream, wakes the waiters it does not cover, and reads events until it breaks, the
// watcher stops, or no waiter has waited for linger_ms.
ReleaseWatcher::Ended ReleaseWatcher::serve(mongoc_client_t* client) {
  std::optional<ClusterTime> start;
  {
    std::lock_guard guard(mutex_);
    start = next_start_locked();
  }
  mongoc_collection_t* collection =
      mongoc_client_get_collection(client, params_.database.c_str(), params_.collection.c_str());
  mongoc_change_stream_t* stream =
      mongoc_collection_watch(collection, stream_pipeline(params_.provider_id).get(),
                              stream_options(await_ms_, start).get());
  bson_error_t error;
  const bson_t* error_reply = nullptr;
  bool broken = mongoc_change_stream_error_document(stream, &error, &error_reply);
  const bool start_failed = broken && start;
  if (!broken) {
    set_streaming(true, start);
    while (true) {
      {
        std::lock_guard guard(mutex_);
        const bool idle = wakes_.empty() && std::chrono::steady_clock::now() - last_waiter_left_ >=
                                                std::chrono::milliseconds(params_.linger_ms);
        if (stopping_ || idle) break;
      }
      const bson_t* event = nullptr;
      const auto asked = std::chrono::steady_clock::now();
      const bool got = mongoc_change_stream_next(stream, &event);
      {
        std::lock_guard guard(mutex_);
        last_heard_ = std::chrono::steady_clock::now();
      }
      if (got) {
        dispatch(*event);
      } else if (mongoc_change_stream_error_document(stream, &error, &error_reply)) {
        broken = true;
        break;
      } else if (std::chrono::steady_clock::now() - asked <
                 std::chrono::milliseconds(await_ms_ / 2)) {
        // Nothing, and no getMore waited for it: the cursor is closed and next() would return
        // at once forever. (libmongoc 1.23 reports a drop's invalidate as an error instead,
        // handled above; this keeps any other closing from spinning this thread.)
        broken = true;
        break;
      }
    }
  }
  mongoc_change_stream_destroy(stream);
  mongoc_collection_destroy(collection);
  set_streaming(false);
  if (start_failed) return Ended::kStartFailed;
  return broken ? Ended::kBroken : Ended::kIdle;
}

void ReleaseWatcher::dispatch(const bson_t& event) {
  // A hand-over: the document (as looked up, majority committed) is held by the waiter it was
  // handed to. Otherwise (that waiter has released already, or the event is a free lock's) the
  // head named in _mlHead is woken to attempt, if it is this Provider's.
  const std::optional<std::string> grantee = find_utf8(event, "fullDocument.grantW");
  const std::optional<int64_t> token = find_int64(event, "fullDocument.token");
  const bool handed_over = grantee && token && find_utf8(event, "fullDocument.holder") == *grantee;
  const bool head_woken = !handed_over && !find_utf8(event, "fullDocument.holder") &&
                          find_utf8(event, "_mlHead.p") == params_.provider_id;
  const std::optional<std::string> waiter =
      handed_over ? grantee : (head_woken ? find_utf8(event, "_mlHead.w") : std::nullopt);
  if (!waiter) return;
  std::lock_guard guard(mutex_);
  if (handed_over) {
    // The same hand-over comes again with every later write the stream passes on while it is
    // held (a replacement, a duplicate after a resume), and its release's reply may have
    // delivered it already (handed_over_by_release): delivered once.
    const std::string key = find_utf8(event, "documentKey._id").value_or("") + '/' + *grantee;
    if (handed_over_seen(key, *token)) return;
  }
  wake_locked(*waiter, handed_over ? token : std::nullopt);
}

void ReleaseWatcher::handed_over_by_release(const std::string& lock, const std::string& waiter,
                                            int64_t token) {
  std::lock_guard guard(mutex_);
  if (handed_over_seen(lock + '/' + waiter, token)) return;
  wake_locked(waiter, token);
}

void ReleaseWatcher::wake_locked(const std::string& waiter, std::optional<int64_t> grant_token) {
  auto found = wakes_.find(waiter);
  if (found == wakes_.end()) {
    // A waiter that gave up (its entry lapses, its hand-over is handed on by its leave), one
    // that took its hand-over from an attempt's reply, or one between its attempt and
    // registering.
    ++events_unclaimed_;
    return;
  }
  if (grant_token) found->second.grant_token = *grant_token;
  ++found->second.wakes;
  found->second.woken->notify_all();
}

bool ReleaseWatcher::handed_over_seen(const std::string& key, int64_t token) {
  for (const auto& [seen_key, seen_token] : handed_over_) {
    if (seen_key == key && seen_token >= token) return true;
  }
  handed_over_.emplace_back(key, token);
  if (handed_over_.size() > kHandOversRemembered) handed_over_.pop_front();
  return false;
}

void ReleaseWatcher::set_streaming(bool streaming, std::optional<ClusterTime> start) {
  std::lock_guard guard(mutex_);
  // Only a change matters to waiters: an opened stream must cover them (those it does not
  // attempt again under it), a broken one leaves them to poll. A stream that fails to open
  // again changes nothing: they are polling already.
  if (streaming_ == streaming) return;
  streaming_ = streaming;
  stream_start_ = streaming ? start : std::nullopt;
  if (streaming) {
    ++streams_opened_;
    last_heard_ = std::chrono::steady_clock::now();
  }
  for (auto& [id, waiter] : wakes_) {
    const bool covered =
        streaming && start && waiter.covered_from != 0 && *start <= waiter.covered_from;
    if (covered) continue;
    ++waiter.wakes;
    waiter.woken->notify_all();
  }
}

void ReleaseWatcher::pause(std::chrono::milliseconds length) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, length, [this] { return stopping_; });
}

}  // namespace mongolock::detail
