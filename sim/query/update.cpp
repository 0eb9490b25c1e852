// Update: the three shapes an update takes (replacement, operator document, pipeline) behind
// one parse/apply pair, plus the rule common to all of them: _id never changes.
#include <cassert>

#include "base/command_error.h"
#include "query/stages.h"
#include "query/type_order.h"
#include "query/update_operators.h"

namespace mongosim::query {

struct Update::Impl {
  Document replacement;
  OperatorUpdate operators;
  Array pipeline;
};

namespace {

// Update pipelines accept only these stages (docs/mongodb-behaviour.md, Update pipelines).
void validate_update_pipeline(const Array& stages) {
  if (stages.size() > kPipelineStagesMax) {
    throw CommandError(code::kFailedToParse, "Pipeline length must be no longer than 1000 stages");
  }
  for (const Value& stage : stages) {
    const std::string& name = stage_name(stage);
    if (!is_document_stage(name)) {
      throw CommandError(code::kInvalidOptions,
                         name + " is not allowed to be used within an update");
    }
    validate_document_stage(stage.as_document());
  }
}

void validate_replacement(const Document& u) {
  for (const auto& [key, v] : u) {
    if (!key.empty() && key[0] == '$') {
      throw CommandError(code::kDollarPrefixedFieldName,
                         "The dollar ($) prefixed field '" + key + "' in '" + key +
                             "' is not allowed in the context of an update's replacement "
                             "document. Consider using an aggregation pipeline with "
                             "$replaceWith.");
    }
  }
}

bool is_operator_update(const Document& u) {
  return !u.empty() && !u.first_key().empty() && u.first_key()[0] == '$';
}

// Operator updates name the path in the error; whole-document rewrites say what _id became.
void check_id_unchanged(const Document& before, const Document& after, bool operator_style) {
  const Value* old_id = before.get("_id");
  if (old_id == nullptr) return;
  const Value* new_id = after.get("_id");
  if (new_id != nullptr && new_id->identical(*old_id)) return;
  if (operator_style || new_id == nullptr) {
    throw CommandError(code::kImmutableField,
                       "Performing an update on the path '_id' would "
                       "modify the immutable field '_id'");
  }
  throw CommandError(code::kImmutableField,
                     "After applying the update, the (immutable) field '_id' was found to have "
                     "been altered to _id: " +
                         render(*new_id));
}

Document apply_replacement(const Document& replacement, const Document& doc) {
  Document out;
  if (const Value* id = doc.get("_id")) out.append("_id", *id);
  if (const Value* id = replacement.get("_id"); id != nullptr && !out.has("_id")) {
    out.append("_id", *id);
  }
  for (const auto& [key, v] : replacement) {
    if (key == "_id") {
      out.set("_id", v);  // checked against the original by check_id_unchanged
    } else {
      out.append(key, v);
    }
  }
  return out;
}

Document apply_pipeline(const Array& stages, const Document& doc, const EvalContext& ctx) {
  Document current = doc;
  for (const Value& stage : stages) {
    current = apply_document_stage(stage.as_document(), std::move(current), ctx);
    refuse_deeper_than_bson(current);
  }
  // A pipeline that drops _id keeps the original one, in front (docs/mongodb-behaviour.md, Update
  // pipelines).
  if (const Value* id = doc.get("_id"); id != nullptr && !current.has("_id")) {
    current.prepend("_id", *id);
  }
  return current;
}

}  // namespace

Update Update::parse(const Value& u, const std::optional<Array>& array_filters) {
  auto impl = std::make_shared<Impl>();
  Update update;
  if (u.is_array()) {
    if (array_filters) {
      throw CommandError(code::kFailedToParse, "Cannot specify arrayFilters and a pipeline update");
    }
    validate_update_pipeline(u.as_array());
    impl->pipeline = u.as_array();
    update.kind_ = Kind::kPipeline;
  } else if (!u.is_document()) {
    throw CommandError(code::kFailedToParse,
                       "Update argument must be either an object or an array");
  } else if (is_operator_update(u.as_document())) {
    impl->operators = parse_operator_update(u.as_document(), array_filters);
    update.kind_ = Kind::kOperators;
  } else {
    if (array_filters && !array_filters->empty()) {
      throw CommandError(code::kFailedToParse,
                         "arrayFilters may not be specified for a replacement-style update");
    }
    validate_replacement(u.as_document());
    impl->replacement = u.as_document();
    update.kind_ = Kind::kReplacement;
  }
  update.impl_ = std::move(impl);
  return update;
}

Document Update::apply(const Document& doc, bool is_upsert_insert, const EvalContext& ctx) const {
  assert(impl_ != nullptr && "Update used before parse()");
  Document out;
  switch (kind_) {
    case Kind::kReplacement:
      out = apply_replacement(impl_->replacement, doc);
      break;
    case Kind::kOperators:
      out = apply_operator_update(impl_->operators, doc, is_upsert_insert, ctx);
      break;
    case Kind::kPipeline:
      out = apply_pipeline(impl_->pipeline, doc, ctx);
      break;
  }
  check_id_unchanged(doc, out, kind_ == Kind::kOperators);
  return out;
}

}  // namespace mongosim::query
