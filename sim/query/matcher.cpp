// The query language (docs/mongodb-behaviour.md, Filters): a filter is parsed once into a tree of
// nodes, then evaluated against documents. Leaf predicates see every value the query walk finds at
// their path (path.h), which gives MongoDB's implicit array semantics.
#include <cassert>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "base/command_error.h"
#include "query/expression.h"
#include "query/path.h"
#include "query/query.h"
#include "query/regex.h"
#include "query/supported.h"
#include "query/type_order.h"

namespace mongosim::query {

namespace {

constexpr int kFilterDepthMax = 100;  // mongod's limit on nested $and/$or/$elemMatch

[[noreturn]] void bad_value(const std::string& message) {
  throw CommandError(code::kBadValue, message);
}

enum class Op {
  kEq,
  kNe,
  kLt,
  kLte,
  kGt,
  kGte,
  kIn,
  kNin,
  kExists,
  kType,
  kSize,
  kAll,
  kElemMatchObject,
  kElemMatchValue,
  kNot,
  kRegex,
  kMod,
};

struct Predicate {
  Op op = Op::kEq;
  Value operand;
  std::vector<Predicate> sub;                   // $not, $elemMatch (value form), $all of $elemMatch
  std::shared_ptr<const Matcher::Node> object;  // $elemMatch (object form)
  std::shared_ptr<const Regex> regex;           // $regex, or a regex operand of $eq-by-value
  std::vector<std::shared_ptr<const Regex>> in_regexes;       // regexes inside $in/$nin
  std::vector<bson::Type> types;                              // $type
  bool type_number = false;                                   // $type: "number"
};

}  // namespace

struct Matcher::Node {
  enum class Kind { kAnd, kOr, kNor, kExpr, kPath, kTrue, kFalse };
  Kind kind = Kind::kAnd;
  std::vector<std::shared_ptr<const Node>> children;
  Path path;
  std::vector<Predicate> predicates;  // kPath: all must hold
  Value expr;                         // kExpr
};

namespace {

using NodePtr = std::shared_ptr<const Matcher::Node>;
using Node = Matcher::Node;

struct ParseState {
  bool uses_expr = false;
  // The field whose operators are being parsed ("" inside $elemMatch's value form, as mongod's
  // parseElemMatch has it): the path an operator's error message names.
  std::string path;
};

NodePtr parse_document(const Document& filter, ParseState& st, int depth);
void parse_operator(const std::string& name, const Value& arg, const Document& whole,
                    std::vector<Predicate>& out, ParseState& st, int depth);

// ---- parsing ----

std::shared_ptr<const Regex> compile_regex(const std::string& pattern, const std::string& options) {
  return std::make_shared<const Regex>(pattern, options);
}

bool is_operator_document(const Value& v) {
  return v.is_document() && !v.as_document().empty() && v.as_document().first_key()[0] == '$';
}

bool is_field_operator(std::string_view name) {
  return listed(kFieldOperators, name);
}

Predicate equality(const Value& operand) {
  Predicate p;
  p.op = Op::kEq;
  p.operand = operand;
  if (operand.type() == bson::Type::kRegex) {
    // {a: /x/} matches strings by the regex (and regexes equal to it).
    p.op = Op::kRegex;
    p.regex = compile_regex(operand.regex_pattern(), operand.regex_options());
  }
  return p;
}

std::optional<bson::Type> type_by_alias(const std::string& alias) {
  using bson::Type;
  static const std::pair<std::string_view, Type> kAliases[] = {
      {"double", Type::kDouble},
      {"string", Type::kString},
      {"object", Type::kDocument},
      {"array", Type::kArray},
      {"binData", Type::kBinary},
      {"undefined", Type::kUndefined},
      {"objectId", Type::kObjectId},
      {"bool", Type::kBool},
      {"date", Type::kDateTime},
      {"null", Type::kNull},
      {"regex", Type::kRegex},
      {"dbPointer", Type::kDbPointer},
      {"javascript", Type::kJavaScript},
      {"symbol", Type::kSymbol},
      {"javascriptWithScope", Type::kJavaScriptWithScope},
      {"int", Type::kInt32},
      {"timestamp", Type::kTimestamp},
      {"long", Type::kInt64},
      {"decimal", Type::kDecimal128},
      {"minKey", Type::kMinKey},
      {"maxKey", Type::kMaxKey}};
  for (const auto& [name, type] : kAliases) {
    if (name == alias) return type;
  }
  return std::nullopt;
}

void add_type(Predicate& p, const Value& t) {
  if (t.is_string()) {
    if (t.as_string() == "number") {
      p.type_number = true;
      return;
    }
    auto type = type_by_alias(t.as_string());
    if (!type) bad_value("Unknown type name alias: " + t.as_string());
    p.types.push_back(*type);
    return;
  }
  if (t.is_number()) {
    auto n = t.number_as_exact_int64();
    bool valid = n && ((*n >= 1 && *n <= 19) || *n == -1 || *n == 127);
    if (!valid) bad_value("Invalid numerical type code: " + render(t));
    p.types.push_back(*n == -1 ? bson::Type::kMinKey : static_cast<bson::Type>(*n));
    return;
  }
  throw CommandError(code::kTypeMismatch, "type must be represented as a number or a string");
}

Predicate parse_in(Op op, const Value& arg) {
  if (!arg.is_array()) bad_value(std::string(op == Op::kIn ? "$in" : "$nin") + " needs an array");
  Predicate p;
  p.op = op;
  p.operand = arg;
  for (const Value& v : arg.as_array()) {
    if (is_operator_document(v)) bad_value("cannot nest $ under $in");
    if (v.type() == bson::Type::kRegex) {
      p.in_regexes.push_back(compile_regex(v.regex_pattern(), v.regex_options()));
    }
  }
  return p;
}

Predicate parse_size(const Value& arg) {
  if (!arg.is_number()) bad_value("$size needs a number");
  auto n = arg.number_as_exact_int64();
  if (!n) bad_value("$size must be a whole number");
  if (*n < 0) bad_value("$size may not be negative");
  Predicate p;
  p.op = Op::kSize;
  p.operand = Value::int64(*n);
  return p;
}

Predicate parse_elem_match(const Value& arg, ParseState& st, int depth) {
  if (!arg.is_document()) bad_value("$elemMatch needs an Object");
  Predicate p;
  const Document& d = arg.as_document();
  // Value form when the first key is a field operator ({$gt: 1}); otherwise a sub-query.
  if (!d.empty() && is_field_operator(d.first_key())) {
    p.op = Op::kElemMatchValue;
    const std::string outer = std::exchange(st.path, std::string());
    for (const auto& [name, v] : d) parse_operator(name, v, d, p.sub, st, depth + 1);
    st.path = outer;
  } else {
    p.op = Op::kElemMatchObject;
    p.object = parse_document(d, st, depth + 1);
  }
  return p;
}

Predicate parse_not(const Value& arg, ParseState& st, int depth) {
  Predicate p;
  p.op = Op::kNot;
  if (arg.type() == bson::Type::kRegex) {
    p.sub.push_back(equality(arg));
    return p;
  }
  if (!arg.is_document()) bad_value("$not needs a regex or a document");
  const Document& d = arg.as_document();
  if (d.empty()) bad_value("$not cannot be empty");
  for (const auto& [name, v] : d) parse_operator(name, v, d, p.sub, st, depth + 1);
  return p;
}

// mongod reads $regex and $options in document order: options in both are refused by whichever
// comes second (51074 when the regex with flags comes second, 51075 when $options does; an
// empty $options before a regex with flags is no conflict).
Predicate parse_regex(const Document& whole) {
  std::string pattern;
  std::string opts;
  for (const auto& [name, v] : whole) {
    if (name == "$regex") {
      if (v.is_string()) {
        pattern = v.as_string();
      } else if (v.type() == bson::Type::kRegex) {
        pattern = v.regex_pattern();
        if (!v.regex_options().empty()) {
          if (!opts.empty()) throw CommandError(51074, "options set in both $regex and $options");
          opts = v.regex_options();
        }
      } else {
        bad_value("$regex has to be a string");
      }
    } else if (name == "$options") {
      if (!v.is_string()) bad_value("$options has to be a string");
      if (!opts.empty()) throw CommandError(51075, "options set in both $regex and $options");
      opts = v.as_string();
    }
  }
  Predicate p;
  p.op = Op::kRegex;
  p.regex = compile_regex(pattern, opts);
  p.operand = Value::regex(pattern, opts);
  return p;
}

Predicate parse_mod(const Value& arg) {
  if (!arg.is_array()) bad_value("malformed mod, needs to be an array");
  const Array& a = arg.as_array();
  if (a.size() < 2) bad_value("malformed mod, not enough elements");
  if (a.size() > 2) bad_value("malformed mod, too many elements");
  if (!a[0].is_number()) bad_value("malformed mod, divisor not a number");
  if (!a[1].is_number()) bad_value("malformed mod, remainder not a number");
  // Both truncated toward zero; NaN, an infinity or a value whose truncation is not a 64-bit
  // integer is refused (docs/mongodb-behaviour.md, Query engine, Filters 5).
  std::optional<int64_t> divisor = a[0].number_as_truncated_int64();
  if (!divisor) bad_value("malformed mod, divisor value is invalid");
  std::optional<int64_t> remainder = a[1].number_as_truncated_int64();
  if (!remainder) bad_value("malformed mod, remainder value is invalid");
  if (*divisor == 0) bad_value("divisor cannot be 0");
  Predicate p;
  p.op = Op::kMod;
  p.operand = Value::array({Value::int64(*divisor), Value::int64(*remainder)});
  return p;
}

void parse_operator(const std::string& name, const Value& arg, const Document& whole,
                    std::vector<Predicate>& out, ParseState& st, int depth) {
  if (depth > kFilterDepthMax) bad_value("exceeded maximum filter nesting depth");
  // The list decides what is known (supported.h); the branches below only parse it.
  if (!listed(kFieldOperators, name)) bad_value("unknown operator: " + name);
  static const std::pair<std::string_view, Op> kComparisons[] = {
      {"$eq", Op::kEq},   {"$ne", Op::kNe}, {"$lt", Op::kLt},
      {"$lte", Op::kLte}, {"$gt", Op::kGt}, {"$gte", Op::kGte}};
  for (const auto& [n, op] : kComparisons) {
    if (n == name) {
      // As mongod: $eq of a regex is equality with a stored regex; $ne of one is refused
      // (SERVER-1705), and so is an ordering against one, naming the field's path.
      if (arg.type() == bson::Type::kRegex && op == Op::kNe) {
        bad_value("Can't have regex as arg to $ne.");
      }
      if (arg.type() == bson::Type::kRegex && op != Op::kEq) {
        bad_value("Can't have RegEx as arg to predicate over field '" + st.path + "'.");
      }
      Predicate p;
      p.op = op;
      p.operand = arg;
      out.push_back(std::move(p));
      return;
    }
  }
  Predicate p;
  if (name == "$in" || name == "$nin") {
    p = parse_in(name == "$in" ? Op::kIn : Op::kNin, arg);
  } else if (name == "$exists") {
    p.op = Op::kExists;
    p.operand = Value::boolean(arg.truthy());
  } else if (name == "$type") {
    p.op = Op::kType;
    if (arg.is_array()) {
      for (const Value& t : arg.as_array()) add_type(p, t);
    } else {
      add_type(p, arg);
    }
  } else if (name == "$size") {
    p = parse_size(arg);
  } else if (name == "$all") {
    if (!arg.is_array()) bad_value("$all needs an array");
    p.op = Op::kAll;
    p.operand = arg;
    for (const Value& v : arg.as_array()) {
      if (v.is_document() && v.as_document().size() == 1 &&
          v.as_document().first_key() == "$elemMatch") {
        p.sub.push_back(parse_elem_match(*v.as_document().get("$elemMatch"), st, depth + 1));
      } else if (is_operator_document(v)) {
        bad_value("no $ expressions in $all");
      } else {
        p.sub.push_back(equality(v));
      }
    }
  } else if (name == "$elemMatch") {
    p = parse_elem_match(arg, st, depth);
  } else if (name == "$not") {
    p = parse_not(arg, st, depth);
  } else if (name == "$regex") {
    p = parse_regex(whole);
  } else if (name == "$options") {
    if (!whole.has("$regex")) bad_value("$options needs a $regex");
    return;
  } else if (name == "$mod") {
    p = parse_mod(arg);
  } else {
    throw std::logic_error("listed operator without a parser: " + name);
  }
  out.push_back(std::move(p));
}

NodePtr parse_path(const std::string& field, const Value& value, ParseState& st, int depth) {
  auto node = std::make_shared<Node>();
  node->kind = Node::Kind::kPath;
  node->path = split_path(field);
  if (is_operator_document(value)) {
    const Document& d = value.as_document();
    const std::string outer = std::exchange(st.path, field);
    for (const auto& [name, arg] : d) parse_operator(name, arg, d, node->predicates, st, depth);
    st.path = outer;
  } else {
    node->predicates.push_back(equality(value));
  }
  return node;
}

NodePtr parse_logical(const std::string& name, const Value& value, ParseState& st, int depth) {
  if (!value.is_array() || value.as_array().empty()) {
    bad_value(name + " argument must be a non-empty array");
  }
  auto node = std::make_shared<Node>();
  node->kind =
      name == "$and" ? Node::Kind::kAnd : (name == "$or" ? Node::Kind::kOr : Node::Kind::kNor);
  for (const Value& clause : value.as_array()) {
    if (!clause.is_document()) bad_value(name + " argument's entries must be objects");
    node->children.push_back(parse_document(clause.as_document(), st, depth + 1));
  }
  return node;
}

NodePtr parse_top_level_operator(const std::string& name, const Value& value, ParseState& st,
                                 int depth) {
  if (name == "$where" || name == "$text" || name == "$jsonSchema" || name == "$sampleRate") {
    throw CommandError(code::kNotImplemented, name + " is not supported by mongosim");
  }
  // The list decides what is known (supported.h); the branches below only parse it.
  if (!listed(kTopLevelOperators, name)) {
    bad_value("unknown top level operator: " + name +
              ". If you have a field name that starts with a '$' symbol, consider using "
              "$getField or $setField.");
  }
  if (name == "$and" || name == "$or" || name == "$nor") {
    return parse_logical(name, value, st, depth);
  }
  auto node = std::make_shared<Node>();
  if (name == "$expr") {
    validate_expression(value);
    st.uses_expr = true;
    node->kind = Node::Kind::kExpr;
    node->expr = value;
  } else if (name == "$comment") {
    node->kind = Node::Kind::kTrue;
  } else if (name == "$alwaysTrue" || name == "$alwaysFalse") {
    node->kind = name == "$alwaysTrue" ? Node::Kind::kTrue : Node::Kind::kFalse;
  } else {
    throw std::logic_error("listed top-level operator without a parser: " + name);
  }
  return node;
}

NodePtr parse_document(const Document& filter, ParseState& st, int depth) {
  if (depth > kFilterDepthMax) bad_value("exceeded maximum filter nesting depth");
  auto node = std::make_shared<Node>();
  node->kind = Node::Kind::kAnd;
  for (const auto& [field, value] : filter) {
    if (!field.empty() && field[0] == '$') {
      node->children.push_back(parse_top_level_operator(field, value, st, depth));
    } else {
      node->children.push_back(parse_path(field, value, st, depth));
    }
  }
  return node;
}

// ---- evaluation ----

bool node_matches(const Node& node, const Document& doc, const EvalContext& ctx);
bool predicate_matches(const Predicate& p, const std::vector<Candidate>& cands,
                       const EvalContext& ctx);

bool is_nullish(const Value* v) {
  return v == nullptr || v->is_null() || v->type() == bson::Type::kUndefined;
}

bool value_equals(const Value* v, const Value& operand) {
  // {f: null} matches null, undefined and missing (docs/mongodb-behaviour.md, Filters).
  if (operand.is_null()) return is_nullish(v);
  return v != nullptr && same_bracket(*v, operand) && compare_values(*v, operand) == 0;
}

bool any_equals(const std::vector<Candidate>& cands, const Value& operand) {
  for (const Candidate& c : cands) {
    if (value_equals(c.value, operand)) return true;
  }
  return false;
}

// Type bracketing (docs/mongodb-behaviour.md, Filters): $lt & co. only compare within one canonical
// type, except that MinKey and MaxKey operands compare against everything.
bool compares(Op op, const Value* v, const Value& operand) {
  if (operand.is_null()) return (op == Op::kLte || op == Op::kGte) && is_nullish(v);
  if (v == nullptr) return false;
  bool unbracketed = operand.type() == bson::Type::kMinKey || operand.type() == bson::Type::kMaxKey;
  if (!unbracketed && !same_bracket(*v, operand)) return false;
  if (v->type() == bson::Type::kDouble && std::isnan(v->as_double())) {
    // NaN is only ever equal to NaN in queries.
    bool operand_nan = operand.type() == bson::Type::kDouble && std::isnan(operand.as_double());
    return operand_nan && (op == Op::kLte || op == Op::kGte);
  }
  int c = compare_values(*v, operand);
  switch (op) {
    case Op::kLt:
      return c < 0;
    case Op::kLte:
      return c <= 0;
    case Op::kGt:
      return c > 0;
    case Op::kGte:
      return c >= 0;
    default:
      assert(false);
      return false;
  }
}

// A string or symbol the regex finds a match in, or a stored regex identical to `as_value` (the
// regex as the filter gave it).
bool regex_matches(const Value& as_value, const Regex& re, const Value* v) {
  if (v == nullptr) return false;
  if (v->type() == bson::Type::kString || v->type() == bson::Type::kSymbol) {
    return re.search(v->as_string());
  }
  return v->type() == bson::Type::kRegex && as_value.type() == bson::Type::kRegex &&
         v->identical(as_value);
}

bool in_matches(const Predicate& p, const std::vector<Candidate>& cands) {
  for (const Value& option : p.operand.as_array()) {
    if (option.type() == bson::Type::kRegex) continue;
    if (any_equals(cands, option)) return true;
  }
  // A regex option matches as a $regex does: strings, symbols, and an identical stored regex.
  size_t next = 0;
  for (const Value& option : p.operand.as_array()) {
    if (option.type() != bson::Type::kRegex) continue;
    const Regex& re = *p.in_regexes[next++];
    for (const Candidate& c : cands) {
      if (regex_matches(option, re, c.value)) return true;
    }
  }
  return false;
}

bool type_matches(const Predicate& p, const Candidate& c) {
  if (c.value == nullptr) return false;
  if (p.type_number && c.value->is_number()) return true;
  for (bson::Type t : p.types) {
    if (c.value->type() == t) return true;
  }
  return false;
}

bool element_matches_all(const std::vector<Predicate>& preds, const Value& element,
                         const EvalContext& ctx) {
  std::vector<Candidate> single{{&element, false}};
  for (const Predicate& p : preds) {
    if (!predicate_matches(p, single, ctx)) return false;
  }
  return true;
}

bool elem_match(const Predicate& p, const std::vector<Candidate>& cands, const EvalContext& ctx) {
  for (const Candidate& c : cands) {
    if (c.from_leaf_array || c.value == nullptr || !c.value->is_array()) continue;
    for (const Value& element : c.value->as_array()) {
      if (p.op == Op::kElemMatchValue) {
        if (element_matches_all(p.sub, element, ctx)) return true;
      } else if (element.is_document() && node_matches(*p.object, element.as_document(), ctx)) {
        return true;
      }
    }
  }
  return false;
}

bool mod_matches(const Predicate& p, const Candidate& c) {
  if (c.value == nullptr || !c.value->is_number()) return false;
  // A long is taken exactly (through a double, one past 2^53 would round); a NaN, an infinity or
  // a value beyond the 64-bit range matches nothing.
  std::optional<int64_t> dividend = c.value->number_as_truncated_int64();
  if (!dividend) return false;
  const int64_t x = *dividend;
  int64_t divisor = p.operand.as_array()[0].as_int64();
  int64_t remainder = divisor == -1 ? 0 : x % divisor;  // INT64_MIN % -1 would trap
  return remainder == p.operand.as_array()[1].as_int64();
}

template <typename F>
bool any_candidate(const std::vector<Candidate>& cands, F f) {
  for (const Candidate& c : cands) {
    if (f(c)) return true;
  }
  return false;
}

bool predicate_matches(const Predicate& p, const std::vector<Candidate>& cands,
                       const EvalContext& ctx) {
  switch (p.op) {
    case Op::kEq:
      return any_equals(cands, p.operand);
    case Op::kNe:
      return !any_equals(cands, p.operand);
    case Op::kLt:
    case Op::kLte:
    case Op::kGt:
    case Op::kGte:
      return any_candidate(cands,
                           [&](const Candidate& c) { return compares(p.op, c.value, p.operand); });
    case Op::kIn:
      return in_matches(p, cands);
    case Op::kNin:
      return !in_matches(p, cands);
    case Op::kExists: {
      bool exists = any_candidate(cands, [](const Candidate& c) { return c.value != nullptr; });
      return exists == p.operand.as_bool();
    }
    case Op::kType:
      return any_candidate(cands, [&](const Candidate& c) { return type_matches(p, c); });
    case Op::kSize:
      return any_candidate(cands, [&](const Candidate& c) {
        return !c.from_leaf_array && c.value != nullptr && c.value->is_array() &&
               static_cast<int64_t>(c.value->as_array().size()) == p.operand.as_int64();
      });
    case Op::kAll:
      if (p.sub.empty()) return false;
      for (const Predicate& s : p.sub) {
        if (!predicate_matches(s, cands, ctx)) return false;
      }
      return true;
    case Op::kElemMatchObject:
    case Op::kElemMatchValue:
      return elem_match(p, cands, ctx);
    case Op::kNot:
      for (const Predicate& s : p.sub) {
        if (!predicate_matches(s, cands, ctx)) return true;
      }
      return false;
    case Op::kRegex:
      return any_candidate(
          cands, [&](const Candidate& c) { return regex_matches(p.operand, *p.regex, c.value); });
    case Op::kMod:
      return any_candidate(cands, [&](const Candidate& c) { return mod_matches(p, c); });
  }
  return false;
}

bool path_matches(const Node& node, const Document& doc, const EvalContext& ctx) {
  std::vector<Candidate> cands;
  collect_candidates(doc, node.path, cands);
  for (const Predicate& p : node.predicates) {
    if (!predicate_matches(p, cands, ctx)) return false;
  }
  return true;
}

bool node_matches(const Node& node, const Document& doc, const EvalContext& ctx) {
  switch (node.kind) {
    case Node::Kind::kTrue:
      return true;
    case Node::Kind::kFalse:
      return false;
    case Node::Kind::kPath:
      return path_matches(node, doc, ctx);
    case Node::Kind::kExpr: {
      Variables vars{&doc, &ctx, {}};
      Maybe v = eval_expression(node.expr, vars);
      return v && v->truthy();
    }
    case Node::Kind::kAnd:
      for (const auto& c : node.children) {
        if (!node_matches(*c, doc, ctx)) return false;
      }
      return true;
    case Node::Kind::kOr:
      for (const auto& c : node.children) {
        if (node_matches(*c, doc, ctx)) return true;
      }
      return false;
    case Node::Kind::kNor:
      for (const auto& c : node.children) {
        if (node_matches(*c, doc, ctx)) return false;
      }
      return true;
  }
  return false;
}

}  // namespace

Matcher Matcher::parse(const Document& filter) {
  ParseState st;
  Matcher m;
  m.root_ = parse_document(filter, st, 0);
  m.filter_ = filter;
  m.uses_expr_ = st.uses_expr;
  return m;
}

bool Matcher::matches(const Document& doc, const EvalContext& ctx) const {
  // The command's maxTimeMS, read before each document: a scan stops between documents, as
  // mongod's does at its yields (one document's regex may still run to PCRE2's step limit).
  if (ctx.deadline && std::chrono::steady_clock::now() >= *ctx.deadline) {
    throw CommandError(code::kMaxTimeMSExpired, "operation exceeded time limit");
  }
  if (root_ == nullptr) return true;  // a default-constructed Matcher is the empty filter
  return node_matches(*root_, doc, ctx);
}

bool Matcher::uses_expr() const {
  return uses_expr_;
}

const Document& Matcher::filter() const {
  return filter_;
}

}  // namespace mongosim::query
