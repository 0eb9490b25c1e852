#include "data/command_args.h"

#include <string>

namespace mongosim::data {

namespace {

std::string field_path(std::string_view cmd, std::string_view key) {
  return std::string(cmd) + "." + std::string(key);
}

const bson::Value* present(const bson::Document& doc, std::string_view key) {
  const bson::Value* v = doc.get(key);
  if (v == nullptr || v->is_null() || v->type() == bson::Type::kUndefined) return nullptr;
  return v;
}

}  // namespace

CommandError wrong_type(std::string_view cmd, std::string_view key, const bson::Value& value,
                        std::string_view expected) {
  return CommandError(code::kTypeMismatch, "BSON field '" + field_path(cmd, key) +
                                               "' is the wrong type '" +
                                               std::string(bson::type_name(value.type())) +
                                               "', expected type" + std::string(expected));
}

void validate_db_name(std::string_view db) {
  constexpr size_t kMaxDbNameBytes = 64;
  bool bad = db.empty() || db.size() >= kMaxDbNameBytes;
  for (char c : db) {
    if (c == '/' || c == '\\' || c == '.' || c == ' ' || c == '"' || c == '$' || c == '\0') {
      bad = true;
    }
  }
  if (bad)
    throw CommandError(code::kInvalidNamespace, "Invalid database name: '" + std::string(db) + "'");
}

void validate_collection_name(std::string_view db, std::string_view coll) {
  // 255 bytes is mongod's limit on the full namespace "db.coll".
  constexpr size_t kMaxNamespaceBytes = 255;
  std::string ns = std::string(db) + "." + std::string(coll);
  bool bad = coll.empty() || ns.size() > kMaxNamespaceBytes || coll.front() == '.' ||
             coll.find('$') != std::string_view::npos ||
             coll.find('\0') != std::string_view::npos || coll.starts_with("system.");
  if (bad) throw CommandError(code::kInvalidNamespace, "Invalid namespace specified '" + ns + "'");
}

std::string collection_argument(const CommandContext& ctx) {
  validate_db_name(ctx.db);
  const bson::Value& v = ctx.body.at(0).second;
  if (!v.is_string()) {
    throw CommandError(code::kInvalidNamespace, "collection name has invalid type " +
                                                    std::string(bson::type_name(v.type())));
  }
  validate_collection_name(ctx.db, v.as_string());
  return v.as_string();
}

std::optional<bool> bool_field(const bson::Document& doc, std::string_view cmd,
                               std::string_view key) {
  const bson::Value* v = present(doc, key);
  if (v == nullptr) return std::nullopt;
  if (v->type() == bson::Type::kBool) return v->as_bool();
  if (v->is_number()) return v->truthy();
  throw wrong_type(cmd, key, *v, "s '[bool, long, int, decimal, double]'");
}

std::optional<int64_t> int_field(const bson::Document& doc, std::string_view cmd,
                                 std::string_view key) {
  const bson::Value* v = present(doc, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) throw wrong_type(cmd, key, *v, "s '[long, int, decimal, double]'");
  auto exact = v->number_as_exact_int64();
  if (!exact) {
    throw CommandError(code::kFailedToParse,
                       "Expected field " + std::string(key) + " to be an integral number");
  }
  return exact;
}

const bson::Document* document_field(const bson::Document& doc, std::string_view cmd,
                                     std::string_view key) {
  const bson::Value* v = present(doc, key);
  if (v == nullptr) return nullptr;
  if (!v->is_document()) throw wrong_type(cmd, key, *v, " 'object'");
  return &v->as_document();
}

const bson::Array* array_field(const bson::Document& doc, std::string_view cmd,
                               std::string_view key) {
  const bson::Value* v = present(doc, key);
  if (v == nullptr) return nullptr;
  if (!v->is_array()) throw wrong_type(cmd, key, *v, " 'array'");
  return &v->as_array();
}

const bson::Array& required_array_field(const bson::Document& doc, std::string_view cmd,
                                        std::string_view key) {
  const bson::Array* arr = array_field(doc, cmd, key);
  if (arr == nullptr) {
    throw CommandError(kMissingRequiredField,
                       "BSON field '" + field_path(cmd, key) + "' is missing but a required field");
  }
  return *arr;
}

}  // namespace mongosim::data
