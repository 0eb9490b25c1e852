// Projection::parse: a find/findAndModify projection or a pipeline's $project into a ProjTree
// (projection_tree.h), with mongod 7.0's rules and error codes, element by element:
//   - a name ending ".$" is positional: refused in a pipeline (31324); in find refused with an
//     exclusion (31395), a literal (31308), an object (31271), as ".$" alone (5392900) or twice
//     (31276), and otherwise checked like an inclusion of its path and, once the whole
//     specification is, refused as NotImplemented (mongosim has no positional projection).
//     ".$." anywhere: 31394;
//   - an object is a sub-projection ({a: {b: 1}} is {"a.b": 1}; empty: 51270) unless it has one
//     field and that field starts with '$' (other than a DBRef field, $id/$ref/$db): then it is
//     find's $slice/$elemMatch/$meta (not supported) or an expression (one mongosim does not
//     know: 31325);
//   - a boolean or number includes or excludes; anything else is a computed literal;
//   - inclusion and exclusion do not mix (31253, 31254), nor computed fields and exclusion
//     (31252, 31310), except that the top-level _id may be either; paths collide at a leaf
//     (31250) or past one (31249); names are field paths (40352, 40353, 15998, 16410, 16411).
// _id is included in an inclusion projection unless a top-level "_id" or "_id.<path>" names it.
#include <string>
#include <string_view>

#include "base/command_error.h"
#include "query/expression.h"
#include "query/path.h"
#include "query/projection_tree.h"
#include "query/query.h"
#include "query/type_order.h"

namespace mongosim::query {
namespace {

enum class Mode { kUnknown, kInclusion, kExclusion };

struct ParseState {
  Projection::Of of = Projection::Of::kFind;
  Mode mode = Mode::kUnknown;
  bool positional = false;  // a find's "a.$": parsed and checked, then refused (not supported)
  bool id_specified = false;
  bool id_included_entirely = false;
  bool id_excluded_entirely = false;
};

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// The $-prefixed names a field path may hold (a DBRef's fields).
bool is_dbref_field(std::string_view part) {
  return part == "$id" || part == "$ref" || part == "$db";
}

// mongod's FieldPath rules for a projected name (one or more dotted components).
void check_field_path(const std::string& name) {
  if (name.empty()) throw CommandError(40352, "FieldPath cannot be constructed with empty string");
  if (name.back() == '.') throw CommandError(40353, "FieldPath must not end with a '.'.");
  for (const std::string& part : split_path(name)) {
    if (part.empty()) throw CommandError(15998, "FieldPath field names may not be empty strings.");
    if (part[0] == '$' && !is_dbref_field(part)) {
      throw CommandError(16410,
                         "FieldPath field names may not start with '$'. Consider using "
                         "$getField or $setField.");
    }
    if (part.find('\0') != std::string::npos) {
      throw CommandError(16411, "FieldPath field names may not contain '\\0'.");
    }
  }
}

// Adds `leaf` at `path` (components already checked). A leaf already there collides (31250), as
// does a path that runs through one (31249, naming the path after its first component).
void add_node(ProjTree& root, const std::string& path, ProjEntry leaf) {
  const Path parts = split_path(path);
  const bool computed = leaf.kind == ProjEntry::Kind::kCompute;
  ProjTree* tree = &root;
  root.computed = root.computed || computed;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    ProjEntry* e = tree->find(parts[i]);
    if (e == nullptr) {
      ProjEntry sub{ProjEntry::Kind::kSub, Value(), std::make_shared<ProjTree>()};
      tree->entries.emplace_back(parts[i], std::move(sub));
      e = &tree->entries.back().second;
    } else if (e->kind != ProjEntry::Kind::kSub) {
      throw CommandError(31249, "Path collision at " + path + " remaining portion " +
                                    path.substr(parts.front().size() + 1));
    }
    tree = e->sub.get();
    tree->computed = tree->computed || computed;
  }
  if (tree->find(parts.back()) != nullptr) throw CommandError(31250, "Path collision at " + path);
  tree->entries.emplace_back(parts.back(), std::move(leaf));
}

void set_mode(ParseState& st, Mode wanted, const std::string& name) {
  if (st.mode != Mode::kUnknown && st.mode != wanted) {
    if (wanted == Mode::kExclusion) {
      throw CommandError(31254,
                         "Cannot do exclusion on field " + name + " in inclusion projection");
    }
    throw CommandError(31253, "Cannot do inclusion on field " + name + " in exclusion projection");
  }
  st.mode = wanted;
}

void add_computed(ParseState& st, ProjTree& root, const std::string& path, const Value& expr) {
  add_node(root, path, ProjEntry{ProjEntry::Kind::kCompute, expr, nullptr});
  st.mode = Mode::kInclusion;
}

void parse_element(ParseState& st, ProjTree& root, const std::string& prefix,
                   const std::string& name, const Value& value, bool top_level);

// {name: {$op: ...}}: find's operators (not supported), or an expression.
void parse_operator_object(ParseState& st, ProjTree& root, const std::string& path,
                           const Value& value) {
  const std::string& op = value.as_document().first_key();
  if (op == "$meta" || (st.of == Projection::Of::kFind && (op == "$slice" || op == "$elemMatch"))) {
    throw CommandError(code::kNotImplemented, "projection operator " + op + " on field " + path +
                                                  " is not supported by mongosim");
  }
  if (st.of == Projection::Of::kPipeline && op == "$elemMatch") {
    throw CommandError(code::kInvalidPipelineOperator, "Cannot use $elemMatch in this context");
  }
  if (!is_expression_name(op)) throw CommandError(31325, "Unknown expression " + op);
  if (st.mode == Mode::kExclusion) {
    throw CommandError(31252, "Cannot use expression other than $meta in exclusion projection");
  }
  validate_expression(value);
  add_computed(st, root, path, value);
}

void parse_sub_object(ParseState& st, ProjTree& root, const std::string& prefix,
                      const std::string& name, const Document& obj) {
  if (obj.empty()) {
    throw CommandError(51270,
                       "An empty sub-projection is not a valid value. Found empty object at path");
  }
  check_field_path(name);
  const std::string path = prefix + name;
  // One $-field: an operator, unless it is a field name a path may hold ({a: {$ref: 1}}).
  if (obj.size() == 1 && obj.first_key()[0] == '$' && !is_dbref_field(obj.first_key())) {
    parse_operator_object(st, root, path, Value::document(obj));
    return;
  }
  for (const auto& [child, v] : obj) parse_element(st, root, path + ".", child, v, false);
}

// A positional inclusion ("a.$": 1), after the checks every element gets: checked as mongod
// checks one and recorded as an inclusion of its path; parse() refuses it once the whole
// specification has been checked.
void add_positional_inclusion(ParseState& st, ProjTree& root, const std::string& prefix,
                              const std::string& name) {
  if (st.positional) {
    throw CommandError(31276, "Cannot specify more than one positional projection per query.");
  }
  if (name == ".$") throw CommandError(5392900, "Projection on field .$ is invalid");
  const std::string path = name.substr(0, name.size() - 2);
  check_field_path(path);
  add_node(root, prefix + path, ProjEntry{ProjEntry::Kind::kInclude, Value(), nullptr});
  st.positional = true;
  set_mode(st, Mode::kInclusion, prefix + name);
}

void parse_flag(ParseState& st, ProjTree& root, const std::string& prefix, const std::string& name,
                bool include, bool positional, bool top_level) {
  const bool top_level_id = top_level && name == "_id";
  if (include && positional) {
    add_positional_inclusion(st, root, prefix, name);
    return;
  }
  if (include) {
    check_field_path(name);
    add_node(root, prefix + name, ProjEntry{ProjEntry::Kind::kInclude, Value(), nullptr});
    if (top_level_id) {
      st.id_included_entirely = true;
    } else {
      set_mode(st, Mode::kInclusion, prefix + name);
    }
    return;
  }
  if (positional) throw CommandError(31395, "positional projection cannot be used with exclusion");
  check_field_path(name);
  add_node(root, prefix + name, ProjEntry{ProjEntry::Kind::kExclude, Value(), nullptr});
  if (top_level_id) {
    st.id_excluded_entirely = true;
  } else {
    set_mode(st, Mode::kExclusion, prefix + name);
  }
}

void parse_element(ParseState& st, ProjTree& root, const std::string& prefix,
                   const std::string& name, const Value& value, bool top_level) {
  const bool positional = ends_with(name, ".$");
  if (positional && st.of == Projection::Of::kPipeline) {
    throw CommandError(31324, "Cannot use positional projection in aggregation projection");
  }
  if (name.find(".$.") != std::string::npos) {
    throw CommandError(31394,
                       "As of 4.4, it's illegal to specify positional operator in the middle of a "
                       "path.Positional projection may only be used at the end, for example: "
                       "a.b.$. If the query previously used a form like a.b.$.d, remove the parts "
                       "following the '$' and the results will be equivalent.");
  }
  if (value.is_document()) {
    if (positional) {
      throw CommandError(31271,
                         "positional projection cannot be used with an expression or sub object");
    }
    parse_sub_object(st, root, prefix, name, value.as_document());
  } else if (value.type() == bson::Type::kBool || value.is_number()) {
    parse_flag(st, root, prefix, name, value.truthy(), positional, top_level);
  } else {
    if (positional)
      throw CommandError(31308, "positional projection cannot be used with a literal");
    validate_expression(value);
    check_field_path(name);
    add_node(root, prefix + name, ProjEntry{ProjEntry::Kind::kCompute, value, nullptr});
    if (st.mode == Mode::kExclusion) {
      throw CommandError(31310, "Cannot use an expression " + name + ": " + render(value) +
                                    " in an exclusion projection");
    }
    st.mode = Mode::kInclusion;
  }
}

// Removes the root entry named `name` (the exclusion projection's {_id: 1}: it changes nothing).
void erase_entry(ProjTree& root, const std::string& name) {
  std::erase_if(root.entries, [&](const auto& entry) { return entry.first == name; });
}

}  // namespace

Projection Projection::parse(const Document& spec, Of of) {
  auto impl = std::make_shared<Impl>();
  ParseState st;
  st.of = of;
  for (const auto& [name, value] : spec) {
    st.id_specified = st.id_specified || name == "_id" || name.starts_with("_id.");
    parse_element(st, impl->tree, "", name, value, true);
  }
  if (st.positional) {
    throw CommandError(code::kNotImplemented, "positional projection is not supported by mongosim");
  }
  impl->empty = spec.empty();
  // Without an inclusion or exclusion elsewhere, {_id: 1} makes an inclusion projection; {_id: 0}
  // or nothing an exclusion one.
  impl->inclusion =
      st.mode == Mode::kInclusion || (st.mode == Mode::kUnknown && st.id_included_entirely);
  if (impl->inclusion && !st.id_specified) {
    impl->tree.entries.emplace_back("_id", ProjEntry{ProjEntry::Kind::kInclude, Value(), nullptr});
  }
  if (!impl->inclusion && st.id_included_entirely) erase_entry(impl->tree, "_id");
  Projection p;
  p.impl_ = std::move(impl);
  return p;
}

}  // namespace mongosim::query
