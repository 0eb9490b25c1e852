#include "notify_plan.h"

#include <algorithm>
#include <cassert>
#include <set>
#include <string>

#include "bson_ptr.h"

namespace mongolock::detail {

namespace {

struct QueueView {
  std::optional<int64_t> own_until_ms;
  std::optional<std::string> live_head;  // the HEAD: the first live entry not tombstoned
};

// The ids the document's tombstones name (whatever their `until`: the acquire's head skips
// every listed id too).
std::set<std::string> tombstoned_ids(const bson_t& document) {
  std::set<std::string> ids;
  for_each_document(document, "tombstones", [&](const bson_t& entry) {
    if (std::optional<std::string> id = find_utf8(entry, "id")) ids.insert(std::move(*id));
    return ids.size() < static_cast<size_t>(kTombstonesMax);  // a bound on the read
  });
  return ids;
}

// The waiter's own `until`, then (with NOW = that until - keep) the HEAD's waiter, as the
// acquire's pipeline finds it (mongolock.h [notify]: a tombstoned waiter is passed over).
QueueView read_queue(const bson_t& document, const QueueTicket& ticket) {
  QueueView view;
  for_each_document(document, "queue", [&](const bson_t& entry) {
    if (find_utf8(entry, "w") == ticket.waiter) {
      view.own_until_ms = find_date_ms(entry, "until");
      return false;
    }
    return true;
  });
  if (!view.own_until_ms) return view;
  const int64_t now_ms = *view.own_until_ms - ticket.keep_ms;
  const std::set<std::string> tombstoned = tombstoned_ids(document);
  for_each_document(document, "queue", [&](const bson_t& entry) {
    if (find_date_ms(entry, "until").value_or(0) <= now_ms) return true;
    std::optional<std::string> waiter = find_utf8(entry, "w");
    if (waiter && tombstoned.count(*waiter) != 0) return true;
    view.live_head = std::move(waiter);
    return false;
  });
  return view;
}

}  // namespace

NotifyPlan plan_notify_wait(const bson_t& document, const QueueTicket& ticket, int64_t min_ms) {
  assert(min_ms >= 1 && ticket.keep_ms >= 2 * min_ms);
  const QueueView view = read_queue(document, ticket);
  if (!view.own_until_ms) return {};
  const int64_t now_ms = *view.own_until_ms - ticket.keep_ms;
  const int64_t lease_end_ms = find_date_ms(document, "expiresAt").value_or(0);
  const bool held = !find_is_null_or_missing(document, "holder") && lease_end_ms > now_ms;
  const bool first = view.live_head == std::string(ticket.waiter);
  int64_t sleep_ms = min_ms;
  if (held) {
    // Woken at the release if first; else the lapse of a lease nobody releases is the next
    // thing to look at, and a grace later a head that did not come.
    sleep_ms = lease_end_ms - now_ms + (first ? 0 : ticket.grace_ms);
  } else if (!first) {
    sleep_ms = lease_end_ms + ticket.grace_ms - now_ms;  // the head has until then
  }
  return {true, std::clamp<int64_t>(sleep_ms, min_ms, ticket.keep_ms / 2)};
}

}  // namespace mongolock::detail
