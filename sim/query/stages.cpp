#include "query/stages.h"

#include <algorithm>
#include <vector>

#include "base/command_error.h"
#include "bson/codec.h"
#include "query/expression.h"
#include "query/path.h"
#include "query/type_order.h"

namespace mongosim::query {

namespace {

bool is_nested_spec(const Value& v) {
  return v.is_document() && !v.as_document().empty() && v.as_document().first_key()[0] != '$';
}

void add_fields_into(Document& out, const Document& spec, const Variables& vars);

// $addFields sets a (possibly dotted) path; arrays on the way get the field in each document
// element, and non-documents on the way are replaced by documents, as mongod does.
void set_field_path(Document& doc, const Path& path, size_t i, const Value& spec,
                    const Variables& vars);

void set_in_value(Value& v, const Path& path, size_t i, const Value& spec, const Variables& vars) {
  if (v.is_array()) {
    for (Value& element : v.mutable_array()) set_in_value(element, path, i, spec, vars);
    return;
  }
  if (!v.is_document()) v = Value::document({});
  set_field_path(v.mutable_document(), path, i, spec, vars);
}

// Sets the last component of a path: `key` in doc.
void set_field(Document& doc, const std::string& key, const Value& spec, const Variables& vars) {
  if (is_nested_spec(spec)) {
    // {$addFields: {a: {b: 1}}} merges into an existing sub-document a.
    Value* child = doc.get_mutable(key);
    if (child == nullptr || !child->is_document()) {
      doc.set(key, Value::document({}));
      child = doc.get_mutable(key);
    }
    add_fields_into(child->mutable_document(), spec.as_document(), vars);
    return;
  }
  Maybe v = eval_expression(spec, vars);
  if (v) {
    doc.set(key, std::move(*v));
  } else {
    doc.erase(key);  // $$REMOVE or a missing field
  }
}

void set_field_path(Document& doc, const Path& path, size_t i, const Value& spec,
                    const Variables& vars) {
  const std::string& key = path[i];
  if (i + 1 == path.size()) {
    set_field(doc, key, spec, vars);
    return;
  }
  Value* child = doc.get_mutable(key);
  if (child == nullptr) {
    doc.append(key, Value::document({}));
    child = doc.get_mutable(key);
  }
  set_in_value(*child, path, i + 1, spec, vars);
}

void add_fields_into(Document& out, const Document& spec, const Variables& vars) {
  for (const auto& [field, e] : spec) {
    // Most fields are not dotted: no split (a vector of components per field was a measurable
    // part of every pipeline update).
    if (field.find('.') == std::string::npos) {
      set_field(out, field, e, vars);
    } else {
      set_field_path(out, split_path(field), 0, e, vars);
    }
  }
}

// $addFields / $set: every expression sees the stage's input. When every field is a top-level
// name with an expression (the common case), the values are computed first and then set into
// the input itself; otherwise (a dotted path, a nested spec) the stage is applied to a copy.
// Either way no expression sees a field the stage set.
Document add_fields(Document doc, const Document& spec, const EvalContext& ctx) {
  const Variables vars{&doc, &ctx, {}};
  const bool top_level_only = std::none_of(spec.begin(), spec.end(), [](const auto& field) {
    return field.first.find('.') != std::string::npos || is_nested_spec(field.second);
  });
  if (!top_level_only) {
    Document out = doc;
    add_fields_into(out, spec, vars);
    return out;
  }
  std::vector<Maybe> values;
  values.reserve(spec.size());
  for (const auto& [field, e] : spec) values.push_back(eval_expression(e, vars));
  size_t i = 0;
  for (const auto& [field, e] : spec) {
    Maybe& v = values[i++];
    if (v) {
      doc.set(field, std::move(*v));
    } else {
      doc.erase(field);  // $$REMOVE or a missing field
    }
  }
  return doc;
}

void validate_field_name(const std::string& field) {
  if (field.empty()) throw CommandError(40352, "FieldPath cannot be constructed with empty string");
  if (field[0] == '$') {
    throw CommandError(16410,
                       "FieldPath field names may not start with '$'. Consider using "
                       "$getField or $setField.");
  }
  for (const std::string& part : split_path(field)) {
    if (part.empty()) throw CommandError(15998, "FieldPath field names may not be empty strings.");
  }
}

void validate_add_fields(const Value& spec, std::string_view name) {
  if (!spec.is_document()) {
    throw CommandError(40272, std::string(name) + " specification stage must be an object, got " +
                                  std::string(bson::type_name(spec.type())));
  }
  for (const auto& [field, e] : spec.as_document()) {
    validate_field_name(field);
    if (is_nested_spec(e)) {
      validate_add_fields(e, name);
    } else {
      validate_expression(e);
    }
  }
}

Document unset_as_projection(const Value& spec) {
  Document projection;
  auto add = [&](const Value& f) {
    if (!f.is_string()) {
      throw CommandError(31120,
                         "$unset specification must be a string or an array containing "
                         "only string values");
    }
    validate_field_name(f.as_string());
    projection.append(f.as_string(), Value::int32(0));
  };
  if (spec.is_array()) {
    if (spec.as_array().empty()) {
      throw CommandError(31119,
                         "$unset specification must be a string or an array with at least "
                         "one field");
    }
    for (const Value& f : spec.as_array()) add(f);
  } else {
    add(spec);
  }
  return projection;
}

const Value& new_root_expression(const std::string& name, const Value& spec) {
  if (name == "$replaceWith") return spec;
  if (!spec.is_document()) {
    throw CommandError(40228, "the $replaceRoot stage specification must be an object, but found " +
                                  std::string(bson::type_name(spec.type())) + " instead");
  }
  const Value* root = spec.as_document().get("newRoot");
  if (root == nullptr) throw CommandError(40231, "no newRoot specified for the $replaceRoot stage");
  return *root;
}

Document replace_root(const Value& expr, const Document& doc, const EvalContext& ctx) {
  Variables vars{&doc, &ctx, {}};
  Maybe v = eval_expression(expr, vars);
  if (!v || !v->is_document()) {
    std::string shown = v ? render(*v) : "MISSING";
    std::string type = v ? std::string(bson::type_name(v->type())) : "missing";
    throw CommandError(40228,
                       "'replacement document' must evaluate to an object, but resulting "
                       "value was: " +
                           shown + ". Type of resulting value: '" + type +
                           "'. Input document: " + render(doc));
  }
  return v->as_document();
}

}  // namespace

bool is_document_stage(std::string_view name) {
  return name == "$addFields" || name == "$set" || name == "$project" || name == "$unset" ||
         name == "$replaceRoot" || name == "$replaceWith";
}

const std::string& stage_name(const Value& stage) {
  if (!stage.is_document()) {
    throw CommandError(code::kTypeMismatch,
                       "Each element of the 'pipeline' array must be an object");
  }
  if (stage.as_document().size() != 1) {
    throw CommandError(40323,
                       "A pipeline stage specification object must contain exactly one "
                       "field.");
  }
  return stage.as_document().first_key();
}

void validate_document_stage(const Document& stage) {
  const auto& [name, spec] = stage.at(0);
  if (name == "$addFields" || name == "$set") {
    validate_add_fields(spec, name);
  } else if (name == "$project") {
    if (!spec.is_document()) {
      throw CommandError(15969, "$project specification must be an object");
    }
    if (spec.as_document().empty()) {
      throw CommandError(51272, "projection specification must have at least one field");
    }
    (void)Projection::parse(spec.as_document(), Projection::Of::kPipeline);
  } else if (name == "$unset") {
    // Parsed now, so that a collision ({$unset: ["a", "a.b"]}) fails before any document.
    (void)Projection::parse(unset_as_projection(spec), Projection::Of::kPipeline);
  } else {
    validate_expression(new_root_expression(name, spec));
  }
}

void refuse_deeper_than_bson(const Document& doc) {
  if (bson::deeper_than(doc, bson::kMaxNestingDepth)) {
    throw CommandError(code::kOverflow, "a stage's document nests deeper than " +
                                            std::to_string(bson::kMaxNestingDepth) + " levels");
  }
}

Document apply_document_stage(const Document& stage, Document doc, const EvalContext& ctx) {
  const auto& [name, spec] = stage.at(0);
  if (name == "$addFields" || name == "$set")
    return add_fields(std::move(doc), spec.as_document(), ctx);
  if (name == "$project") {
    return Projection::parse(spec.as_document(), Projection::Of::kPipeline).apply(doc, ctx);
  }
  if (name == "$unset") {
    return Projection::parse(unset_as_projection(spec), Projection::Of::kPipeline).apply(doc, ctx);
  }
  return replace_root(new_root_expression(name, spec), doc, ctx);
}

}  // namespace mongosim::query
