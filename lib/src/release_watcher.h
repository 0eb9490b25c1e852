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
// (take_grant); the lease clock of such a hold is the waiter's (notify_waiter.h). Whenever the
// stream opens, or an open stream breaks or is closed, every waiter is woken: one registered before
// the stream opened attempts again under it, one whose stream broke polls (streaming() false) until
// the stream is back. A release by a hold of this same Provider wakes its grantee directly
// (handed_over_by_release, from the release's reply), open stream or not; the stream's event for
// that hand-over then finds it delivered.
//
// Why no release is missed: a waiter registers after its first refused attempt (an acquire
// that is granted at once opens no stream), having read state() before that attempt; a refused
// attempt leaves its entry queued, so a later release is an event after the attempt. If the
// same stream was open before the attempt and still is, it saw everything after it; if none is
// open now, its opening will wake the waiter to attempt under it; otherwise (missed_since) the
// waiter attempts again at once, now registered. The same holds when the open stream delivered
// an event for a head not (yet) registered here since the attempt, or a release of this Provider
// handed the lock to a waiter not (yet) registered (open stream or not): the release may have
// been this waiter's, dispatched in the gap before it registered. Before each later attempt the
// waiter reads wakes(); a wake between an attempt and the wait is not lost: wait() compares
// with that value. The stream reads majority-committed events only.
//
// Limits: one stream, holding one pooled client, while any waiter waits and for linger_ms after
// the last; at most kWaitersMax registrations (register_waiter returns nullptr beyond: that
// waiter polls). A pool whose URI sets maxPoolSize below 2 gets no stream (it would take the
// client every hold's extension and every attempt needs): its waiters poll. Each getMore waits
// at most await_ms and at most a quarter of the URI's socketTimeoutMS (a getMore that outwaits
// the socket timeout fails and is resumed by the driver forever), both read from the pool's own
// URI, so a borrowed pool is judged as an owned one. A stream that cannot be opened (a
// standalone server, a server without change streams, no pooled client free) is tried again
// every reopen_pause_ms while waiters wait.
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

  // Registers waiter id `waiter` (its queue entry's `w`); nullptr when kWaitersMax are
  // registered. Starts the watcher thread on first use.
  std::unique_ptr<Registration> register_waiter(const std::string& waiter);

  // A hand-over to `waiter` (lock `lock`, token `token`) that this Provider's own release made,
  // seen in that release's acknowledged reply (commands.h hand_over_in_release): the waiter is
  // woken with the token as the stream would wake it, without waiting for the stream (which
  // delivers the same hand-over later, once: the two are one hand-over, taken once). Needs no
  // open stream: a registered waiter that polls is woken too.
  void handed_over_by_release(const std::string& lock, const std::string& waiter, int64_t token);

  State state() const;
  // Whether a waiter registered after an attempt made at `before` must attempt again at once:
  // a stream is open now that was not open then (it opened in between, and its opening woke
  // everyone registered before it), or an event or a release's reply named a waiter that had
  // not registered yet (it may have been this waiter's, in the gap between its attempt and its
  // registration). Otherwise, with no stream open now, its opening will wake the waiter.
  bool missed_since(const State& before) const;

 private:
  void run();
  bool wait_for_waiters();
  // The getMore wait for clients of this pool; nullopt: the pool is too small for a stream.
  std::optional<int64_t> await_ms_for(const mongoc_client_t& client) const;
  void give_up_streaming();  // waiters registered now and later poll
  void serve(mongoc_client_t* client);
  void dispatch(const bson_t& event);
  // Wakes registered waiter `waiter` (with a hand-over's token), or counts an unclaimed event.
  // Under mutex_.
  void wake_locked(const std::string& waiter, std::optional<int64_t> grant_token);
  // Whether hand-over `token` (or a later one) of lock/waiter `key` was dispatched already;
  // remembers it if not. Under mutex_.
  bool handed_over_seen(const std::string& key, int64_t token);
  void set_streaming(bool streaming);  // and wakes every waiter
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
  };
  std::map<std::string, Waiter> wakes_;
  bool streaming_ = false;
  bool stopping_ = false;
  bool thread_failed_ = false;
  uint64_t streams_opened_ = 0;
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
