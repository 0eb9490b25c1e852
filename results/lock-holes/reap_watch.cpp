// reap-watch: watches the lock documents of one mongosim member during a locklab run and
// reports every document that disappeared (a TTL reap: nothing else deletes lock documents) and
// every one that came back (recreated by a later acquire), with the tokens before and after,
// and every step back of the member's clock (hello's localTime going down between polls).
// Used by watch-reaps.sh to check that a scenario really reaps inside the run, and that some
// documents were reaped before a clock step and recreated after it (the case the tolerance is
// about).
//
// usage: reap-watch URI [DATABASE] [COLLECTION]   (default locklab, locks: the harness's names)
// Polls every 50 ms until the member stops answering for 2 s (the run ended). One line per
// event on stdout: "gone L5 token T", "back L5 token T' (was T: higher|LOWER)[ across a step]",
// "clock stepped back D ms"; then a summary "reaped N, recreated M, recreated across a clock
// step S, recreated lower K". A reap between two polls that is recreated before
// the next poll is missed (the token jump is then all one sees): the counts are lower bounds.
//
// Single-threaded. Exit status: 0, or 2 on bad arguments or no first connection.
#include <mongoc/mongoc.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <thread>

namespace {

constexpr auto kPollPeriod = std::chrono::milliseconds(50);
constexpr int kFailedPollsToStop = 40;   // 2 s of a member that does not answer
constexpr int64_t kStepNoticedMs = 500;  // a fall of localTime smaller than this is not reported

// The member's wall clock (hello's localTime, which moves with mongosim's clock offset), or
// nullopt if it did not answer.
std::optional<int64_t> member_time_ms(mongoc_client_t* client) {
  bson_t* cmd = BCON_NEW("hello", BCON_INT32(1));
  bson_t reply;
  bson_error_t error;
  std::optional<int64_t> out;
  if (mongoc_client_command_simple(client, "admin", cmd, nullptr, &reply, &error)) {
    bson_iter_t it;
    if (bson_iter_init_find(&it, &reply, "localTime") && BSON_ITER_HOLDS_DATE_TIME(&it))
      out = bson_iter_date_time(&it);
  }
  bson_destroy(&reply);
  bson_destroy(cmd);
  return out;
}

// _id -> token of every lock document now, or nullopt if the member did not answer.
std::optional<std::map<std::string, int64_t>> snapshot(mongoc_collection_t* coll) {
  bson_t filter = BSON_INITIALIZER;
  mongoc_cursor_t* cursor = mongoc_collection_find_with_opts(coll, &filter, nullptr, nullptr);
  std::map<std::string, int64_t> docs;
  const bson_t* doc = nullptr;
  while (mongoc_cursor_next(cursor, &doc)) {
    bson_iter_t it;
    if (!bson_iter_init_find(&it, doc, "_id") || !BSON_ITER_HOLDS_UTF8(&it)) continue;
    const std::string id = bson_iter_utf8(&it, nullptr);
    int64_t token = 0;
    if (bson_iter_init_find(&it, doc, "token") && BSON_ITER_HOLDS_INT64(&it))
      token = bson_iter_int64(&it);
    docs[id] = token;
  }
  bson_error_t error;
  const bool failed = mongoc_cursor_error(cursor, &error);
  mongoc_cursor_destroy(cursor);
  bson_destroy(&filter);
  if (failed) return std::nullopt;
  return docs;
}

// What the watcher has seen so far; one per run.
class Watch {
 public:
  // One answered poll: the member's time and its lock documents.
  void observe(int64_t time_ms, std::map<std::string, int64_t> now) {
    if (last_time_ms_ - time_ms >= kStepNoticedMs) {
      ++steps_;
      std::printf("clock stepped back %lld ms\n", static_cast<long long>(last_time_ms_ - time_ms));
    }
    last_time_ms_ = time_ms;
    for (const auto& [id, token] : present_) {
      if (now.contains(id)) continue;
      std::printf("gone %s token %lld\n", id.c_str(), static_cast<long long>(token));
      gone_[id] = Gone{token, steps_};
      ++reaped_;
    }
    for (const auto& [id, token] : now) {
      auto was = gone_.find(id);
      if (was == gone_.end()) continue;
      const bool lower = token <= was->second.token;
      const bool stepped = steps_ > was->second.steps_before;
      std::printf("back %s token %lld (was %lld: %s)%s\n", id.c_str(),
                  static_cast<long long>(token), static_cast<long long>(was->second.token),
                  lower ? "LOWER" : "higher", stepped ? " across a step" : "");
      ++recreated_;
      across_ += stepped ? 1 : 0;
      lower_ += lower ? 1 : 0;
      gone_.erase(was);
    }
    present_ = std::move(now);
    std::fflush(stdout);
  }
  void summary() const {
    std::printf(
        "clock steps back %d, reaped %d, recreated %d, recreated across a clock step %d, "
        "recreated lower %d\n",
        steps_, reaped_, recreated_, across_, lower_);
  }

 private:
  struct Gone {
    int64_t token;
    int steps_before;  // clock steps seen when the document was found gone
  };
  std::map<std::string, int64_t> present_;  // as of the last answered poll
  std::map<std::string, Gone> gone_;        // reaped and not yet back
  int steps_ = 0, reaped_ = 0, recreated_ = 0, across_ = 0, lower_ = 0;
  int64_t last_time_ms_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: reap-watch URI [DATABASE] [COLLECTION]\n");
    return 2;
  }
  mongoc_init();
  mongoc_log_set_handler(nullptr, nullptr);
  bson_error_t error;
  mongoc_uri_t* uri = mongoc_uri_new_with_error(argv[1], &error);
  if (uri == nullptr) {
    std::fprintf(stderr, "reap-watch: bad URI %s: %s\n", argv[1], error.message);
    return 2;
  }
  mongoc_client_t* client = mongoc_client_new_from_uri(uri);
  mongoc_collection_t* coll = mongoc_client_get_collection(client, argc > 2 ? argv[2] : "locklab",
                                                           argc > 3 ? argv[3] : "locks");
  Watch watch;
  bool answered_once = false;
  for (int failed_polls = 0; failed_polls < kFailedPollsToStop;) {
    std::this_thread::sleep_for(kPollPeriod);
    const std::optional<int64_t> time_ms = member_time_ms(client);
    auto now = snapshot(coll);
    if (!now || !time_ms) {
      ++failed_polls;
      continue;
    }
    failed_polls = 0;
    answered_once = true;
    watch.observe(*time_ms, std::move(*now));
  }
  watch.summary();
  mongoc_collection_destroy(coll);
  mongoc_client_destroy(client);
  mongoc_uri_destroy(uri);
  mongoc_cleanup();
  return answered_once ? 0 : 2;
}
