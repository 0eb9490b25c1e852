// find/findAndModify projections and the $project stage: inclusion ({a: 1}), exclusion
// ({a: 0}), _id included unless excluded, and computed fields ({a: "$b"}, {a: {$literal: 1}})
// which make a projection an inclusion one. Included fields keep document order; computed
// fields follow in specification order.
#include <cassert>
#include <map>

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

void apply_inclusion(const ProjTree& tree, const Document& in, Document& out,
                     const Variables& vars);
void apply_exclusion(const ProjTree& tree, Document& doc);

Value include_in_value(const ProjTree& tree, const Value& v, const Variables& vars, bool* keep) {
  *keep = true;
  if (v.is_document()) {
    Document out;
    apply_inclusion(tree, v.as_document(), out, vars);
    return Value::document(std::move(out));
  }
  if (v.is_array()) {
    Array out;
    for (const Value& element : v.as_array()) {
      bool k = false;
      Value r = include_in_value(tree, element, vars, &k);
      if (k) out.push_back(std::move(r));
    }
    return Value::array(std::move(out));
  }
  *keep = false;  // scalars under a projected sub-path disappear
  return v;
}

void apply_inclusion(const ProjTree& tree, const Document& in, Document& out,
                     const Variables& vars) {
  for (const auto& [key, value] : in) {
    const ProjEntry* e = tree.find(key);
    if (e == nullptr) continue;
    if (e->kind == ProjEntry::Kind::kInclude) {
      out.append(key, value);
    } else if (e->kind == ProjEntry::Kind::kSub) {
      bool keep = false;
      Value v = include_in_value(*e->sub, value, vars, &keep);
      if (keep) out.append(key, std::move(v));
    }
  }
  for (const auto& [key, e] : tree.entries) {
    if (e.kind != ProjEntry::Kind::kCompute) continue;
    Maybe v = eval_expression(e.expr, vars);
    if (v) {
      out.set(key, std::move(*v));
    } else {
      out.erase(key);
    }
  }
}

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

struct Projection::Impl {
  ProjTree tree;
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
  }
  if (tree->find(parts.back()) != nullptr) collision(field, parts.back());
  tree->entries.emplace_back(parts.back(), std::move(leaf));
}

// Classifies one specification value. Booleans and numbers include/exclude; everything else is
// an expression (a computed field), except the find-only operators mongosim does not support.
ProjEntry classify(const std::string& field, const Value& v, Projection::Of of) {
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
  if (field.size() >= 2 && field.compare(field.size() - 2, 2, ".$") == 0) {
    throw CommandError(code::kNotImplemented, "positional projection is not supported by mongosim");
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

Projection Projection::parse(const Document& spec, Of of) {
  auto impl = std::make_shared<Impl>();
  Mode mode = Mode::kUnknown;
  for (const auto& [field, value] : spec) {
    if (field.empty())
      throw CommandError(code::kBadValue, "FieldPath cannot be constructed with empty string");
    if (field[0] == '$') {
      throw CommandError(16410,
                         "FieldPath field names may not start with '$'. Consider using "
                         "$getField or $setField.");
    }
    ProjEntry e = classify(field, value, of);
    if (field == "_id" && e.kind != ProjEntry::Kind::kCompute) {
      impl->exclude_id = e.kind == ProjEntry::Kind::kExclude;
      impl->id_explicitly_included = !impl->exclude_id;
      continue;
    }
    check_mode(mode, e.kind, field);
    add_path(impl->tree, field, std::move(e));
  }
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
  if (!im.inclusion) {
    Document out = doc;
    apply_exclusion(im.tree, out);
    if (im.exclude_id) out.erase("_id");
    return out;
  }
  Variables vars{&doc, &ctx, {}};
  Document out;
  if (!im.exclude_id) {
    const Value* id = doc.get("_id");
    if (id != nullptr && im.tree.find("_id") == nullptr) out.append("_id", *id);
  }
  apply_inclusion(im.tree, doc, out, vars);
  return out;
}

}  // namespace mongosim::query
