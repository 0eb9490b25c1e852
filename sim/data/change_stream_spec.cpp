#include "data/change_stream_spec.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <string_view>

#include "base/command_error.h"
#include "base/error_codes.h"
#include "data/command_args.h"
#include "query/query.h"

namespace mongosim::data {

namespace {

constexpr const char* kStage = "$changeStream";
constexpr int32_t kStageNotADocument = 50808;
constexpr int32_t kOnlyReplicaSets = 40573;
constexpr int32_t kResumeAfterAndStartAfter = 50865;
constexpr int32_t kSeveralResumeOptions = 40674;
constexpr int32_t kInvalidResumeToken = 260;
constexpr int32_t kOnlyFirstStage = 40602;
// The stages mongod lets follow $changeStream (and mongosim's pipeline engine runs); $redact and
// $changeStreamSplitLargeEvent are allowed by mongod but not implemented here.
constexpr std::array<std::string_view, 7> kAllowedStages = {
    "$match", "$project", "$addFields", "$set", "$unset", "$replaceRoot", "$replaceWith"};

std::string field_path(std::string_view key) {
  return std::string(kStage) + "." + std::string(key);
}

CommandError wrong_type(std::string_view key, const bson::Value& v, const char* expected) {
  return CommandError(code::kTypeMismatch, "BSON field '" + field_path(key) +
                                               "' is the wrong type '" +
                                               std::string(bson::type_name(v.type())) +
                                               "', expected type '" + expected + "'");
}

template <typename Enum, size_t N>
Enum parse_enum(std::string_view key, const bson::Value& v,
                const std::array<std::pair<std::string_view, Enum>, N>& names) {
  if (!v.is_string()) throw wrong_type(key, v, "string");
  for (const auto& [name, value] : names) {
    if (name == v.as_string()) return value;
  }
  throw CommandError(code::kBadValue, "Enumeration value '" + v.as_string() + "' for field '" +
                                          field_path(key) + "' is not a valid value.");
}

bool parse_bool(std::string_view key, const bson::Value& v) {
  if (v.type() != bson::Type::kBool) throw wrong_type(key, v, "bool");
  return v.as_bool();
}

const bson::Document& token_document(std::string_view key, const bson::Value& v) {
  if (!v.is_document()) throw wrong_type(key, v, "object");
  // mongod checks _data's presence and type while parsing the stage, the rest later.
  const bson::Value* data = v.as_document().get("_data");
  if (data == nullptr || !data->is_string()) (void)parse_resume_token(v.as_document());
  return v.as_document();
}

// The fields of the stage's document, as mongod's IDL parser reads them (unknown fields refused,
// types checked), before any rule about where a stream may run.
struct RawOptions {
  std::optional<bson::Document> resume_after;
  std::optional<bson::Document> start_after;
  bool all_changes_for_cluster = false;
  bool allow_on_config = false;
  bool allow_on_system = false;
};

RawOptions parse_fields(const bson::Document& stage, ChangeStreamSpec& spec) {
  static constexpr std::array<std::pair<std::string_view, FullDocumentMode>, 4> kFullDocument = {
      {{"default", FullDocumentMode::kDefault},
       {"updateLookup", FullDocumentMode::kUpdateLookup},
       {"whenAvailable", FullDocumentMode::kWhenAvailable},
       {"required", FullDocumentMode::kRequired}}};
  static constexpr std::array<std::pair<std::string_view, BeforeChangeMode>, 3> kBefore = {
      {{"off", BeforeChangeMode::kOff},
       {"whenAvailable", BeforeChangeMode::kWhenAvailable},
       {"required", BeforeChangeMode::kRequired}}};
  RawOptions raw;
  for (const auto& [key, v] : stage) {
    if (key == "fullDocument") {
      spec.full_document = parse_enum(key, v, kFullDocument);
    } else if (key == "fullDocumentBeforeChange") {
      spec.before_change = parse_enum(key, v, kBefore);
    } else if (key == "resumeAfter") {
      raw.resume_after = token_document(key, v);
    } else if (key == "startAfter") {
      raw.start_after = token_document(key, v);
    } else if (key == "startAtOperationTime") {
      if (v.type() != bson::Type::kTimestamp) throw wrong_type(key, v, "timestamp");
      spec.start_at_operation_time = v.as_timestamp();
    } else if (key == "allChangesForCluster") {
      raw.all_changes_for_cluster = parse_bool(key, v);
    } else if (key == "allowToRunOnConfigDB") {
      raw.allow_on_config = parse_bool(key, v);
    } else if (key == "allowToRunOnSystemNS") {
      raw.allow_on_system = parse_bool(key, v);
    } else if (key == "showMigrationEvents" || key == "showSystemEvents") {
      (void)parse_bool(key, v);  // no migrations or system events on a replica set of mongosim
    } else if (key == "showExpandedEvents" || key == "showRawUpdateDescription") {
      if (parse_bool(key, v)) {
        throw CommandError(code::kInvalidOptions,
                           "mongosim does not support '" + field_path(key) + ": true'");
      }
    } else {
      throw CommandError(code::kUnknownField,
                         "BSON field '" + field_path(key) + "' is an unknown field.");
    }
  }
  return raw;
}

bool is_collectionless(const bson::Value& aggregate) {
  return aggregate.is_number() && aggregate.number_as_double() == 1.0;
}

// Where the stream may run (mongod's assertIsLegalSpecification, in its order).
void check_legal(ChangeStreamSpec& spec, const bson::Value& aggregate, const RawOptions& raw,
                 bool replica_set) {
  if (!replica_set) {
    throw CommandError(kOnlyReplicaSets,
                       "The $changeStream stage is only supported on replica sets");
  }
  const bool collectionless = is_collectionless(aggregate);
  std::string ns = collectionless          ? spec.db + ".$cmd.aggregate"
                   : aggregate.is_string() ? spec.db + "." + aggregate.as_string()
                                           : spec.db;
  if (raw.all_changes_for_cluster && !(spec.db == "admin" && collectionless)) {
    throw CommandError(code::kInvalidOptions,
                       "A $changeStream with 'allChangesForCluster:true' may only be opened on "
                       "the 'admin' database, and with no collection name; found " +
                           ns);
  }
  bool allowed_db = spec.db == "admin"
                        ? raw.all_changes_for_cluster
                        : spec.db != "local" && (spec.db != "config" || raw.allow_on_config);
  if (!allowed_db) {
    throw CommandError(code::kInvalidNamespace,
                       "$changeStream may not be opened on the internal " + spec.db + " database");
  }
  if (aggregate.is_string() && aggregate.as_string().starts_with("system.") &&
      !raw.allow_on_system) {
    throw CommandError(code::kInvalidNamespace,
                       "$changeStream may not be opened on the internal " + ns + " collection");
  }
  if (collectionless) {
    spec.scope = raw.all_changes_for_cluster ? StreamScope::kCluster : StreamScope::kDatabase;
  } else {
    CommandContext ctx;
    ctx.db = spec.db;
    ctx.body = bson::Document{{"aggregate", aggregate}};
    spec.coll = collection_argument(ctx);  // 73 for anything that is not a collection name
  }
}

void resolve_resume_options(ChangeStreamSpec& spec, const RawOptions& raw) {
  if (raw.resume_after && raw.start_after) {
    throw CommandError(kResumeAfterAndStartAfter,
                       "Do not specify both 'resumeAfter' and 'startAfter' in a $changeStream "
                       "stage");
  }
  if (raw.resume_after) spec.resume_after = parse_resume_token(*raw.resume_after);
  if (raw.start_after) spec.start_after = parse_resume_token(*raw.start_after);
  if (spec.start_at_operation_time && (spec.resume_after || spec.start_after)) {
    throw CommandError(kSeveralResumeOptions,
                       "Only one type of resume option is allowed, but multiple were found");
  }
  if (spec.resume_after && spec.resume_after->kind == ResumeToken::Kind::kInvalidate) {
    throw CommandError(kInvalidResumeToken,
                       "Attempting to resume a change stream using 'resumeAfter' is not allowed "
                       "from an invalidate notification");
  }
}

// The user's stages: each parsed as the pipeline engine parses it, then mongod's position and
// change-stream checks.
query::Pipeline user_stages(const bson::Array& pipeline) {
  bson::Array stages(pipeline.begin() + 1, pipeline.end());
  for (const bson::Value& stage : stages) {
    if (query::stage_name_of(stage) == kStage) {
      throw CommandError(kOnlyFirstStage,
                         "$changeStream is only valid as the first stage in a pipeline.");
    }
  }
  query::Pipeline parsed = query::Pipeline::parse(stages);
  for (const bson::Value& stage : stages) {
    std::string name = query::stage_name_of(stage);
    if (std::find(kAllowedStages.begin(), kAllowedStages.end(), name) == kAllowedStages.end()) {
      throw CommandError(code::kIllegalOperation,
                         name + " is not permitted in a $changeStream pipeline");
    }
  }
  return parsed;
}

}  // namespace

std::string ChangeStreamSpec::cursor_ns() const {
  return scope == StreamScope::kCollection ? db + "." + coll : db + ".$cmd.aggregate";
}

bool ChangeStreamSpec::watches(const std::string& entry_db, const std::string& entry_coll) const {
  switch (scope) {
    case StreamScope::kCollection:
      return entry_db == db && entry_coll == coll;
    case StreamScope::kDatabase:
      return entry_db == db && !entry_coll.starts_with("system.");
    case StreamScope::kCluster:
      return watches_database(entry_db) && !entry_coll.starts_with("system.");
  }
  return false;
}

bool ChangeStreamSpec::watches_database(const std::string& entry_db) const {
  if (scope != StreamScope::kCluster) return entry_db == db;
  return entry_db != "admin" && entry_db != "config" && entry_db != "local";
}

bool is_change_stream_pipeline(const bson::Array& pipeline) {
  return !pipeline.empty() && pipeline[0].is_document() && !pipeline[0].as_document().empty() &&
         pipeline[0].as_document().first_key() == kStage;
}

ChangeStreamSpec parse_change_stream(const std::string& db, const bson::Value& aggregate,
                                     const bson::Array& pipeline, bool replica_set) {
  assert(is_change_stream_pipeline(pipeline));
  (void)query::stage_name_of(pipeline[0]);  // exactly one field (40323)
  const bson::Value& stage = pipeline[0].as_document().at(0).second;
  if (!stage.is_document()) {
    throw CommandError(kStageNotADocument, "$changeStream stage expects a document as argument.");
  }
  ChangeStreamSpec spec;
  spec.db = db;
  RawOptions raw = parse_fields(stage.as_document(), spec);
  check_legal(spec, aggregate, raw, replica_set);
  resolve_resume_options(spec, raw);
  spec.stages = user_stages(pipeline);
  return spec;
}

}  // namespace mongosim::data
