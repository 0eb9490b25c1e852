#include "mongolock/provider.h"

#include "commands.h"
#include "context.h"
#include "mongolock/errors.h"
#include "validation.h"

namespace mongolock {

namespace {

using std::chrono::system_clock;

system_clock::time_point from_ms(int64_t ms) {
  return system_clock::time_point(std::chrono::milliseconds(ms));
}

Owner parse_owner(const bson_t& doc, const char* prefix) {
  const std::string base(prefix);
  Owner owner;
  owner.host = detail::find_utf8(doc, (base + ".host").c_str()).value_or("");
  owner.pid = detail::find_int64(doc, (base + ".pid").c_str()).value_or(0);
  owner.description = detail::find_utf8(doc, (base + ".description").c_str()).value_or("");
  return owner;
}

HoldInfo parse_hold(const bson_t& doc, const char* id_field, int64_t now_ms) {
  HoldInfo hold;
  hold.acquisition_id = detail::find_utf8(doc, id_field).value_or("");
  hold.owner = parse_owner(doc, "owner");
  hold.acquired_at = from_ms(detail::find_date_ms(doc, "acquiredAt").value_or(0));
  const int64_t expires_ms = detail::find_date_ms(doc, "expiresAt").value_or(0);
  hold.expires_at = from_ms(expires_ms);
  hold.fencing_token = detail::find_int64(doc, "token").value_or(0);
  hold.live = expires_ms > now_ms;
  return hold;
}

void parse_shared(const bson_t& doc, int64_t now_ms, std::vector<HoldInfo>& out) {
  detail::for_each_document(doc, "shared", [&](const bson_t& entry) {
    out.push_back(parse_hold(entry, "id", now_ms));
    return true;
  });
}

LockInfo parse_info(const bson_t& doc, std::string_view name) {
  LockInfo info;
  info.name = std::string(name);
  const int64_t now_ms = detail::find_date_ms(doc, "_now").value_or(0);
  info.server_now = from_ms(now_ms);
  info.last_token = detail::find_int64(doc, "token").value_or(0);
  if (!detail::find_is_null_or_missing(doc, "holder")) {
    info.exclusive = parse_hold(doc, "holder", now_ms);
  }
  parse_shared(doc, now_ms, info.shared);
  return info;
}

[[noreturn]] void throw_reply_error(const std::string& what, const detail::Reply& reply) {
  if (reply.outcome == detail::Outcome::kRefused) {
    throw ServerError("mongolock: " + what + " refused: " + reply.message, reply.domain,
                      reply.code);
  }
  throw Error("mongolock: " + what + " failed: " + reply.message);
}

std::optional<LockInfo> inspect_in(detail::Context& context, const std::string& collection,
                                   std::string_view name) {
  detail::check_lock_name(name);
  detail::Reply reply = context.read(*detail::inspect_command(collection, name));
  if (reply.outcome != detail::Outcome::kOk) {
    throw_reply_error("inspect of '" + std::string(name) + "'", reply);
  }
  std::optional<detail::Bson> doc = detail::find_document(*reply.doc, "cursor.firstBatch.0");
  if (!doc) return std::nullopt;
  return parse_info(**doc, name);
}

bool force_release_in(detail::Context& context, const std::string& collection,
                      std::string_view name, bool rw) {
  detail::check_lock_name(name);
  detail::Reply reply = context.write(*detail::force_release_command(collection, name, rw));
  if (reply.outcome != detail::Outcome::kOk) {
    throw_reply_error("force_release of '" + std::string(name) + "'", reply);
  }
  std::optional<detail::Bson> before = detail::find_document(*reply.doc, "value");
  if (!before) return false;
  const bool had_exclusive = !detail::find_is_null_or_missing(**before, "holder");
  const bool had_shared = detail::find_document(**before, "shared.0").has_value();
  return had_exclusive || had_shared;
}

}  // namespace

Provider::Provider(const std::string& uri, std::string database, Options options)
    : context_(std::make_shared<detail::Context>(uri, std::move(database), std::move(options))) {}

Provider::Provider(mongoc_client_pool_t* borrowed_pool, std::string database, Options options)
    : context_(std::make_shared<detail::Context>(borrowed_pool, std::move(database),
                                                 std::move(options))) {}

Provider::~Provider() = default;

Lock Provider::create_lock(std::string name) const {
  return Lock(context_, std::move(name));
}

RwLock Provider::create_rw_lock(std::string name, int32_t max_shared) const {
  return RwLock(context_, std::move(name), max_shared);
}

std::optional<LockInfo> Provider::inspect(std::string_view name) const {
  return inspect_in(*context_, context_->options().collection, name);
}

std::optional<LockInfo> Provider::inspect_rw(std::string_view name) const {
  return inspect_in(*context_, context_->options().rw_collection, name);
}

bool Provider::force_release(std::string_view name) const {
  return force_release_in(*context_, context_->options().collection, name, false);
}

bool Provider::force_release_rw(std::string_view name) const {
  return force_release_in(*context_, context_->options().rw_collection, name, true);
}

const Options& Provider::options() const {
  return context_->options();
}

}  // namespace mongolock
