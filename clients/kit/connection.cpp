#include "connection.h"

#include <cassert>
#include <stdexcept>

namespace locklab::clients {
namespace {

constexpr int kWriteConcernFailed = 64;

using mongolock::bson::Bson;
using mongolock::bson::BsonReply;

Bson to_bson(const Json& json) {
  const std::string text = json.dump();
  bson_error_t error;
  Bson doc(bson_new_from_json(reinterpret_cast<const uint8_t*>(text.data()),
                              static_cast<ssize_t>(text.size()), &error));
  // Every command is built by this program: a JSON it cannot convert is a bug here.
  if (!doc) throw std::logic_error("command is not valid extended JSON: " + text);
  return doc;
}

Json to_json(const bson_t* doc) {
  size_t length = 0;
  char* text = bson_as_relaxed_extended_json(doc, &length);
  if (text == nullptr) return nullptr;
  Json json = Json::parse(std::string(text, length), nullptr, false);
  bson_free(text);
  return json.is_discarded() ? Json(nullptr) : json;
}

Reply::Outcome classify(const bson_error_t& error) {
  switch (error.domain) {
    case MONGOC_ERROR_SERVER_SELECTION:
      return Reply::Outcome::kNotSent;
    case MONGOC_ERROR_SERVER:
      return error.code == kWriteConcernFailed ? Reply::Outcome::kUnknown
                                               : Reply::Outcome::kRefused;
    case MONGOC_ERROR_COMMAND:
    case MONGOC_ERROR_BSON:
      return Reply::Outcome::kRefused;
    default:
      return Reply::Outcome::kUnknown;  // stream, protocol, write concern: may have run
  }
}

// ok:1 can still carry writeErrors (refused) or a writeConcernError (unknown).
void check_write_reply(Reply& reply) {
  if (!reply.doc.is_object()) return;
  const auto errors = reply.doc.find("writeErrors");
  if (errors != reply.doc.end() && errors->is_array() && !errors->empty()) {
    reply.outcome = Reply::Outcome::kRefused;
    reply.code = (*errors)[0].value("code", 0);
    reply.message = (*errors)[0].value("errmsg", std::string("write error"));
    return;
  }
  const auto wce = reply.doc.find("writeConcernError");
  if (wce != reply.doc.end() && wce->is_object()) {
    reply.outcome = Reply::Outcome::kUnknown;
    reply.code = wce->value("code", 0);
    reply.message = wce->value("errmsg", std::string("write concern error"));
  }
}

}  // namespace

Json at_path(const Json& doc, std::initializer_list<const char*> keys) {
  const Json* at = &doc;
  for (const char* key : keys) {
    if (!at->is_object()) return nullptr;
    const auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return *at;
}

Json json_date_ms(int64_t ms_since_epoch) {
  return Json{{"$date", Json{{"$numberLong", std::to_string(ms_since_epoch)}}}};
}

Json json_int64(int64_t value) {
  return Json{{"$numberLong", std::to_string(value)}};
}

Connection::Connection(const std::string& uri, std::string database, int write_concern_w)
    : database_(std::move(database)) {
  bson_error_t error;
  mongoc_uri_t* parsed = mongoc_uri_new_with_error(uri.c_str(), &error);
  if (parsed == nullptr) throw std::runtime_error("bad --uri '" + uri + "': " + error.message);
  client_ = mongoc_client_new_from_uri(parsed);
  mongoc_uri_destroy(parsed);
  if (client_ == nullptr) throw std::runtime_error("cannot make a client for --uri " + uri);
  mongoc_client_set_error_api(client_, MONGOC_ERROR_API_VERSION_2);
  write_opts_ = Bson(write_concern_w == 0
                         ? BCON_NEW("writeConcern", "{", "w", BCON_UTF8("majority"), "}")
                         : BCON_NEW("writeConcern", "{", "w", BCON_INT32(write_concern_w), "}"));
}

Connection::~Connection() {
  mongoc_client_destroy(client_);
}

Reply Connection::write(const Json& command) {
  return run(command, true);
}

Reply Connection::read(const Json& command) {
  return run(command, false);
}

Reply Connection::run(const Json& command, bool is_write) {
  assert(command.is_object() && !command.empty());
  const Bson cmd = to_bson(command);
  BsonReply raw;
  bson_error_t error;
  const bool ok = is_write
                      ? mongoc_client_write_command_with_opts(client_, database_.c_str(), cmd.get(),
                                                              write_opts_.get(), raw.out(), &error)
                      : mongoc_client_read_command_with_opts(client_, database_.c_str(), cmd.get(),
                                                             nullptr, nullptr, raw.out(), &error);
  Reply reply;
  reply.doc = to_json(raw.get());
  if (ok) {
    reply.outcome = Reply::Outcome::kOk;
    if (is_write) check_write_reply(reply);
    return reply;
  }
  reply.outcome = classify(error);
  reply.code = static_cast<int>(error.code);
  reply.message = error.message;
  return reply;
}

}  // namespace locklab::clients
