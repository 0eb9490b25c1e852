// mongod's BSONObj::toString() shape for values quoted in error messages.
#include <cmath>
#include <cstdio>

#include "query/type_order.h"

namespace mongosim::query {

namespace {

// Error messages quote user documents; bound their size so a huge document cannot make a huge
// error reply.
constexpr size_t kRenderBytesMax = 1024;

std::string render_double(double d) {
  if (std::isnan(d)) return "nan.0";
  if (std::isinf(d)) return d > 0 ? "inf.0" : "-inf.0";
  char buf[64];
  if (d == std::trunc(d) && std::fabs(d) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.1f", d);
  } else {
    std::snprintf(buf, sizeof buf, "%.17g", d);
  }
  return buf;
}

void render_into(const Value& v, std::string& out);

void render_document_into(const Document& doc, std::string& out) {
  if (doc.empty()) {
    out += "{}";
    return;
  }
  out += "{ ";
  bool first = true;
  for (const auto& [key, value] : doc) {
    if (!first) out += ", ";
    first = false;
    out += key;
    out += ": ";
    render_into(value, out);
    if (out.size() > kRenderBytesMax) return;
  }
  out += " }";
}

void render_into(const Value& v, std::string& out) {
  using bson::Type;
  switch (v.type()) {
    case Type::kDouble:
      out += render_double(v.as_double());
      return;
    case Type::kInt32:
      out += std::to_string(v.as_int32());
      return;
    case Type::kInt64:
      out += std::to_string(v.as_int64());
      return;
    case Type::kDecimal128:
      out += render_double(v.number_as_double());
      return;
    case Type::kString:
    case Type::kSymbol:
      out += "\"" + v.as_string() + "\"";
      return;
    case Type::kJavaScript:
      out += v.as_string();
      return;
    case Type::kBool:
      out += v.as_bool() ? "true" : "false";
      return;
    case Type::kNull:
      out += "null";
      return;
    case Type::kUndefined:
      out += "undefined";
      return;
    case Type::kMinKey:
      out += "MinKey";
      return;
    case Type::kMaxKey:
      out += "MaxKey";
      return;
    case Type::kObjectId:
      out += "ObjectId('" + v.as_object_id().hex() + "')";
      return;
    case Type::kDateTime:
      out += "new Date(" + std::to_string(v.as_date_ms()) + ")";
      return;
    case Type::kTimestamp: {
      auto ts = v.as_timestamp();
      out += "Timestamp(" + std::to_string(ts.seconds) + ", " + std::to_string(ts.increment) + ")";
      return;
    }
    case Type::kRegex:
      out += "/" + v.regex_pattern() + "/" + v.regex_options();
      return;
    case Type::kDocument:
      render_document_into(v.as_document(), out);
      return;
    case Type::kArray: {
      const Array& arr = v.as_array();
      if (arr.empty()) {
        out += "[]";
        return;
      }
      out += "[ ";
      for (size_t i = 0; i < arr.size(); ++i) {
        if (i > 0) out += ", ";
        render_into(arr[i], out);
        if (out.size() > kRenderBytesMax) return;
      }
      out += " ]";
      return;
    }
    case Type::kBinary:
      out += "BinData(" + std::to_string(v.binary_subtype()) + ", ...)";
      return;
    default:
      out += std::string(bson::type_name(v.type()));
      return;
  }
}

}  // namespace

std::string render(const Value& value) {
  std::string out;
  render_into(value, out);
  return out;
}

std::string render(const Document& doc) {
  std::string out;
  render_document_into(doc, out);
  return out;
}

}  // namespace mongosim::query
