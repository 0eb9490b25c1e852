// The updateDescription of a change stream's update event, computed from the document before
// and after the update (docs/mongodb-behaviour.md, Change streams). mongod logs an update as a
// delta (its oplog's $v: 2 diff) and a change stream renders that delta; mongosim's oplog keeps
// whole documents, so it computes the delta here the way mongod's document diff does for
// pipeline updates: fields compared in order, sub-documents and arrays of the same type diffed
// recursively, a reordered field re-inserted at its new place, a shortened array reported as
// truncated, and (for pipeline updates only) a sub-diff bigger than the value it describes
// replaced by the value, and a whole diff bigger than the document turning the update into a
// replacement.
//
// Pure functions; no state.
#pragma once

#include <optional>

#include "query/query.h"

namespace mongosim::query {

struct UpdateDescription {
  Document updated_fields;  // {"a.b": value, ...}: changed or added fields and array elements
  Array removed_fields;     // ["a.c", ...]
  Array truncated_arrays;   // [{field: "a.d", newSize: n}, ...]

  // {updatedFields, removedFields, truncatedArrays}, the event's field.
  Document to_document() const;
};

// An operator update ($set, $inc, ...): the full diff, however big (mongod always logs these as
// a delta). Where mongod's delta names a whole sub-document or array that an operator replaced
// ($set of an object, $pull, $pop), this names the changed leaves.
UpdateDescription describe_operator_update(const Document& pre, const Document& post);

// A pipeline update: nullopt when mongod would log a replacement instead of a delta (the diff
// is not smaller than the new document, counting the delta entry's overhead), so the change
// stream reports a "replace" event.
std::optional<UpdateDescription> describe_pipeline_update(const Document& pre,
                                                          const Document& post);

}  // namespace mongosim::query
