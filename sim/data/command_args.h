// Parsing helpers for data-command arguments: typed field access that fails the way mongod's
// IDL parser does (TypeMismatch 14 "BSON field 'insert.ordered' is the wrong type ...",
// 40414 for a missing required field) and namespace validation (InvalidNamespace 73).
//
// Pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "bson/value.h"
#include "command/command.h"

namespace mongosim::data {

inline constexpr int32_t kMissingRequiredField =
    40414;  // IDL: "... is missing but a required field"

// The collection named by the command's first field ({insert: "c"}); 73 if it is not a string
// or not a valid collection name.
std::string collection_argument(const CommandContext& ctx);

// Throws InvalidNamespace (73) for a database or collection name mongod would refuse.
void validate_db_name(std::string_view db);
void validate_collection_name(std::string_view db, std::string_view coll);

// Optional typed fields; nullopt when absent (or null, which mongod treats as absent).
std::optional<bool> bool_field(const bson::Document& doc, std::string_view cmd,
                               std::string_view key);
std::optional<int64_t> int_field(const bson::Document& doc, std::string_view cmd,
                                 std::string_view key);
const bson::Document* document_field(const bson::Document& doc, std::string_view cmd,
                                     std::string_view key);
const bson::Array* array_field(const bson::Document& doc, std::string_view cmd,
                               std::string_view key);
const bson::Array& required_array_field(const bson::Document& doc, std::string_view cmd,
                                        std::string_view key);

// The error a wrong-typed field gets: "BSON field 'cmd.key' is the wrong type 'string',
// expected type 'array'".
CommandError wrong_type(std::string_view cmd, std::string_view key, const bson::Value& value,
                        std::string_view expected);

}  // namespace mongosim::data
