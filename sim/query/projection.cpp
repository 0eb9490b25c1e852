// Projection::apply, the executor of a parsed projection (projection_tree.h), as mongod's:
// included fields keep document order (_id among them); a computed field follows them in
// specification order, except under a path whose field the document has (then it takes that
// field's place). A computed field under a path whose value is missing or not a document (or,
// inside an array, an element that is not a document) gets a new document of the computed
// fields in its place ({"a.b": {$literal: 1}} makes {a: 1} and {} {a: {b: 1}}). Arrays, nested
// ones too, are projected element by element; an inclusion drops the scalars in them.
#include <optional>

#include "query/expression.h"
#include "query/projection_tree.h"
#include "query/query.h"

namespace mongosim::query {

namespace {

struct Applying {
  const Variables& vars;
};

Document include_in_document(const ProjTree& tree, const Document& in, const Applying& a);

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

// `v` under a projected sub-path; nullopt when the projection skips it (a scalar).
std::optional<Value> include_in_value(const ProjTree& tree, const Value& v, const Applying& a) {
  if (v.is_document()) return Value::document(include_in_document(tree, v.as_document(), a));
  if (!v.is_array()) return std::nullopt;
  Array out;
  for (const Value& element : v.as_array()) {
    if (std::optional<Value> r = include_in_value(tree, element, a)) {
      out.push_back(std::move(*r));
    } else if (tree.computed) {
      out.push_back(Value::document(computed_document(tree, a)));
    }
  }
  return Value::array(std::move(out));
}

// Included fields in document order (a skipped sub-path with computed fields holds its place),
// then the computed fields and the sub-paths the document lacked, in specification order.
Document include_in_document(const ProjTree& tree, const Document& in, const Applying& a) {
  Document out;
  for (const auto& [key, value] : in) {
    const ProjEntry* e = tree.find(key);
    if (e == nullptr) continue;
    if (e->kind == ProjEntry::Kind::kInclude) {
      out.append(key, value);
    } else if (e->kind == ProjEntry::Kind::kSub) {
      if (std::optional<Value> v = include_in_value(*e->sub, value, a)) {
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

void apply_exclusion(const ProjTree& tree, Document& doc);

void exclude_in_value(const ProjTree& tree, Value& v) {
  if (v.is_document()) {
    apply_exclusion(tree, v.mutable_document());
  } else if (v.is_array()) {
    for (Value& element : v.mutable_array()) exclude_in_value(tree, element);
  }
}

void apply_exclusion(const ProjTree& tree, Document& doc) {
  for (const auto& [key, e] : tree.entries) {
    if (e.kind == ProjEntry::Kind::kExclude) {
      doc.erase(key);
    } else if (e.kind == ProjEntry::Kind::kSub) {
      if (Value* v = doc.get_mutable(key)) exclude_in_value(*e.sub, *v);
    }
  }
}

}  // namespace

Document Projection::apply(const Document& doc, const EvalContext& ctx) const {
  if (impl_ == nullptr || impl_->empty) return doc;
  const Impl& im = *impl_;
  if (!im.inclusion) {
    Document out = doc;
    apply_exclusion(im.tree, out);
    return out;
  }
  const Variables vars{&doc, &ctx, {}};
  return include_in_document(im.tree, doc, Applying{vars});
}

}  // namespace mongosim::query
