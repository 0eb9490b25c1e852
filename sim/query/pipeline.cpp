// run_pipeline: the aggregate stages mongosim supports, applied in order over in-memory
// documents. Stages are validated before any document is processed, so a bad stage late in
// the pipeline fails the whole command up front as it does in mongod.
#include <algorithm>
#include <cassert>

#include "base/command_error.h"
#include "query/expression.h"
#include "query/numeric.h"
#include "query/path.h"
#include "query/stages.h"
#include "query/supported.h"
#include "query/type_order.h"

namespace mongosim::query {

namespace {

constexpr size_t kGroupsMax = 100000;        // bounds $group's memory

[[noreturn]] void fail(int32_t code, const std::string& message) {
  throw CommandError(code, message);
}

// ---- $group ----

struct Accumulator {
  std::string field;
  std::string op;
  Value arg;
};

struct GroupState {
  Value key;
  std::vector<Maybe> acc;       // running values, one per accumulator
  std::vector<int64_t> counts;  // for $avg
};

bool is_accumulator(std::string_view op) {
  return listed(kGroupAccumulators, op);
}

std::vector<Accumulator> parse_group(const Value& spec) {
  if (!spec.is_document()) fail(15947, "a group's fields must be specified in an object");
  if (!spec.as_document().has("_id")) fail(15955, "a group specification must include an _id");
  std::vector<Accumulator> accs;
  for (const auto& [field, v] : spec.as_document()) {
    if (field == "_id") {
      validate_expression(v);
      continue;
    }
    if (!v.is_document() || v.as_document().size() != 1) {
      fail(40234, "The field '" + field + "' must be an accumulator object");
    }
    const auto& [op, arg] = v.as_document().at(0);
    if (!is_accumulator(op)) fail(15952, "unknown group operator '" + op + "'");
    if (op != "$count") validate_expression(arg);
    accs.push_back({field, op, arg});
  }
  return accs;
}

void accumulate(const Accumulator& a, const Maybe& v, Maybe& acc, int64_t& count) {
  if (a.op == "$count") {
    acc = add_numbers(acc ? *acc : Value::int32(0), Value::int32(1)).value;
  } else if (a.op == "$sum" || a.op == "$avg") {
    if (v && v->is_number()) {
      acc = add_numbers(acc ? *acc : Value::int32(0), *v).value;
      ++count;
    }
  } else if (a.op == "$min" || a.op == "$max") {
    if (!v || v->is_null() || v->type() == bson::Type::kUndefined) return;
    int c = acc ? compare_values(*v, *acc) : 0;
    if (!acc || (a.op == "$min" ? c < 0 : c > 0)) acc = v;
  } else if (a.op == "$first") {
    if (count++ == 0) acc = v ? *v : Value::null();
  } else if (a.op == "$last") {
    acc = v ? *v : Value::null();
  } else {  // $push, $addToSet
    if (!acc) acc = Value::array({});
    if (!v) return;
    Array& arr = acc->mutable_array();
    if (a.op == "$addToSet") {
      for (const Value& x : arr) {
        if (compare_values(x, *v) == 0) return;
      }
    }
    arr.push_back(*v);
  }
}

Value finish(const Accumulator& a, const Maybe& acc, int64_t count) {
  if (a.op == "$sum" || a.op == "$count") return acc ? *acc : Value::int32(0);
  if (a.op == "$avg") {
    if (count == 0) return Value::null();
    return Value::dbl(acc->number_as_double() / static_cast<double>(count));
  }
  if (a.op == "$push" || a.op == "$addToSet") return acc ? *acc : Value::array({});
  return acc ? *acc : Value::null();
}

std::vector<Document> run_group(const Value& spec, std::vector<Document> input,
                                const EvalContext& ctx) {
  std::vector<Accumulator> accs = parse_group(spec);
  const Value& id_expr = *spec.as_document().get("_id");
  std::vector<GroupState> groups;
  for (const Document& doc : input) {
    Variables vars{&doc, &ctx, {}};
    Maybe key = eval_expression(id_expr, vars);
    Value k = key ? *key : Value::null();
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const GroupState& g) { return compare_values(g.key, k) == 0; });
    if (it == groups.end()) {
      if (groups.size() >= kGroupsMax) fail(code::kBadValue, "too many $group keys");
      groups.push_back({k, std::vector<Maybe>(accs.size()), std::vector<int64_t>(accs.size())});
      it = groups.end() - 1;
    }
    for (size_t i = 0; i < accs.size(); ++i) {
      Maybe v = accs[i].op == "$count" ? Maybe() : eval_expression(accs[i].arg, vars);
      accumulate(accs[i], v, it->acc[i], it->counts[i]);
    }
  }
  std::vector<Document> out;
  for (const GroupState& g : groups) {
    Document d{{"_id", g.key}};
    for (size_t i = 0; i < accs.size(); ++i) {
      d.append(accs[i].field, finish(accs[i], g.acc[i], g.counts[i]));
    }
    out.push_back(std::move(d));
  }
  return out;
}

// ---- $skip / $limit / $count / $unwind ----

int64_t parse_count_arg(const Value& v, int32_t code, const std::string& what) {
  auto n = v.is_number() ? v.number_as_exact_int64() : std::nullopt;
  if (!n) fail(code, what + " must be a number, not: " + render(v));
  return *n;
}

std::vector<Document> run_count(const Value& spec, const std::vector<Document>& input) {
  if (!spec.is_string()) fail(40156, "the count field must be a non-empty string");
  const std::string& name = spec.as_string();
  if (name.empty()) fail(40157, "the count field must be a non-empty string");
  if (name[0] == '$') fail(40158, "the count field cannot be a $-prefixed path");
  if (name.find('.') != std::string::npos) fail(40160, "the count field cannot contain '.'");
  if (input.empty()) return {};
  auto n = static_cast<int64_t>(input.size());
  Value count = n <= INT32_MAX ? Value::int32(static_cast<int32_t>(n)) : Value::int64(n);
  return {Document{{name, count}}};
}

std::vector<Document> run_unwind(const Value& spec, const std::vector<Document>& input) {
  std::string path;
  bool preserve = false;
  if (spec.is_string()) {
    path = spec.as_string();
  } else if (spec.is_document() && spec.as_document().get("path") &&
             spec.as_document().get("path")->is_string()) {
    path = spec.as_document().get("path")->as_string();
    const Value* p = spec.as_document().get("preserveNullAndEmptyArrays");
    preserve = p != nullptr && p->truthy();
  } else {
    fail(15981, "expected either a string or an object as specification for $unwind stage");
  }
  if (path.size() < 2 || path[0] != '$') {
    fail(28818, "path option to $unwind stage should be prefixed with a '$': " + path);
  }
  Path parts = split_path(std::string_view(path).substr(1));
  std::vector<Document> out;
  for (const Document& doc : input) {
    const Value* v = lookup_exact(doc, parts);
    if (v == nullptr || v->is_null() || (v->is_array() && v->as_array().empty())) {
      if (preserve) out.push_back(doc);
      continue;
    }
    if (!v->is_array()) {
      out.push_back(doc);
      continue;
    }
    bool through_documents = true;  // lookup_exact may also have stepped through an array
    const Document* walk = &doc;
    for (size_t i = 0; i + 1 < parts.size() && through_documents; ++i) {
      const Value* child = walk->get(parts[i]);
      through_documents = child != nullptr && child->is_document();
      if (through_documents) walk = &child->as_document();
    }
    if (!through_documents) {
      out.push_back(doc);
      continue;
    }
    for (const Value& element : v->as_array()) {
      Document copy = doc;
      Document* cur = &copy;
      for (size_t i = 0; i + 1 < parts.size(); ++i)
        cur = &cur->get_mutable(parts[i])->mutable_document();
      cur->set(parts.back(), element);
      out.push_back(std::move(copy));
    }
  }
  return out;
}

// Parse-time checks of the stages parse_stage keeps nothing parsed for.
void validate_plain_stage(const std::string& name, const Value& spec) {
  if (is_document_stage(name)) {
    validate_document_stage(Document{{name, spec}});
  } else if (name == "$skip") {
    if (parse_count_arg(spec, 15972, "$skip") < 0) {
      fail(5107200, "invalid argument to $skip stage: Expected a non-negative number in: $skip: " +
                        render(spec));
    }
  } else if (name == "$limit") {
    if (parse_count_arg(spec, 15957, "the limit") <= 0) fail(15958, "the limit must be positive");
  } else if (name == "$group") {
    (void)parse_group(spec);
  } else if (!listed(kPipelineStages, name)) {
    fail(40324, "Unrecognized pipeline stage name: '" + name + "'");
  }
}

}  // namespace

struct Pipeline::Stage {
  std::string name;
  Value spec;
  std::optional<Document> document_stage;  // {name: spec}, for a document stage
  std::optional<Matcher> match;            // $match
  std::optional<Sort> sort;                // $sort
};

namespace {

Pipeline::Stage parse_stage(const Value& stage) {
  // The name first: it refuses a stage without exactly one field (40323) before at(0) reads it
  // (a braced initializer evaluates in order).
  Pipeline::Stage s{stage_name(stage), stage.as_document().at(0).second, {}, {}, {}};
  if (s.name == "$match") {
    if (!s.spec.is_document()) fail(15959, "the match filter must be an expression in an object");
    s.match = Matcher::parse(s.spec.as_document());
  } else if (s.name == "$sort") {
    if (!s.spec.is_document()) fail(15973, "the $sort key specification must be an object");
    if (s.spec.as_document().empty()) fail(15976, "$sort stage must have at least one sort key");
    s.sort = Sort::parse(s.spec.as_document());
  } else {
    validate_plain_stage(s.name, s.spec);
    if (is_document_stage(s.name)) s.document_stage = Document{{s.name, s.spec}};
  }
  return s;
}

std::vector<Document> run_stage(const Pipeline::Stage& stage, std::vector<Document> docs,
                                const EvalContext& ctx) {
  if (stage.document_stage) {
    for (Document& d : docs) d = apply_document_stage(*stage.document_stage, std::move(d), ctx);
    return docs;
  }
  if (stage.match) {
    std::erase_if(docs, [&](const Document& d) { return !stage.match->matches(d, ctx); });
    return docs;
  }
  if (stage.sort) {
    std::stable_sort(docs.begin(), docs.end(), [&](const Document& a, const Document& b) {
      return stage.sort->compare(a, b) < 0;
    });
    return docs;
  }
  const std::string& name = stage.name;
  if (name == "$skip" || name == "$limit") {
    auto n = static_cast<size_t>(*stage.spec.number_as_exact_int64());
    if (name == "$skip") {
      docs.erase(docs.begin(), docs.begin() + static_cast<long>(std::min(n, docs.size())));
    } else if (docs.size() > n) {
      docs.resize(n);
    }
    return docs;
  }
  if (name == "$count") return run_count(stage.spec, docs);
  if (name == "$unwind") return run_unwind(stage.spec, docs);
  assert(name == "$group");
  return run_group(stage.spec, std::move(docs), ctx);
}

}  // namespace

Pipeline Pipeline::parse(const Array& stages) {
  if (stages.size() > kPipelineStagesMax) {
    fail(code::kFailedToParse, "Pipeline length must be no longer than 1000 stages");
  }
  auto parsed = std::make_shared<std::vector<Stage>>();
  parsed->reserve(stages.size());
  for (const Value& stage : stages) parsed->push_back(parse_stage(stage));
  Pipeline pipeline;
  pipeline.stages_ = std::move(parsed);
  return pipeline;
}

std::vector<Document> Pipeline::run(std::vector<Document> input, const EvalContext& ctx) const {
  if (!stages_) return input;  // a default-constructed Pipeline has no stages
  for (const Stage& stage : *stages_) {
    input = run_stage(stage, std::move(input), ctx);
    for (const Document& doc : input) refuse_deeper_than_bson(doc);
  }
  return input;
}

void validate_pipeline(const Array& stages) {
  (void)Pipeline::parse(stages);
}

std::string stage_name_of(const Value& stage) {
  return stage_name(stage);
}

std::vector<Document> run_pipeline(const Array& stages, std::vector<Document> input,
                                   const EvalContext& ctx) {
  return Pipeline::parse(stages).run(std::move(input), ctx);
}

}  // namespace mongosim::query
