// Input validation for the checkers: fields whose shape the history contract fixes (see
// checker/history.h) are checked before anything is judged, so a malformed history is an error
// naming the event and field (`locklab check` exits 2) instead of a verdict built on a misreading.
// Checked: the start event's value.vocabulary is an integer; a final ok's count and token are
// integers (or null: the harness writes null for a document field that is absent), missing a
// boolean, writes an array of {id: string, token: integer or null}; in v2 every fenced write
// invoke carries a string value.id that no other write uses; every worker event follows its
// client's rules (checker/worker_event.h: lock operations name their lock, an acquire ok
// carries a token exactly when the client issues them), the client being the start event's
// value.client, judged by its row in the client table. One pass, linear.
#include <stdexcept>
#include <unordered_map>

#include "checker/index.h"
#include "checker/worker_event.h"

namespace locklab {
namespace {

std::string where(const Event& e, size_t position) {
  return "history event " + std::to_string(position + 1) + " (t=" + std::to_string(e.t_ns) +
         " ns, " + e.process + " " + std::string(to_string(e.type)) + " " + e.f + ")";
}

[[noreturn]] void bad(const Event& e, size_t position, const std::string& what) {
  throw std::invalid_argument("bad history: " + where(e, position) + ": " + what);
}

void validate_final(const Event& e, size_t position) {
  if (!e.value.is_object()) return;
  for (const char* key : {"count", "token"}) {
    auto it = e.value.find(key);
    if (it != e.value.end() && !it->is_null() && !it->is_number_integer())
      bad(e, position, std::string("value.") + key + " is not an integer");
  }
  auto missing = e.value.find("missing");
  if (missing != e.value.end() && !missing->is_boolean())
    bad(e, position, "value.missing is not a boolean");
  auto writes = e.value.find("writes");
  if (writes == e.value.end()) return;
  if (!writes->is_array()) bad(e, position, "value.writes is not an array");
  for (size_t k = 0; k < writes->size(); ++k) {
    const auto& entry = (*writes)[k];
    const bool id_ok = entry.is_object() && entry.contains("id") && entry["id"].is_string();
    const bool token_ok = !entry.is_object() || !entry.contains("token") ||
                          entry["token"].is_number_integer() || entry["token"].is_null();
    if (!id_ok || !token_ok)
      bad(e, position,
          "value.writes[" + std::to_string(k) + "] is not {id: string, token: integer}");
  }
}

// The client named by a start event, and what its grants carry.
GrantTokens grants_of(const Event& start) {
  if (!start.value.is_object()) return {};
  const auto client = start.value.find("client");
  const auto tokens = start.value.find("tokens");
  return GrantTokens::of(
      client != start.value.end() && client->is_string() ? client->get<std::string>() : "",
      tokens != start.value.end() && tokens->is_boolean() ? std::optional<bool>(tokens->get<bool>())
                                                          : std::nullopt);
}

}  // namespace

void validate_history(const std::vector<Event>& history, const CheckConfig& config) {
  int vocabulary = 1;
  GrantTokens grants;                                 // nothing known until a start event says
  std::unordered_map<std::string, size_t> write_ids;  // id -> position of its invoke
  for (size_t i = 0; i < history.size(); ++i) {
    const Event& e = history[i];
    if (e.process != "harness" && e.process != "nemesis") {
      if (std::string why = worker_event_error(e, grants); !why.empty()) bad(e, i, why);
    }
    if (e.process == "harness" && e.f == "start") grants = grants_of(e);
    if (e.process == "harness" && e.f == "start" && e.value.is_object() &&
        e.value.contains("vocabulary")) {
      if (!e.value["vocabulary"].is_number_integer())
        bad(e, i, "value.vocabulary is not an integer");
      vocabulary = e.value["vocabulary"].get<int>();
    } else if (e.process == "harness" && e.f == "final" && e.type == EventType::kOk) {
      validate_final(e, i);
    } else if (vocabulary >= 2 && e.f == "write" && e.type == EventType::kInvoke &&
               resource_of(e) == config.counter_resource) {
      // The value written is what counter.no-lost-updates judges (WORKERS.md): without it the
      // write could not be judged, and a lost update would pass unseen.
      auto count = e.value.find("count");
      if (count == e.value.end() || !count->is_number_integer())
        bad(e, i, "a v2 counter write without an integer value.count (the value it writes)");
    } else if (vocabulary >= 2 && e.f == "write" && e.type == EventType::kInvoke &&
               e.value.is_object() && !e.value.contains("read") &&
               resource_of(e) != config.counter_resource) {
      auto id = e.value.find("id");
      if (id == e.value.end() || !id->is_string())
        bad(e, i, "a v2 fenced write without a string value.id");
      auto [at, fresh] = write_ids.emplace(id->get<std::string>(), i);
      if (!fresh)
        bad(e, i,
            "value.id " + at->first + " is also used by " + where(history[at->second], at->second));
    }
  }
}

}  // namespace locklab
