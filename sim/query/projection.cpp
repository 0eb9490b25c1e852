// find/findAndModify projections and the $project stage: inclusion ({a: 1}), exclusion
// ({a: 0}), _id included unless excluded, and computed fields ({a: "$b"}, {a: {$literal: 1}})
// which make a projection an inclusion one. Included fields keep document order; a computed
// field follows them in specification order, except under a path whose field the document has
// (then it takes that field's place). As mongod: a computed field under a path whose value is
// missing or not a document (or, inside an array, an element that is not a document) gets a new
// document of the computed fields in its place ({"a.b": {$literal: 1}} makes {a: 1} and {}
// {a: {b: 1}}); a find projection leaves arrays nested in arrays alone (an inclusion drops them,
// an exclusion keeps them whole), a pipeline's applies to their elements too.
#include <cassert>
#include <map>
#include <optional>

#include "base/command_error.h"
#include "query/expression.h"
#include "query/path.h"
#include "query/query.h"
#include "query/type_order.h"

namespace mongosim::query {

namespace {

struct ProjTree;

struct ProjEntry {
  enum class Kind { kInclude, kExclude, kCompute, kSub };
  Kind kind = Kind::kInclude;
  Value expr;                     // kCompute
  std::shared_ptr<ProjTree> sub;  // kSub
};

struct ProjTree {
  std::vector<std::pair<std::string, ProjEntry>> entries;  // specification order
  bool computed = false;  // a computed field is at or below this tree

  ProjEntry* find(const std::string& name) {
    for (auto& [k, e] : entries) {
      if (k == name) return &e;
    }
    return nullptr;
  }
  const ProjEntry* find(const std::string& name) const {
    return const_cast<ProjTree*>(this)->find(name);
  }
};

struct Applying {
  const Variables& vars;
  bool recurse_nested_arrays = true;  // a pipeline's projection; find's leaves them alone
};

Document include_in_document(const ProjTree& tree, const Document& in, const Applying& a,
                             Document out = {});

// Only the computed fields of `tree`, in specification order: what replaces a value that has no
// fields to include.
Document computed_document(const ProjTree& tree, const Applying& a) {
  Document out;
  for (const auto& [key, e] : tree.entries) {
    if (e.kind == ProjEntry::Kind::kCompute) {
      if (Maybe v = eval_expression(e.expr, a.vars)) out.set(key, std::move(*v));
    } else if (e.kind == ProjEntry::Kind::kSub && e.sub->computed) {
      out.set(key, Value::document(computed_document(*e.sub, a)));
    }
  }
  return out;
}

// `v` under a projected sub-path; nullopt when the projection skips it (a scalar; a nested
// array, for find).
std::optional<Value> include_in_value(const ProjTree& tree, const Value& v, const Applying& a,
                                      bool in_array) {
  if (v.is_document()) return Value::document(include_in_document(tree, v.as_document(), a));
  if (!v.is_array() || (in_array && !a.recurse_nested_arrays)) return std::nullopt;
  Array out;
  for (const Value& element : v.as_array()) {
    if (std::optional<Value> r = include_in_value(tree, element, a, true)) {
      out.push_back(std::move(*r));
    } else if (tree.computed) {
      out.push_back(Value::document(computed_document(tree, a)));
    }
  }
  return Value::array(std::move(out));
}

// Included fields in document order (a skipped sub-path with computed fields holds its place),
// then the computed fields and the sub-paths the document lacked, in specification order; after
// what `out` already holds.
Document include_in_document(const ProjTree& tree, const Document& in, const Applying& a,
                             Document out) {
  for (const auto& [key, value] : in) {
    const ProjEntry* e = tree.find(key);
    if (e == nullptr) continue;
    if (e->kind == ProjEntry::Kind::kInclude) {
      out.append(key, value);
    } else if (e->kind == ProjEntry::Kind::kSub) {
      if (std::optional<Value> v = include_in_value(*e->sub, value, a, false)) {
        out.append(key, std::move(*v));
      } else if (e->sub->computed) {
        out.append(key, Value::document(computed_document(*e->sub, a)));
      }
    }
  }
  for (const auto& [key, e] : tree.entries) {
    if (e.kind == ProjEntry::Kind::kCompute) {
      if (Maybe v = eval_expression(e.expr, a.vars)) {
        out.set(key, std::move(*v));
      } else {
        out.erase(key);
      }
    } else if (e.kind == ProjEntry::Kind::kSub && e.sub->computed && out.get(key) == nullptr) {
      out.append(key, Value::document(computed_document(*e.sub, a)));
    }
  }
  return out;
}

void apply_exclusion(const ProjTree& tree, Document& doc, bool recurse_nested_arrays);

void exclude_in_value(const ProjTree& tree, Value& v, bool recurse_nested_arrays, bool in_array) {
  if (v.is_document()) {
    apply_exclusion(tree, v.mutable_document(), recurse_nested_arrays);
  } else if (v.is_array() && (!in_array || recurse_nested_arrays)) {
    for (Value& element : v.mutable_array()) {
      exclude_in_value(tree, element, recurse_nested_arrays, true);
    }
  }
}

void apply_exclusion(const ProjTree& tree, Document& doc, bool recurse_nested_arrays) {
  for (const auto& [key, e] : tree.entries) {
    if (e.kind == ProjEntry::Kind::kExclude) {
      doc.erase(key);
    } else if (e.kind == ProjEntry::Kind::kSub) {
      if (Value* v = doc.get_mutable(key)) {
        exclude_in_value(*e.sub, *v, recurse_nested_arrays, false);
      }
    }
  }
}

}  // namespace

struct Projection::Impl {
  ProjTree tree;
  Projection::Of of = Projection::Of::kFind;
  bool inclusion = false;
  bool empty = true;
  bool exclude_id = false;
  bool id_explicitly_included = false;
};

namespace {

enum class Mode { kUnknown, kInclusion, kExclusion };

[[noreturn]] void collision(const std::string& path, const std::string& rest) {
  throw CommandError(31250, "Path collision at " + path + " remaining portion " + rest);
}

void add_path(ProjTree& root, const std::string& field, ProjEntry leaf) {
  Path parts = split_path(field);
  ProjTree* tree = &root;
  const bool computed = leaf.kind == ProjEntry::Kind::kCompute;
  root.computed = root.computed || computed;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    ProjEntry* e = tree->find(parts[i]);
    if (e == nullptr) {
      ProjEntry sub;
      sub.kind = ProjEntry::Kind::kSub;
      sub.sub = std::make_shared<ProjTree>();
      tree->entries.emplace_back(parts[i], sub);
      e = &tree->entries.back().second;
    } else if (e->kind != ProjEntry::Kind::kSub) {
      collision(field, join_path(Path(parts.begin() + static_cast<long>(i) + 1, parts.end()),
                                 parts.size() - i - 1));
    }
    tree = e->sub.get();
    tree->computed = tree->computed || computed;
  }
  if (tree->find(parts.back()) != nullptr) collision(field, parts.back());
  tree->entries.emplace_back(parts.back(), std::move(leaf));
}

// A positional path ("a.$", whatever its value): mongod's errors where it refuses one, and
// NotImplemented where it would apply it (find's, at a path's end: mongosim has no positional
// projection).
void refuse_positional(const std::string& field, Projection::Of of) {
  const bool in_middle = field.find(".$.") != std::string::npos;
  const bool at_end = field.size() >= 2 && field.compare(field.size() - 2, 2, ".$") == 0;
  if (!in_middle && !at_end) return;  // "a.$b" names a field
  if (of == Projection::Of::kPipeline) {
    throw CommandError(31324, "Cannot use positional projection in aggregation projection");
  }
  if (in_middle) {
    throw CommandError(31394,
                       "As of 4.4, it's illegal to specify positional operator in the middle of a "
                       "path.Positional projection may only be used at the end, for example: "
                       "a.b.$. If the query previously used a form like a.b.$.d, remove the parts "
                       "following the '$' and the results will be equivalent.");
  }
  throw CommandError(code::kNotImplemented, "positional projection is not supported by mongosim");
}

// Classifies one specification value. Booleans and numbers include/exclude; everything else is
// an expression (a computed field), except the find-only operators mongosim does not support.
ProjEntry classify(const std::string& field, const Value& v, Projection::Of of) {
  refuse_positional(field, of);
  ProjEntry e;
  if (v.type() == bson::Type::kBool || v.is_number()) {
    e.kind = v.truthy() ? ProjEntry::Kind::kInclude : ProjEntry::Kind::kExclude;
    return e;
  }
  if (of == Projection::Of::kFind && v.is_document() && !v.as_document().empty()) {
    const std::string& op = v.as_document().first_key();
    if (op == "$slice" || op == "$elemMatch" || op == "$meta") {
      throw CommandError(code::kNotImplemented, "projection operator " + op + " on field " + field +
                                                    " is not supported by mongosim");
    }
  }
  validate_expression(v);
  e.kind = ProjEntry::Kind::kCompute;
  e.expr = v;
  return e;
}

void check_mode(Mode& mode, ProjEntry::Kind kind, const std::string& field) {
  Mode wanted = kind == ProjEntry::Kind::kExclude ? Mode::kExclusion : Mode::kInclusion;
  if (mode == Mode::kUnknown) {
    mode = wanted;
  } else if (mode != wanted) {
    if (wanted == Mode::kExclusion) {
      throw CommandError(31254,
                         "Cannot do exclusion on field " + field + " in inclusion projection");
    }
    throw CommandError(31253, "Cannot do inclusion on field " + field + " in exclusion projection");
  }
}

}  // namespace

namespace {

// A sub-projection ({a: {b: 1}} is {"a.b": 1}): a non-empty object whose first field is not an
// operator or expression.
bool is_sub_projection(const Value& v) {
  return v.is_document() && !v.as_document().empty() && v.as_document().first_key()[0] != '$';
}

// Adds the fields of `spec` (a sub-projection's, under `prefix`) to the projection.
void add_spec(Projection::Impl& impl, Mode& mode, const Document& spec, const std::string& prefix,
              Projection::Of of) {
  for (const auto& [name, value] : spec) {
    if (name.empty())
      throw CommandError(code::kBadValue, "FieldPath cannot be constructed with empty string");
    if (name[0] == '$') {
      throw CommandError(16410,
                         "FieldPath field names may not start with '$'. Consider using "
                         "$getField or $setField.");
    }
    const std::string field = prefix + name;
    if (is_sub_projection(value)) {
      add_spec(impl, mode, value.as_document(), field + ".", of);
      continue;
    }
    if (value.is_document() && value.as_document().empty()) {
      throw CommandError(51270,
                         "An empty sub-projection is not a valid value. Found empty object at "
                         "path " +
                             field);
    }
    ProjEntry e = classify(field, value, of);
    if (field == "_id" && e.kind != ProjEntry::Kind::kCompute) {
      impl.exclude_id = e.kind == ProjEntry::Kind::kExclude;
      impl.id_explicitly_included = !impl.exclude_id;
      continue;
    }
    check_mode(mode, e.kind, field);
    add_path(impl.tree, field, std::move(e));
  }
}

}  // namespace

Projection Projection::parse(const Document& spec, Of of) {
  auto impl = std::make_shared<Impl>();
  impl->of = of;
  Mode mode = Mode::kUnknown;
  add_spec(*impl, mode, spec, "", of);
  impl->empty = spec.empty();
  // {_id: 0} alone is an exclusion projection; {_id: 1} alone an inclusion one.
  impl->inclusion =
      mode == Mode::kInclusion || (mode == Mode::kUnknown && impl->id_explicitly_included);
  Projection p;
  p.impl_ = std::move(impl);
  return p;
}

Document Projection::apply(const Document& doc, const EvalContext& ctx) const {
  if (impl_ == nullptr || impl_->empty) return doc;
  const Impl& im = *impl_;
  const bool recurse_nested_arrays = im.of == Of::kPipeline;
  if (!im.inclusion) {
    Document out = doc;
    apply_exclusion(im.tree, out, recurse_nested_arrays);
    if (im.exclude_id) out.erase("_id");
    return out;
  }
  Variables vars{&doc, &ctx, {}};
  Document out;
  if (!im.exclude_id) {
    const Value* id = doc.get("_id");
    if (id != nullptr && im.tree.find("_id") == nullptr) out.append("_id", *id);
  }
  return include_in_document(im.tree, doc, {vars, recurse_nested_arrays}, std::move(out));
}

}  // namespace mongosim::query
