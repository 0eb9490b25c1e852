// Per-document aggregation stages, shared by update pipelines (docs/mongodb-behaviour.md, Update
// pipelines) and run_pipeline: $addFields/$set, $project, $unset, $replaceRoot/$replaceWith.
// Internal.
#pragma once

#include <string_view>

#include "query/query.h"

namespace mongosim::query {

// True for the stages that map one document to one document.
bool is_document_stage(std::string_view name);

// Parse-time checks for such a stage (stage = {$name: spec}); throws CommandError.
void validate_document_stage(const Document& stage);

// Applies a validated document stage to doc (taken by value: a $set of top-level fields
// changes it in place).
Document apply_document_stage(const Document& stage, Document doc, const EvalContext& ctx);

// Checks the {$name: spec} shape every stage has and returns the name; throws CommandError.
const std::string& stage_name(const Value& stage);

// mongod's internalPipelineLengthLimit, for aggregation and update pipelines alike.
inline constexpr size_t kPipelineStagesMax = 1000;

// Throws 15 Overflow when a stage's output nests deeper than any BSON may
// (bson::kMaxNestingDepth): each stage may wrap what the last one built, and every recursive
// reader after it (encode, compare, destroy) would overflow the stack.
void refuse_deeper_than_bson(const Document& doc);

}  // namespace mongosim::query
