// ReleaseWatcher: a Provider's one change stream on its plain lock collection, and the notify
// waiters it wakes (mongolock.h [notify]; the pipeline is in docs/mongolock-wire.md).
//
// One thread ("mongolock-watch"), started by the first waiter, runs the stream: libmongoc's watch
// on the collection with fullDocument "updateLookup" and maxAwaitTimeMS await_ms, resumed by the
// driver after resumable errors. The server keeps an event when the lock document has no
// holder and the first entry of its queue is this Provider's, and adds that entry (_mlHead);
// the waiter with that id is woken. It also keeps an update that changed the token and whose
// document names this Provider in grantP (a release handed the lock over to its waiter grantW):
// if the looked-up document is still held by grantW, that waiter is woken with the token
// (take_grant); the lease clock of such a hold is the waiter's (notify_waiter.h). When an open
// stream breaks or is closed every waiter is woken and polls (streaming() false) until a stream
// is back; a stream's opening wakes the waiters it does not cover (below) to attempt again
// under it. A release by a hold of this same Provider wakes its grantee directly
// (handed_over_by_release, from the release's reply), open stream or not; the stream's event for
// that hand-over then finds it delivered.
//
// Why no release is missed: a waiter registers after its first refused attempt (an acquire
// that is granted at once opens no stream), having read state() before it, with that attempt's
// CLUSTER TIME: when its reply lists the waiter's entry, the reply's operationTime, which is
// the timestamp of the write that entered it, acknowledged by a majority (Reply::operation_time);
// else 0 (the queue was full, the reply was lost, a write concern below majority). A refused
// attempt leaves its entry queued, so a later release is an event after that write: at a later
// timestamp on its primary and, the write being majority committed, on every later primary. A
// stream opens at startAtOperationTime = the smallest nonzero cluster time of its registered
// waiters, so it delivers every release after each of their first attempts, and its opening
// wakes only the waiters it does not cover (cluster time 0; or one below its start, which only
// a waiter that registered while it opened can have) to attempt again under it. A stream opens with
// a start only as the Provider's first or after one that ended idle (no waiter for linger_ms), so
// every waiter then registered after the previous stream ended. After a broken stream, and after an
// open with a start failed (a start the oplog no longer reaches), the next opens at the member's
// newest entry and wakes every waiter. A waiter registering finds no open stream (whose
// opening covers it or wakes it), or the stream that was open before its attempt, or one that
// opened at or below its cluster time: nothing more to do; otherwise (missed_since) it
// attempts again at once, now registered. It also attempts again when the open stream
// delivered an event for a head not (yet) registered here since the attempt, or a release of
// this Provider handed the lock to a waiter not (yet) registered (open stream or not): the
// release may have been this waiter's, dispatched in the gap before it registered. A later
// attempt needs nothing more: it is made under a stream that covers the waiter, or while none
// is open (the waiter polls). Each wait compares the wake count read before its attempt
// (NotifyWaiter::before_attempt), so a wake in between is not lost. The stream reads
// majority-committed events only.
//
// Limits: one stream, holding one pooled client, while any waiter waits and for linger_ms after
// the last; at most kWaitersMax registrations (register_waiter returns nullptr beyond: that
// waiter polls). A pool whose URI sets maxPoolSize below 2 gets no stream (it would take the
// client every hold's extension and every attempt needs): its waiters poll. Each getMore waits
// at most await_ms and at most a quarter of the URI's socketTimeoutMS (a getMore that outwaits
// the socket timeout fails and is resumed by the driver forever), both read from the pool's own
// URI, so a borrowed pool is judged as an owned one. A stream that cannot be opened (a
// standalone server, a server without change streams, no pooled client free) is tried again
// every reopen_pause_ms while waiters wait (after an open with a start failed, once at once
// without it).
// Thread rules: register_waiter() and Registration from any thread. The destructor stops and
// joins the thread, waiting for the stream's current getMore: at most await_ms plus a round
// trip (bounded by the socket timeout).
#pragma once

#include <mongoc/mongoc.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>

namespace mongolock::detail {

inline constexpr size_t kWaitersMax = 10'000;

// A cluster timestamp as one number, ordered as timestamps are: seconds << 32 | increment.
// 0: none known.
using ClusterTime = uint64_t;

class ReleaseWatcher {
 public:
  struct Params {
    mongoc_client_pool_t* pool = nullptr;  // outlives the watcher
    std::string database;
    std::string collection;
    std::string provider_id;  // the `p` of this Provider's queue entries
    int64_t await_ms = 1000;  // maxAwaitTimeMS of each getMore, at most (see Limits)
    int64_t reopen_pause_ms = 500;
    int64_t linger_ms = 10'000;
  };
  using SteadyTime = std::chrono::steady_clock::time_point;
  // How long an open stream may go without a reply before waiters stop counting on it: each
  // getMore answers within await_ms (empty or not) plus a round trip; three of them and a
  // second of slack make a false alarm rare, and a false alarm costs only a poll.
  static std::chrono::milliseconds stale_after(int64_t await_ms) {
    return std::chrono::milliseconds(3 * await_ms + 1000);
  }

  class Registration {
   public:
    ~Registration();
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    // How often this waiter was woken (by its turn, a hand-over from the stream or from a
    // release's reply, or the stream opening, breaking or ending).
    uint64_t wakes() const;
    // The token of a hand-over to this waiter the stream or a release's reply delivered since
    // the last call, once.
    std::optional<int64_t> take_grant();
    // The stream is open and live (it answered within stale_after()): a release that makes
    // this waiter first will wake it.
    bool streaming() const;
    // Returns once wakes() != seen, at `until`, on a stop request, or as soon as an open stream
    // has been silent for stale_after() (a member that stopped answering without closing the
    // connection: the waiter then polls until the stream answers or breaks).
    void wait(uint64_t seen, SteadyTime until, const std::stop_token& stop) const;

   private:
    friend class ReleaseWatcher;
    Registration(ReleaseWatcher& watcher, std::string waiter);
    ReleaseWatcher& watcher_;
    const std::string waiter_;
    mutable std::condition_variable_any woken_;
  };

  // Whether a stream is open, and how many have opened: read before a waiter's first attempt.
  struct State {
    bool streaming = false;
    uint64_t opened = 0;
    uint64_t unclaimed = 0;  // events and release replies naming no waiter registered here
  };

  explicit ReleaseWatcher(Params params);
  ~ReleaseWatcher();
  ReleaseWatcher(const ReleaseWatcher&) = delete;
  ReleaseWatcher& operator=(const ReleaseWatcher&) = delete;

  // Registers waiter id `waiter` (its queue entry's `w`), which read the Provider's cluster time
  // `known` (0: none) before its attempt; nullptr when kWaitersMax are registered. Starts the
  // watcher thread on first use.
  std::unique_ptr<Registration> register_waiter(const std::string& waiter, ClusterTime known = 0);

  // A hand-over to `waiter` (lock `lock`, token `token`) that this Provider's own release made,
  // seen in that release's acknowledged reply (commands.h hand_over_in_release): the waiter is
  // woken with the token as the stream would wake it, without waiting for the stream (which
  // delivers the same hand-over later, once: the two are one hand-over, taken once). Needs no
  // open stream: a registered waiter that polls is woken too.
  void handed_over_by_release(const std::string& lock, const std::string& waiter, int64_t token);

  State state() const;
  // Whether a waiter registered after an attempt made at `before`, with the Provider's cluster
  // time `known` then (0: none), must attempt again at once: a stream is open now that was not
  // open then and did not open at or below `known` (it may have started after a release that
  // came after the attempt), or an event or a release's reply named a waiter that had not
  // registered yet (it may have been this waiter's, in the gap between its attempt and its
  // registration). Otherwise, with no stream open now, its opening covers or wakes the waiter.
  bool missed_since(const State& before, ClusterTime known = 0) const;

 private:
  void run();
  bool wait_for_waiters();
  // The getMore wait for clients of this pool; nullopt: the pool is too small for a stream.
  std::optional<int64_t> await_ms_for(const mongoc_client_t& client) const;
  void give_up_streaming();  // waiters registered now and later poll
  // How a stream ended: idle (no waiter for linger_ms, or the watcher stopping), broken (it
  // failed, or a stream with no start could not open), or an open with a start failed.
  enum class Ended { kIdle, kBroken, kStartFailed };
  Ended serve(mongoc_client_t* client);
  // Where the next stream starts: the smallest cluster time of the registered waiters, or
  // nullopt (the member's newest entry) after a broken stream or when none has one. Under
  // mutex_.
  std::optional<ClusterTime> next_start_locked() const;
  void dispatch(const bson_t& event);
  // Wakes registered waiter `waiter` (with a hand-over's token), or counts an unclaimed event.
  // Under mutex_.
  void wake_locked(const std::string& waiter, std::optional<int64_t> grant_token);
  // Whether hand-over `token` (or a later one) of lock/waiter `key` was dispatched already;
  // remembers it if not. Under mutex_.
  bool handed_over_seen(const std::string& key, int64_t token);
  // Opened at `start` (nullopt: at the member's newest entry): wakes the waiters it does not
  // cover. Closed: wakes every waiter (they poll).
  void set_streaming(bool streaming, std::optional<ClusterTime> start = std::nullopt);
  void pause(std::chrono::milliseconds length);

  const Params params_;
  mutable std::mutex mutex_;
  // The watcher thread's own wait (for a first waiter, a pause, a stop).
  mutable std::condition_variable_any changed_;
  // Registered waiter -> its wake count and its own condition variable (the Registration's):
  // a wake-up notifies only the waiter it is for, not every waiting thread.
  struct Waiter {
    uint64_t wakes = 0;
    std::condition_variable_any* woken = nullptr;
    std::optional<int64_t> grant_token;  // a hand-over not taken yet
    ClusterTime covered_from = 0;        // the cluster time it registered with (0: none)
  };
  std::map<std::string, Waiter> wakes_;
  bool streaming_ = false;
  bool stopping_ = false;
  bool thread_failed_ = false;
  uint64_t streams_opened_ = 0;
  std::optional<ClusterTime> stream_start_;  // the open stream's startAtOperationTime
  bool last_stream_broke_ = false;           // the next stream opens at the newest entry
  uint64_t events_unclaimed_ = 0;  // State::unclaimed
  // The latest hand-overs dispatched ("<lock>/<waiter>", token), oldest first; at most
  // kHandOversRemembered (an older duplicate counts as unclaimed: an extra attempt at worst).
  static constexpr size_t kHandOversRemembered = 256;
  std::deque<std::pair<std::string, int64_t>> handed_over_;
  SteadyTime last_heard_{};  // the open stream's last reply (or its opening)
  // params_.await_ms, lowered by the pool's socketTimeoutMS once known. Written by the watcher
  // thread under mutex_; read by it freely, by any other thread under mutex_.
  int64_t await_ms_;
  bool stale_locked(SteadyTime now) const {
    return streaming_ && now - last_heard_ > stale_after(await_ms_);
  }
  SteadyTime last_waiter_left_{};
  std::thread thread_;
};

}  // namespace mongolock::detail
