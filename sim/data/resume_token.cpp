#include "data/resume_token.h"

#include <cctype>
#include <cstdio>

#include "base/command_error.h"
#include "base/error_codes.h"
#include "bson/codec.h"

namespace mongosim::data {

namespace {

constexpr const char* kTimestampTypeByte = "82";
constexpr const char* kMongosimMarker = "6D";
constexpr size_t kTimestampHexDigits = 16;
constexpr size_t kTokenHexDigits = 2 + kTimestampHexDigits + 2 + 2;
constexpr int32_t kBadTokenData = 40647;
constexpr int32_t kBadTokenTypeBits = 40648;
constexpr int32_t kEmptyToken = 40649;
constexpr uint8_t kBinDataGeneral = 0;

bool is_hex(const std::string& s) {
  if (s.size() % 2 != 0) return false;
  for (char c : s) {
    bool digit = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!digit) return false;
  }
  return true;
}

uint64_t hex_value(const std::string& s, size_t pos, size_t digits) {
  return std::stoull(s.substr(pos, digits), nullptr, 16);
}

// Whether the two hex digits at `pos` are `expected` (upper case), in either case.
bool same_hex(const std::string& s, size_t pos, const char* expected) {
  if (s.size() < pos + 2) return false;
  for (size_t k = 0; k < 2; ++k) {
    if (std::toupper(static_cast<unsigned char>(s[pos + k])) != expected[k]) return false;
  }
  return true;
}

}  // namespace

std::string ResumeToken::hex() const {
  char buf[kTokenHexDigits + 1];
  std::snprintf(buf, sizeof buf, "%s%08X%08X%s%02X", kTimestampTypeByte, ts.seconds, ts.increment,
                kMongosimMarker, static_cast<unsigned>(kind));
  return buf;
}

bson::Document ResumeToken::to_document() const {
  return bson::Document{{"_data", bson::V(hex())}};
}

ResumeToken parse_resume_token(const bson::Document& token) {
  const bson::Value* data = token.get("_data");
  if (data == nullptr || !data->is_string()) {
    throw CommandError(
        kBadTokenData,
        "Bad resume token: _data of missing or of wrong type. Expected string, got " +
            bson::to_json(token));
  }
  if (const bson::Value* bits = token.get("_typeBits");
      bits != nullptr &&
      (bits->type() != bson::Type::kBinary || bits->binary_subtype() != kBinDataGeneral)) {
    throw CommandError(kBadTokenTypeBits,
                       "Bad resume token: _typeBits of wrong type " + bson::to_json(token));
  }
  const std::string& hex = data->as_string();
  if (!is_hex(hex)) {
    throw CommandError(code::kFailedToParse, "resume token string was not a valid hex string");
  }
  if (hex.empty()) throw CommandError(kEmptyToken, "invalid empty resume token");
  bool shaped = hex.size() == kTokenHexDigits && same_hex(hex, 0, kTimestampTypeByte) &&
                same_hex(hex, 2 + kTimestampHexDigits, kMongosimMarker);
  uint64_t kind = shaped ? hex_value(hex, kTokenHexDigits - 2, 2) : 0;
  if (!shaped || kind < static_cast<uint64_t>(ResumeToken::Kind::kEvent) ||
      kind > static_cast<uint64_t>(ResumeToken::Kind::kHighWaterMark)) {
    throw CommandError(code::kFailedToParse,
                       "Bad resume token: '" + hex + "' is not a resume token of this server");
  }
  ResumeToken out;
  out.ts.seconds = static_cast<uint32_t>(hex_value(hex, 2, kTimestampHexDigits / 2));
  out.ts.increment =
      static_cast<uint32_t>(hex_value(hex, 2 + kTimestampHexDigits / 2, kTimestampHexDigits / 2));
  out.kind = static_cast<ResumeToken::Kind>(kind);
  return out;
}

}  // namespace mongosim::data
