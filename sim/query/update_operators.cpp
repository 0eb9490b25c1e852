#include "query/update_operators.h"

#include <algorithm>
#include <cassert>
#include <set>

#include "base/command_error.h"
#include "query/numeric.h"
#include "query/supported.h"
#include "query/type_order.h"

namespace mongosim::query {

namespace {

// mongod refuses to pad an array past this many elements ({$set: {"a.100000000": 1}}).
constexpr size_t kArrayPadMax = 1500000;

[[noreturn]] void fail(int32_t code, const std::string& message) {
  throw CommandError(code, message);
}

bool is_known_operator(std::string_view name) {
  return listed(kUpdateOperators, name);
}

// Operators that build missing path components; the others are no-ops on a missing path.
bool creates_path(const UpdateOp& op) {
  return op.op != "$unset" && op.op != "$pull" && op.op != "$pullAll" && op.op != "$pop" &&
         op.op != "$rename-from";
}

bool is_array_filter_component(std::string_view c) {
  return c.size() >= 3 && c.substr(0, 2) == "$[" && c.back() == ']';
}

bool is_positional(std::string_view c) {
  return c == "$" || is_array_filter_component(c);
}

std::string filter_identifier(std::string_view c) {
  return std::string(c.substr(2, c.size() - 3));
}

// ---- parsing ----

void validate_update_path(const std::string& dotted, const Path& path) {
  if (dotted.empty()) fail(code::kEmptyFieldName, "An empty update path is not valid.");
  for (const std::string& part : path) {
    if (part.empty()) {
      fail(code::kEmptyFieldName,
           "The update path '" + dotted + "' contains an empty field name, which is not allowed.");
    }
    if (part[0] == '$' && !is_positional(part)) {
      fail(code::kDollarPrefixedFieldName, "The dollar ($) prefixed field '" + part + "' in '" +
                                               dotted + "' is not valid for storage.");
    }
  }
}

bool is_path_prefix(const Path& a, const Path& b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

void check_conflict(const std::vector<UpdateOp>& existing, const UpdateOp& added) {
  for (const UpdateOp& e : existing) {
    if (is_path_prefix(e.path, added.path) || is_path_prefix(added.path, e.path)) {
      const std::string& at = e.path.size() <= added.path.size() ? e.dotted : added.dotted;
      fail(code::kConflictingUpdateOperators,
           "Updating the path '" + added.dotted + "' would create a conflict at '" + at + "'");
    }
  }
}

void validate_numeric_arg(const std::string& op, const std::string& field, const Value& v) {
  if (v.is_number()) return;
  std::string verb = op == "$inc" ? "increment" : "multiply";
  fail(code::kTypeMismatch,
       "Cannot " + verb + " with non-numeric argument: {" + field + ": " + render(v) + "}");
}

void validate_current_date(const std::string& field, const Value& v) {
  if (v.type() == bson::Type::kBool) return;
  if (!v.is_document()) {
    fail(code::kBadValue, std::string(bson::type_name(v.type())) +
                              " is not valid type for $currentDate. Please use a boolean ('true') "
                              "or a $type expression ({$type: 'timestamp/date'}).");
  }
  for (const auto& [k, t] : v.as_document()) {
    if (k != "$type") fail(code::kBadValue, "Unrecognized $currentDate option: " + k);
    if (!t.is_string() || (t.as_string() != "date" && t.as_string() != "timestamp")) {
      fail(code::kBadValue,
           "The '$type' string field is required to be 'date' or 'timestamp': "
           "{$currentDate: {field : {$type: 'date'}}}");
    }
  }
  (void)field;
}

bool has_each(const Value& v) {
  return v.is_document() && !v.as_document().empty() && v.as_document().has("$each");
}

// $push's $sort as mongod's $push parses it: a number must be 1 or -1 (compared as a double, so
// the smallest long is simply another number, never negated); a document a non-empty pattern of
// such directions on fields without an empty part; anything else is invalid. All BadValue.
void validate_push_sort(const Value& m) {
  const auto unit = [](const Value& v) {
    const double d = v.is_number() ? v.number_as_double() : 0;
    return d == 1 || d == -1;
  };
  const char* kDirection = "The $sort element value must be either 1 or -1";
  if (m.is_number()) {
    if (!unit(m)) fail(code::kBadValue, kDirection);
    return;
  }
  if (!m.is_document()) {
    fail(code::kBadValue,
         "The $sort is invalid: use 1/-1 to sort the whole element, or {field:1/-1} to sort "
         "embedded fields");
  }
  const Document& pattern = m.as_document();
  if (pattern.empty()) {
    fail(code::kBadValue, "The $sort pattern is empty when it should be a set of fields.");
  }
  for (const auto& [field, direction] : pattern) {
    if (!unit(direction)) fail(code::kBadValue, kDirection);
    if (field.empty()) fail(code::kBadValue, "The $sort field cannot be empty");
    if (field.front() == '.' || field.back() == '.' || field.find("..") != std::string::npos) {
      fail(code::kBadValue, "The $sort field is a dotted field but has an empty part: " + field);
    }
  }
  (void)Sort::parse(pattern);  // its own bound on keys
}

void validate_push(const std::string& op, const Value& v) {
  if (!has_each(v)) return;
  for (const auto& [k, m] : v.as_document()) {
    if (k == "$each") {
      if (!m.is_array()) {
        fail(code::kBadValue, "The argument to $each in " + op +
                                  " must be an array but it was of "
                                  "type: " +
                                  std::string(bson::type_name(m.type())));
      }
    } else if (op == "$addToSet") {
      fail(code::kBadValue, "Found unexpected fields after $each in $addToSet: " + render(v));
    } else if (k == "$slice" || k == "$position") {
      if (!m.is_number() || !m.number_as_exact_int64()) {
        fail(code::kBadValue, "The value for " + k +
                                  " must be an integer value but was given "
                                  "type: " +
                                  std::string(bson::type_name(m.type())));
      }
    } else if (k == "$sort") {
      validate_push_sort(m);
    } else {
      fail(code::kBadValue, "Unrecognized clause in $push: " + k);
    }
  }
}

// Operator form ({$gte: 6}) tests each element as a value (wrapped as {"": element}, as mongod
// wraps it, so a message names the path ""); otherwise each document element is matched as a
// document against the query.
std::shared_ptr<const Matcher> parse_pull_filter(const Value& v, bool* value_form) {
  *value_form = false;
  if (!v.is_document()) return nullptr;
  const Document& d = v.as_document();
  *value_form = !d.empty() && d.first_key()[0] == '$' && d.first_key() != "$and" &&
                d.first_key() != "$or" && d.first_key() != "$nor" && d.first_key() != "$expr";
  Document filter = *value_form ? Document{{"", v}} : d;
  return std::make_shared<const Matcher>(Matcher::parse(filter));
}

void add_op(OperatorUpdate& out, UpdateOp op) {
  validate_update_path(op.dotted, op.path);
  check_conflict(out.ops, op);
  out.ops.push_back(std::move(op));
}

void parse_field(OperatorUpdate& out, const std::string& op_name, const std::string& field,
                 const Value& v) {
  UpdateOp op{op_name, field, split_path(field), v, nullptr, false, {}};
  if (op_name == "$inc" || op_name == "$mul") validate_numeric_arg(op_name, field, v);
  if (op_name == "$currentDate") validate_current_date(field, v);
  if (op_name == "$push" || op_name == "$addToSet") validate_push(op_name, v);
  if (op_name == "$pull") op.pull_filter = parse_pull_filter(v, &op.pull_value_form);
  if (op_name == "$pullAll" && !v.is_array()) {
    fail(code::kBadValue, "$pullAll requires an array argument but was given a " +
                              std::string(bson::type_name(v.type())));
  }
  if (op_name == "$pop") {
    auto n = v.is_number() ? v.number_as_exact_int64() : std::nullopt;
    if (!n || (*n != 1 && *n != -1)) {
      fail(code::kFailedToParse, "$pop expects 1 or -1, found: " + render(v));
    }
  }
  if (op_name == "$rename") {
    if (!v.is_string()) {
      fail(code::kBadValue,
           "The 'to' field for $rename must be a string: " + field + ": " + render(v));
    }
    if (v.as_string() == field) {
      fail(code::kBadValue,
           "The source and target field for $rename must differ: " + field + ": " + render(v));
    }
    UpdateOp from{"$rename-from", field, split_path(field), v, nullptr, false, {}};
    add_op(out, std::move(from));
    UpdateOp to{"$rename-to", v.as_string(), split_path(v.as_string()), v, nullptr, false, field};
    for (const std::string& part : to.path) {
      if (is_positional(part))
        fail(code::kBadValue, "The target field of $rename may not be dynamic");
    }
    add_op(out, std::move(to));
    return;
  }
  add_op(out, std::move(op));
}

// mongod 5.0+ applies updates in field-name order, numeric components numerically.
bool path_less(const UpdateOp& a, const UpdateOp& b) {
  size_t n = std::min(a.path.size(), b.path.size());
  for (size_t i = 0; i < n; ++i) {
    auto ia = array_index(a.path[i]), ib = array_index(b.path[i]);
    if (ia && ib && *ia != *ib) return *ia < *ib;
    if (a.path[i] != b.path[i]) return a.path[i] < b.path[i];
  }
  return a.path.size() < b.path.size();
}

void parse_array_filters(OperatorUpdate& out, const Array& filters) {
  for (const Value& f : filters) {
    if (!f.is_document()) fail(code::kTypeMismatch, "Each array filter must be an object");
    const Document& d = f.as_document();
    if (d.empty()) {
      fail(code::kFailedToParse,
           "Cannot use an expression without a top-level field name in "
           "arrayFilters");
    }
    std::string id;
    for (const auto& [key, v] : d) {
      std::string top = split_path(key)[0];
      if (!id.empty() && top != id) {
        fail(code::kFailedToParse,
             "Error parsing array filter :: caused by :: Expected a single "
             "top-level field name, found '" +
                 id + "' and '" + top + "'");
      }
      id = top;
    }
    bool valid = !id.empty() && id[0] >= 'a' && id[0] <= 'z' &&
                 std::all_of(id.begin(), id.end(), [](char c) { return std::isalnum(c) != 0; });
    if (!valid) {
      fail(code::kBadValue,
           "Error parsing array filter :: caused by :: The top-level field name "
           "must be an alphanumeric string beginning with a lowercase letter, "
           "found '" +
               id + "'");
    }
    if (out.array_filters.count(id) != 0) {
      fail(code::kFailedToParse,
           "Found multiple array filters with the same top-level field "
           "name " +
               id);
    }
    out.array_filters.emplace(id, Matcher::parse(d));
  }
}

void check_array_filter_use(const OperatorUpdate& out, const Document& u) {
  std::set<std::string> used;
  for (const UpdateOp& op : out.ops) {
    for (const std::string& part : op.path) {
      if (!is_array_filter_component(part) || part == "$[]") continue;
      std::string id = filter_identifier(part);
      if (out.array_filters.count(id) == 0) {
        fail(code::kBadValue,
             "No array filter found for identifier '" + id + "' in path '" + op.dotted + "'");
      }
      used.insert(id);
    }
  }
  for (const auto& [id, m] : out.array_filters) {
    if (used.count(id) == 0) {
      fail(code::kFailedToParse,
           "The array filter for identifier '" + id + "' was not used in the update " + render(u));
    }
  }
}

// ---- applying ----

struct ApplyState {
  const OperatorUpdate& update;
  const Document& original;
  const EvalContext& ctx;
};

struct LeafResult {
  enum class Kind { kKeep, kSet, kRemove };
  Kind kind = Kind::kKeep;
  Value value;
};

LeafResult set_to(Value v) {
  return {LeafResult::Kind::kSet, std::move(v)};
}
LeafResult keep() {
  return {};
}

std::string id_for_message(const Document& doc) {
  const Value* id = doc.get("_id");
  return id == nullptr ? "{}" : "{_id: " + render(*id) + "}";
}

LeafResult arithmetic(const UpdateOp& op, const Value* existing, const ApplyState& st) {
  if (existing == nullptr) return set_to(op.op == "$inc" ? op.arg : zero_like(op.arg));
  if (!existing->is_number()) {
    fail(code::kTypeMismatch, "Cannot apply " + op.op + " to a value of non-numeric type. " +
                                  id_for_message(st.original) + " has the field '" +
                                  op.path.back() + "' of non-numeric type " +
                                  std::string(bson::type_name(existing->type())));
  }
  NumericResult r =
      op.op == "$inc" ? add_numbers(*existing, op.arg) : multiply_numbers(*existing, op.arg);
  if (r.int64_overflow) {
    fail(code::kBadValue, "Failed to apply " + op.op + " operations to current value (" +
                              render(*existing) + ") for document " + id_for_message(st.original));
  }
  return set_to(std::move(r.value));
}

LeafResult current_date(const UpdateOp& op, const ApplyState& st) {
  bool timestamp =
      op.arg.is_document() && op.arg.as_document().get("$type")->as_string() == "timestamp";
  if (!timestamp) return set_to(Value::date(st.ctx.now_ms));
  bson::Timestamp ts = st.ctx.cluster_time;
  if (ts.seconds == 0) ts = {static_cast<uint32_t>(st.ctx.now_ms / 1000), 1};
  return set_to(Value::timestamp(ts));
}

const Array& require_array(const UpdateOp& op, const Value& existing, const ApplyState& st) {
  if (existing.is_array()) return existing.as_array();
  if (op.op == "$addToSet") {
    fail(code::kBadValue, "Cannot apply $addToSet to non-array field. Field named '" +
                              op.path.back() + "' has non-array type " +
                              std::string(bson::type_name(existing.type())));
  }
  if (op.op == "$push") {
    fail(code::kBadValue, "The field '" + op.path.back() + "' must be an array but is of type " +
                              std::string(bson::type_name(existing.type())) + " in document " +
                              id_for_message(st.original));
  }
  fail(code::kBadValue, "Cannot apply " + op.op + " to a non-array value");
}

void sort_for_push(Array& arr, const Value& spec) {
  if (spec.is_document()) {
    Sort sort = Sort::parse(spec.as_document());
    std::stable_sort(arr.begin(), arr.end(), [&](const Value& a, const Value& b) {
      static const Document kEmpty;
      const Document& da = a.is_document() ? a.as_document() : kEmpty;
      const Document& db = b.is_document() ? b.as_document() : kEmpty;
      return sort.compare(da, db) < 0;
    });
    return;
  }
  int64_t dir = *spec.number_as_exact_int64();
  std::stable_sort(arr.begin(), arr.end(),
                   [&](const Value& a, const Value& b) { return compare_values(a, b) * dir < 0; });
}

LeafResult push(const UpdateOp& op, const Value* existing, const ApplyState& st) {
  Array arr = existing == nullptr ? Array{} : require_array(op, *existing, st);
  if (!has_each(op.arg)) {
    arr.push_back(op.arg);
    return set_to(Value::array(std::move(arr)));
  }
  const Document& mods = op.arg.as_document();
  const Array& each = mods.get("$each")->as_array();
  auto size = static_cast<int64_t>(arr.size());
  int64_t pos = size;
  if (const Value* p = mods.get("$position")) {
    pos = *p->number_as_exact_int64();
    pos = pos < 0 ? std::max<int64_t>(0, size + pos) : std::min(pos, size);
  }
  arr.insert(arr.begin() + pos, each.begin(), each.end());
  if (const Value* s = mods.get("$sort")) sort_for_push(arr, *s);
  if (const Value* sl = mods.get("$slice")) {
    int64_t n = *sl->number_as_exact_int64();
    auto len = static_cast<int64_t>(arr.size());
    if (n >= 0 && n < len) {
      arr.resize(static_cast<size_t>(n));
    } else if (n < 0 && n > -len) {  // not -n < len: -INT64_MIN overflows
      arr.erase(arr.begin(), arr.begin() + (len + n));
    }
  }
  return set_to(Value::array(std::move(arr)));
}

LeafResult add_to_set(const UpdateOp& op, const Value* existing, const ApplyState& st) {
  Array arr = existing == nullptr ? Array{} : require_array(op, *existing, st);
  Array items = has_each(op.arg) ? op.arg.as_document().get("$each")->as_array() : Array{op.arg};
  bool changed = existing == nullptr;
  for (const Value& item : items) {
    bool present = std::any_of(arr.begin(), arr.end(),
                               [&](const Value& x) { return compare_values(x, item) == 0; });
    if (!present) {
      arr.push_back(item);
      changed = true;
    }
  }
  return changed ? set_to(Value::array(std::move(arr))) : keep();
}

bool pull_matches(const UpdateOp& op, const Value& element, const ApplyState& st) {
  if (op.pull_filter == nullptr) return compare_values(element, op.arg) == 0;
  if (op.pull_value_form) return op.pull_filter->matches(Document{{"", element}}, st.ctx);
  return element.is_document() && op.pull_filter->matches(element.as_document(), st.ctx);
}

LeafResult pull(const UpdateOp& op, const Value* existing, const ApplyState& st) {
  if (existing == nullptr) return keep();
  const Array& arr = require_array(op, *existing, st);
  Array out;
  for (const Value& element : arr) {
    bool remove =
        op.op == "$pull"
            ? pull_matches(op, element, st)
            : std::any_of(op.arg.as_array().begin(), op.arg.as_array().end(),
                          [&](const Value& x) { return compare_values(x, element) == 0; });
    if (!remove) out.push_back(element);
  }
  if (out.size() == arr.size()) return keep();
  return set_to(Value::array(std::move(out)));
}

LeafResult pop(const UpdateOp& op, const Value* existing, const ApplyState& st) {
  if (existing == nullptr) return keep();
  Array arr = require_array(op, *existing, st);
  if (arr.empty()) return keep();
  if (*op.arg.number_as_exact_int64() == 1) {
    arr.pop_back();
  } else {
    arr.erase(arr.begin());
  }
  return set_to(Value::array(std::move(arr)));
}

LeafResult apply_leaf(const UpdateOp& op, const Value* existing, const ApplyState& st) {
  const std::string& o = op.op;
  if (o == "$set" || o == "$setOnInsert") return set_to(op.arg);
  if (o == "$unset" || o == "$rename-from") {
    return existing == nullptr ? keep() : LeafResult{LeafResult::Kind::kRemove, {}};
  }
  if (o == "$rename-to") {
    const Value* source = lookup_exact(st.original, split_path(op.rename_from));
    return source == nullptr ? keep() : set_to(*source);
  }
  if (o == "$inc" || o == "$mul") return arithmetic(op, existing, st);
  if (o == "$min" || o == "$max") {
    if (existing == nullptr) return set_to(op.arg);
    int c = compare_values(op.arg, *existing);
    return (o == "$min" ? c < 0 : c > 0) ? set_to(op.arg) : keep();
  }
  if (o == "$currentDate") return current_date(op, st);
  if (o == "$push") return push(op, existing, st);
  if (o == "$addToSet") return add_to_set(op, existing, st);
  if (o == "$pull" || o == "$pullAll") return pull(op, existing, st);
  assert(o == "$pop");
  return pop(op, existing, st);
}

void apply_in_value(Value& v, const UpdateOp& op, size_t i, const ApplyState& st);

void apply_in_doc(Document& d, const UpdateOp& op, size_t i, const ApplyState& st) {
  const std::string& key = op.path[i];
  if (i + 1 == op.path.size()) {
    Value* existing = d.get_mutable(key);
    LeafResult r = apply_leaf(op, existing, st);
    if (r.kind == LeafResult::Kind::kSet) {
      if (existing != nullptr) {
        *existing = std::move(r.value);
      } else {
        d.append(key, std::move(r.value));
      }
    } else if (r.kind == LeafResult::Kind::kRemove) {
      d.erase(key);
    }
    return;
  }
  Value* child = d.get_mutable(key);
  if (child == nullptr) {
    if (!creates_path(op)) return;
    if (is_positional(op.path[i + 1])) {
      fail(code::kBadValue, "The path '" + join_path(op.path, i + 1) +
                                "' must exist in the document in order to apply array updates.");
    }
    d.append(key, Value::document({}));
    child = d.get_mutable(key);
  }
  apply_in_value(*child, op, i + 1, st);
}

// Applies the leaf operation to one array slot; $unset in an array leaves null behind.
void apply_to_slot(Value& slot, bool slot_exists, const UpdateOp& op, const ApplyState& st) {
  LeafResult r = apply_leaf(op, slot_exists ? &slot : nullptr, st);
  if (r.kind == LeafResult::Kind::kSet) {
    slot = std::move(r.value);
  } else if (r.kind == LeafResult::Kind::kRemove) {
    slot = Value::null();
  }
}

void apply_to_elements(Array& arr, const UpdateOp& op, size_t i, const ApplyState& st) {
  const std::string& part = op.path[i];
  const Matcher* filter = nullptr;
  std::string id;
  if (part != "$[]") {
    id = filter_identifier(part);
    filter = &st.update.array_filters.find(id)->second;
  }
  for (Value& element : arr) {
    if (filter != nullptr && !filter->matches(Document{{id, element}}, st.ctx)) continue;
    if (i + 1 == op.path.size()) {
      apply_to_slot(element, true, op, st);
    } else {
      apply_in_value(element, op, i + 1, st);
    }
  }
}

void apply_in_array(Array& arr, const UpdateOp& op, size_t i, const ApplyState& st) {
  const std::string& part = op.path[i];
  if (is_array_filter_component(part)) {
    apply_to_elements(arr, op, i, st);
    return;
  }
  if (part == "$") {
    fail(code::kBadValue, "The positional operator did not find the match needed from the query.");
  }
  auto index = array_index(part);
  if (!index) {
    if (!creates_path(op)) return;
    fail(code::kPathNotViable, "Cannot create field '" + part + "' in element {" + op.path[i - 1] +
                                   ": " + render(Value::array(arr)) + "}");
  }
  bool exists = *index < arr.size();
  if (!exists) {
    if (!creates_path(op)) return;
    if (*index >= kArrayPadMax) {
      fail(code::kBadValue, "can't backfill array to larger than 1500000 elements");
    }
    arr.resize(*index + 1, Value::null());
    if (i + 1 < op.path.size()) arr[*index] = Value::document({});
  }
  if (i + 1 == op.path.size()) {
    apply_to_slot(arr[*index], exists, op, st);
  } else {
    apply_in_value(arr[*index], op, i + 1, st);
  }
}

void apply_in_value(Value& v, const UpdateOp& op, size_t i, const ApplyState& st) {
  const std::string& part = op.path[i];
  if (v.is_array()) {
    apply_in_array(v.mutable_array(), op, i, st);
  } else if (v.is_document() && !is_positional(part)) {
    apply_in_doc(v.mutable_document(), op, i, st);
  } else if (is_positional(part) && creates_path(op)) {
    fail(code::kBadValue,
         "Cannot apply array updates to non-array element " + op.path[i - 1] + ": " + render(v));
  } else if (creates_path(op)) {
    fail(code::kPathNotViable, "Cannot create field '" + part + "' in element {" + op.path[i - 1] +
                                   ": " + render(v) + "}");
  }
}

}  // namespace

OperatorUpdate parse_operator_update(const Document& u, const std::optional<Array>& array_filters) {
  OperatorUpdate out;
  if (array_filters) parse_array_filters(out, *array_filters);
  for (const auto& [name, arg] : u) {
    if (name.empty() || name[0] != '$' || !is_known_operator(name)) {
      fail(code::kFailedToParse, "Unknown modifier: " + name +
                                     ". Expected a valid update modifier or pipeline-style update "
                                     "specified as an array");
    }
    if (!arg.is_document()) {
      fail(code::kFailedToParse, "Modifiers operate on fields but we found type " +
                                     std::string(bson::type_name(arg.type())) +
                                     " instead. For example: {$mod: {<field>: ...}} not {" + name +
                                     ": " + render(arg) + "}");
    }
    for (const auto& [field, v] : arg.as_document()) parse_field(out, name, field, v);
  }
  check_array_filter_use(out, u);
  std::stable_sort(out.ops.begin(), out.ops.end(), path_less);
  return out;
}

Document apply_operator_update(const OperatorUpdate& update, const Document& doc,
                               bool is_upsert_insert, const EvalContext& ctx) {
  ApplyState st{update, doc, ctx};
  Document out = doc;
  for (const UpdateOp& op : update.ops) {
    if (op.op == "$setOnInsert" && !is_upsert_insert) continue;
    apply_in_doc(out, op, 0, st);
  }
  return out;
}

}  // namespace mongosim::query
