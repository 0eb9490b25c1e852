#include "server/op_query.h"

#include "base/error_codes.h"
#include "bson/codec.h"
#include "server/wire.h"

namespace mongosim::server {

namespace {

// Reads a NUL-terminated string at pos within [pos, end); advances pos past the NUL.
std::optional<std::string> read_cstring(const uint8_t* base, size_t& pos, size_t end) {
  size_t nul = pos;
  while (nul < end && base[nul] != 0) ++nul;
  if (nul == end) return std::nullopt;
  std::string out(reinterpret_cast<const char*>(base + pos), nul - pos);
  pos = nul + 1;
  return out;
}

// mongos-style wrapping: {$query: {...}, $readPreference: {...}} (also "query").
bson::Document unwrap_query(bson::Document query) {
  if (query.empty()) return query;
  const std::string& first = query.first_key();
  if (first != "$query" && first != "query") return query;
  const bson::Value* inner = query.get(first);
  if (!inner->is_document()) return query;
  return inner->as_document();
}

}  // namespace

OpQueryParse parse_op_query(const uint8_t* message, size_t size) {
  OpQueryParse out;
  size_t pos = kHeaderBytes;
  if (size < pos + 4) {
    out.error = "OP_QUERY is too short for its flags";
    return out;
  }
  OpQueryRequest request;
  request.flags = read_i32_le(message + pos);
  pos += 4;
  auto ns = read_cstring(message, pos, size);
  if (!ns) {
    out.error = "OP_QUERY fullCollectionName is not terminated";
    return out;
  }
  if (size - pos < 8) {
    out.error = "OP_QUERY is truncated before numberToSkip/numberToReturn";
    return out;
  }
  pos += 8;
  int32_t length = bson::peek_document_length(message + pos, size - pos);
  if (length < 5 || static_cast<size_t>(length) > size - pos) {
    out.error = "OP_QUERY query document at offset " + std::to_string(pos) + " declares length " +
                std::to_string(length) + " but " + std::to_string(size - pos) + " bytes remain";
    return out;
  }
  bson::DecodeResult decoded = bson::decode_document(message + pos, static_cast<size_t>(length));
  if (!decoded.doc) {
    out.error = "OP_QUERY query document: " + decoded.error;
    return out;
  }
  size_t dot = ns->find('.');
  request.db = ns->substr(0, dot);
  request.command_namespace = dot != std::string::npos && ns->substr(dot + 1) == "$cmd";
  request.full_collection_name = std::move(*ns);
  request.command = unwrap_query(std::move(*decoded.doc));
  out.request = std::move(request);
  return out;
}

bool op_query_command_allowed(std::string_view name) {
  return name == "hello" || name == "isMaster" || name == "ismaster" || name == "buildinfo" ||
         name == "buildInfo";
}

bson::Document unsupported_op_query_reply(std::string_view command_name) {
  std::string errmsg = "Unsupported OP_QUERY command: " + std::string(command_name) +
                       ". The client driver may require an upgrade. For more details see "
                       "https://dochub.mongodb.org/core/legacy-opcode-removal";
  return bson::Document{
      {"ok", bson::V(0.0)},
      {"errmsg", bson::V(std::move(errmsg))},
      {"code", bson::V(code::kUnsupportedOpQueryCommand)},
      {"codeName", bson::V(std::string(code_name(code::kUnsupportedOpQueryCommand)))}};
}

std::string encode_op_reply(int32_t request_id, int32_t response_to, const bson::Document& doc) {
  std::string payload;
  append_i32_le(payload, kOpReplyAwaitCapable);
  append_i64_le(payload, 0);  // cursorID
  append_i32_le(payload, 0);  // startingFrom
  append_i32_le(payload, 1);  // numberReturned: libmongoc insists on exactly 1
  bson::encode_document(doc, payload);
  return frame_message(request_id, response_to, opcode::kReply, payload);
}

std::string encode_op_query(int32_t request_id, int32_t flags, const std::string& collection,
                            const bson::Document& query) {
  std::string payload;
  append_i32_le(payload, flags);
  payload += collection;
  payload.push_back('\0');
  append_i32_le(payload, 0);   // numberToSkip
  append_i32_le(payload, -1);  // numberToReturn, as drivers send for commands
  bson::encode_document(query, payload);
  return frame_message(request_id, 0, opcode::kQuery, payload);
}

}  // namespace mongosim::server
