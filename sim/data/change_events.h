// Change events from oplog entries (docs/mongodb-behaviour.md, Change streams): what an entry
// means to a stream, in mongod's field order: {_id: <token>, operationType, clusterTime,
// wallTime, fullDocument?, ns?, documentKey?, updateDescription?, fullDocumentBeforeChange?}.
// An insert, update (or replace), delete of a watched collection gives one event; a drop of a
// watched collection gives "drop" and, for a collection stream, "invalidate"; a dropDatabase
// gives "dropDatabase" (and "invalidate" for a database stream); anything else gives none.
//
// Pure functions of their arguments; callers hold what the lookup needs (the data mutex).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bson/value.h"
#include "data/change_stream_spec.h"
#include "data/oplog.h"
#include "data/resume_token.h"

namespace mongosim::data {

struct ChangeEvent {
  ResumeToken token;
  bson::Document doc;
  bool invalidates = false;  // the stream ends after this event
};

// updateLookup: the document of db.coll with this _id as the stream reads it (majority
// committed), or nullopt.
using DocumentLookup = std::function<std::optional<bson::Document>(
    const std::string& db, const std::string& coll, const bson::Value& id)>;

// The events `entry` gives `spec`'s stream, oldest first (at most two). Throws CommandError
// NoMatchingDocument (47) for an update, replace or delete when the stream requires a post- or
// pre-image, which mongosim never has (no collection has changeStreamPreAndPostImages).
std::vector<ChangeEvent> events_for(const OplogEntry& entry, const ChangeStreamSpec& spec,
                                    const DocumentLookup& lookup);

}  // namespace mongosim::data
