// The request of a change stream (docs/mongodb-behaviour.md, Change streams): an aggregate whose
// first stage is {$changeStream: {...}}, parsed and validated in mongod's order, and the user's
// stages that follow it.
//
// Pure functions; no state.
#pragma once

#include <optional>
#include <string>

#include "bson/value.h"
#include "data/resume_token.h"
#include "query/query.h"

namespace mongosim::data {

enum class StreamScope { kCollection, kDatabase, kCluster };
enum class FullDocumentMode { kDefault, kUpdateLookup, kWhenAvailable, kRequired };
enum class BeforeChangeMode { kOff, kWhenAvailable, kRequired };

struct ChangeStreamSpec {
  StreamScope scope = StreamScope::kCollection;
  std::string db;
  std::string coll;  // empty unless scope is kCollection
  FullDocumentMode full_document = FullDocumentMode::kDefault;
  BeforeChangeMode before_change = BeforeChangeMode::kOff;
  // At most one of these three (40674, 50865).
  std::optional<ResumeToken> resume_after;
  std::optional<ResumeToken> start_after;
  std::optional<bson::Timestamp> start_at_operation_time;
  query::Pipeline stages;  // the user's stages after $changeStream, parsed

  // The namespace a cursor of this stream answers to: "db.coll", or "db.$cmd.aggregate" for a
  // database or cluster stream (what drivers send back in getMore).
  std::string cursor_ns() const;
  // Whether the collection db.coll is one this stream reports on.
  bool watches(const std::string& entry_db, const std::string& entry_coll) const;
  // Whether a command entry on database `entry_db` concerns this stream.
  bool watches_database(const std::string& entry_db) const;
};

// True when the pipeline's first stage is $changeStream.
bool is_change_stream_pipeline(const bson::Array& pipeline);

// Parses aggregate's `pipeline` on database `db`; `aggregate` is the command's first field (a
// collection name, or 1). `replica_set` is false on a standalone (40573). Throws CommandError with
// mongod's code and message: 50808, 40415, 14, 2 for the stage's fields; 72, 73 for where the
// stream may be opened; 50865, 40674, 260 and the token errors (resume_token.h) for the resume
// options; the stage errors of the user's stages, then 40602 for a second $changeStream and 20
// for a stage a change stream does not allow.
ChangeStreamSpec parse_change_stream(const std::string& db, const bson::Value& aggregate,
                                     const bson::Array& pipeline, bool replica_set);

}  // namespace mongosim::data
