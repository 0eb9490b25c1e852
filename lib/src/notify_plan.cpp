#include "notify_plan.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "bson_ptr.h"

namespace mongolock::detail {

namespace {

struct QueueView {
  std::optional<int64_t> own_until_ms;
  std::optional<std::string> live_head;  // the first entry live at the server's NOW
};

// The waiter's own `until`, then (with NOW = that until - keep) the first live entry's waiter.
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
  for_each_document(document, "queue", [&](const bson_t& entry) {
    if (find_date_ms(entry, "until").value_or(0) <= now_ms) return true;
    view.live_head = find_utf8(entry, "w");
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
