// The per-client rules for a worker's event (checker/worker_event.h).
#include "checker/worker_event.h"

#include "client/clients.h"

namespace locklab {
namespace {

std::string client_text(const GrantTokens& grants) {
  return grants.client.empty() ? "the client" : "client " + grants.client;
}

// value.no_token as the contract reads it: only a boolean true says "no token".
bool says_no_token(const Event& event) {
  if (!event.value.is_object()) return false;
  const auto it = event.value.find("no_token");
  return it != event.value.end() && it->is_boolean() && it->get<bool>();
}

std::string grant_error(const Event& event, const GrantTokens& grants) {
  if (!grants.tokens) return "";
  if (*grants.tokens) {
    if (!event.token) {
      return "token: missing, but " + client_text(grants) +
             " issues fencing tokens (its row in the client table): its acquire ok carries the "
             "token the lock granted";
    }
    if (says_no_token(event)) {
      return "value.no_token: true, but " + client_text(grants) +
             " issues fencing tokens (its row in the client table)";
    }
    return "";
  }
  if (event.token) {
    return "token: " + std::to_string(*event.token) + ", but " + client_text(grants) +
           " issues no fencing tokens (its row in the client table): its acquire ok carries no "
           "token and value.no_token: true";
  }
  if (!says_no_token(event)) {
    return "value.no_token: missing or not true, but " + client_text(grants) +
           " issues no fencing tokens: its acquire ok says so with value.no_token: true";
  }
  return "";
}

}  // namespace

GrantTokens GrantTokens::of(std::string_view client, std::optional<bool> tokens_said) {
  GrantTokens grants{std::string(client), tokens_said};
  if (const ClientSpec* row = find_client(client); row != nullptr) {
    grants.tokens = row->fencing_tokens;
  }
  return grants;
}

bool is_lock_operation(std::string_view f) {
  return f == "acquire" || f == "extend" || f == "release" || f == "lost" || f == "lost-ignored";
}

std::string worker_event_error(const Event& event, const GrantTokens& grants) {
  if (is_lock_operation(event.f) && event.lock.empty()) {
    return "lock: missing (every " + event.f + " event names the lock it concerns)";
  }
  if (event.f == "acquire" && event.type == EventType::kOk) return grant_error(event, grants);
  return "";
}

}  // namespace locklab
