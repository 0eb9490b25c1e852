#include "fuzz/bson_mutation.h"

#include <cmath>
#include <limits>
#include <string>

#include "bson/codec.h"
#include "bson/value.h"
#include "server/op_msg.h"
#include "server/wire.h"

namespace mongosim::fuzz {
namespace {

using bson::Document;
using bson::V;
using bson::Value;

// Where an OP_MSG's kind-0 body sits in the input.
struct BodyAt {
  size_t message = 0;  // offset of the message's header
  size_t length = 0;   // the message's length
  size_t body = 0;     // offset of the body document
  size_t body_length = 0;
};

std::vector<BodyAt> op_msg_bodies(const std::vector<uint8_t>& in) {
  std::vector<BodyAt> out;
  size_t at = 0;
  constexpr size_t kBodyOffset = server::kHeaderBytes + 4 + 1;  // flag bits, section kind
  while (in.size() - at >= kBodyOffset) {
    server::MessageHeader h = server::decode_header(in.data() + at);
    if (h.message_length < static_cast<int32_t>(kBodyOffset) ||
        static_cast<size_t>(h.message_length) > in.size() - at) {
      break;
    }
    const auto length = static_cast<size_t>(h.message_length);
    const size_t body = at + kBodyOffset;
    if (h.op_code == server::opcode::kMsg && in[body - 1] == 0) {
      const int32_t body_length = bson::peek_document_length(in.data() + body, at + length - body);
      if (body_length >= 5 && static_cast<size_t>(body_length) <= at + length - body)
        out.push_back({at, length, body, static_cast<size_t>(body_length)});
    }
    at += length;
  }
  return out;
}

// One value from a palette of boundary values, of every BSON type.
Value palette_value(std::mt19937_64& rng) {
  constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
  constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();
  const uint8_t zero_decimal[16] = {};
  switch (rng() % 24) {
    case 0:
      return V(int32_t{0});
    case 1:
      return V(int32_t{-1});
    case 2:
      return V(kI32Max);
    case 3:
      return V(std::numeric_limits<int32_t>::min());
    case 4:
      return V(int64_t{1});
    case 5:
      return V(kI64Max);
    case 6:
      return V(std::numeric_limits<int64_t>::min());
    case 7:
      return V(1.5);
    case 8:
      return V(std::nan(""));
    case 9:
      return V(1e300);
    case 10:
      return V(-0.0);
    case 11:
      return Value::decimal128(zero_decimal);
    case 12:
      return V("");
    case 13:
      return V("$x.y");
    case 14:
      return V(rng() % 2 == 0);
    case 15:
      return Value::null();
    case 16:
      return Value::undefined();
    case 17:
      return rng() % 2 == 0 ? Value::min_key() : Value::max_key();
    case 18:
      return Value::date(rng() % 2 == 0 ? 0 : kI64Max);
    case 19:
      return Value::timestamp({UINT32_MAX, UINT32_MAX});
    case 20:
      return Value::binary(4, std::string(16, '\x01'));
    case 21:
      return Value::regex("a", "i");
    case 22:
      return V(Document{{"$x", V(int32_t{1})}});
    default:
      return V(bson::Array{V(int32_t{1})});
  }
}

// A path to an element: at each level, the index of the field (document) or item (array).
using Path = std::vector<size_t>;

void collect_paths(const Value& v, Path& path, std::vector<Path>& out, int depth);

void collect_children(const Document& d, Path& path, std::vector<Path>& out, int depth) {
  for (size_t i = 0; i < d.size(); ++i) {
    path.push_back(i);
    out.push_back(path);
    collect_paths(d.at(i).second, path, out, depth + 1);
    path.pop_back();
  }
}

void collect_paths(const Value& v, Path& path, std::vector<Path>& out, int depth) {
  if (depth > kMaxEditDepth) return;
  if (v.is_document()) collect_children(v.as_document(), path, out, depth);
  if (!v.is_array()) return;
  const bson::Array& a = v.as_array();
  for (size_t i = 0; i < a.size(); ++i) {
    path.push_back(i);
    out.push_back(path);
    collect_paths(a[i], path, out, depth + 1);
    path.pop_back();
  }
}

// The element at `path` of `body` (a path collect_paths gave).
const Value& value_at(const Document& body, const Path& path) {
  const Value* v = &body.at(path[0]).second;
  for (size_t level = 1; level < path.size(); ++level)
    v = v->is_document() ? &v->as_document().at(path[level]).second : &v->as_array()[path[level]];
  return *v;
}

constexpr int kMaxDraws = 8;

// Replaces (or, with `remove`, removes) the element at `path` of `body`.
void edit_at(Document& body, const Path& path, bool remove, Value replacement) {
  Document* doc = &body;
  bson::Array* arr = nullptr;
  for (size_t level = 0; level + 1 < path.size(); ++level) {
    Value& child = doc != nullptr ? doc->at(path[level]).second : (*arr)[path[level]];
    doc = child.is_document() ? &child.mutable_document() : nullptr;
    arr = child.is_array() ? &child.mutable_array() : nullptr;
  }
  const size_t last = path.back();
  if (doc != nullptr && remove) {
    Document kept;
    for (size_t i = 0; i < doc->size(); ++i)
      if (i != last) kept.append(doc->at(i).first, doc->at(i).second);
    *doc = std::move(kept);
  } else if (doc != nullptr) {
    doc->at(last).second = std::move(replacement);
  } else if (remove) {
    arr->erase(arr->begin() + static_cast<std::ptrdiff_t>(last));
  } else {
    (*arr)[last] = std::move(replacement);
  }
}

}  // namespace

bool edit_one_element(std::vector<uint8_t>& in, std::mt19937_64& rng) {
  const std::vector<BodyAt> bodies = op_msg_bodies(in);
  if (bodies.empty()) return false;
  const BodyAt& at = bodies[rng() % bodies.size()];
  bson::DecodeResult decoded = bson::decode_document(in.data() + at.body, at.body_length);
  if (!decoded.doc) return false;
  Document body = std::move(*decoded.doc);
  std::vector<Path> paths;
  Path path;
  collect_children(body, path, paths, 1);
  if (paths.empty()) return false;
  const Path& target = paths[rng() % paths.size()];
  // Always a change: a palette value identical to the element's own is drawn again, and after a
  // few draws the element is removed instead.
  const Value& current = value_at(body, target);
  Value replacement = palette_value(rng);
  for (int draw = 0; draw < kMaxDraws && replacement.identical(current); ++draw)
    replacement = palette_value(rng);
  const bool remove = rng() % 8 == 0 || replacement.identical(current);
  edit_at(body, target, remove, std::move(replacement));

  uint32_t flags = server::read_u32_le(in.data() + at.message + server::kHeaderBytes);
  const bool checksum = (flags & server::op_msg_flag::kChecksumPresent) != 0;
  const size_t end = at.message + at.length - (checksum ? 4 : 0);
  const size_t rest_from = at.body + at.body_length;
  std::string message(reinterpret_cast<const char*>(in.data() + at.message), server::kHeaderBytes);
  server::append_u32_le(message, flags & ~server::op_msg_flag::kChecksumPresent);
  message.push_back('\0');
  bson::encode_document(body, message);
  if (rest_from < end)
    message.append(reinterpret_cast<const char*>(in.data() + rest_from), end - rest_from);
  std::string length;
  server::append_u32_le(length, static_cast<uint32_t>(message.size()));
  message.replace(0, 4, length);

  std::vector<uint8_t> out(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(at.message));
  out.insert(out.end(), message.begin(), message.end());
  out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(at.message + at.length), in.end());
  in = std::move(out);
  return true;
}

}  // namespace mongosim::fuzz
