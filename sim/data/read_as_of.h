// Reads as of an earlier optime, for readConcern "majority" and "snapshot"
// (docs/mongodb-behaviour.md, Read concern): mongod reads its storage engine's committed snapshot;
// mongosim keeps one version of each document, so it rebuilds a collection's documents as they were
// at the commit point by undoing, newest first, every later oplog entry on that namespace with the
// entry's pre-image. With both secondaries stopped, a local read on the primary then shows fresh
// writes while a majority read does not, as on mongod.
//
// Thread rules: callers hold Store::Impl::mu.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/optime.h"
#include "bson/value.h"
#include "data/store_impl.h"

namespace mongosim::data {

// The documents of db.coll as of `point`, in natural order (documents deleted after the point
// come back at the end). Throws CommandError 134 ReadConcernMajorityNotAvailableYet when the
// oplog no longer reaches back to `point` or an entry to undo has no pre-image.
std::vector<bson::Document> documents_as_of(Store::Impl& impl, const std::string& db,
                                            const std::string& coll, OpTime point);

// The document of db.coll with this _id as of `point` (a change stream's updateLookup), or
// nullopt when it did not exist then. Throws like documents_as_of.
std::optional<bson::Document> document_as_of(Store::Impl& impl, const std::string& db,
                                             const std::string& coll, const bson::Value& id,
                                             OpTime point);

}  // namespace mongosim::data
