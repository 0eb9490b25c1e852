// The query, update and aggregation engine: pure functions over bson::Document values
// (docs/mongodb-behaviour.md, Query engine). No storage, no locking, no I/O: the data layer calls
// these while holding its own locks, so everything here must be deterministic given its inputs.
//
// Errors in user input (a bad operator, a type mismatch) throw CommandError with the code and
// message real MongoDB 7.0 uses.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bson/value.h"

namespace mongosim::query {

using bson::Array;
using bson::Document;
using bson::Value;

// BSON comparison order (docs/mongodb-behaviour.md, Comparison order): <0, 0, >0. Numbers of any
// type compare by value; other types compare by their canonical type order first. Used by sort,
// $min/$max, $lt..., unique indexes.
int compare_values(const Value& a, const Value& b);

// Everything an evaluation may read besides the document itself.
// What expressions of one command read and spend. One per command, used by one thread: the
// step count is spent through const references (mutable).
struct EvalContext {
  int64_t now_ms = 0;            // $$NOW and $currentDate
  bson::Timestamp cluster_time;  // $$CLUSTER_TIME
  // The command's maxTimeMS as a point on the steady clock: evaluation past it fails with 50
  // (MaxTimeMSExpired), checked every kDeadlineCheckSteps operator evaluations.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  mutable uint32_t steps = 0;
};
inline constexpr uint32_t kDeadlineCheckSteps = 1024;

// A parsed query filter.
class Matcher {
 public:
  // Throws CommandError (BadValue 2, FailedToParse 9, ...) for an invalid filter.
  static Matcher parse(const Document& filter);
  bool matches(const Document& doc, const EvalContext& ctx) const;
  // True if the filter uses $expr anywhere (an inserting upsert then fails with 224).
  bool uses_expr() const;
  // The filter as given.
  const Document& filter() const;

  struct Node;  // implementation detail

 private:
  std::shared_ptr<const Node> root_;
  Document filter_;
  bool uses_expr_ = false;
};

// The document an upsert starts from before the update applies (docs/mongodb-behaviour.md, Upsert
// documents): the filter's equality conditions on top-level and dotted fields, with $and flattened.
// Throws CommandError for conflicting or non-viable paths (e.g. NotSingleValueField 54,
// PathNotViable 28).
Document upsert_seed(const Document& filter);

// A parsed update: a replacement document, an operator document ($set, $inc, ...) or an
// aggregation pipeline (an array of stages).
class Update {
 public:
  enum class Kind { kReplacement, kOperators, kPipeline };
  // u: the update document or pipeline array. array_filters: the arrayFilters option.
  // Throws CommandError for invalid updates (FailedToParse 9, ConflictingUpdateOperators 40...).
  static Update parse(const Value& u, const std::optional<Array>& array_filters = std::nullopt);
  Kind kind() const { return kind_; }

  // Applies the update to doc and returns the new document. is_upsert_insert: the document is
  // being inserted by an upsert ($setOnInsert applies). Replacement keeps doc's _id. Throws
  // CommandError on misuse (TypeMismatch 14 for $inc on a string, ImmutableField 66 when _id
  // would change, ...).
  Document apply(const Document& doc, bool is_upsert_insert, const EvalContext& ctx) const;

  struct Impl;  // implementation detail

 private:
  Kind kind_ = Kind::kOperators;
  std::shared_ptr<const Impl> impl_;
};

// find/findAndModify projection ({a: 1}, {a: 0}, {_id: 0, ...}, expressions), and a pipeline's
// $project: there an operator object is always an expression ({$slice: ["$a", 2]}), where find
// would read the projection operators $slice, $elemMatch and $meta (not supported).
class Projection {
 public:
  enum class Of { kFind, kPipeline };
  static Projection parse(const Document& spec, Of of = Of::kFind);  // throws CommandError
  Document apply(const Document& doc, const EvalContext& ctx) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

// A sort specification ({a: 1, b: -1}); compares documents in MongoDB order, with array
// fields sorting by their min (ascending) or max (descending) element.
class Sort {
 public:
  static Sort parse(const Document& spec);  // throws CommandError
  bool empty() const { return keys_.empty(); }
  // <0 if a sorts before b.
  int compare(const Document& a, const Document& b) const;

 private:
  std::vector<std::pair<std::string, int>> keys_;
};

// Evaluates an aggregation expression against root ($$ROOT / $$CURRENT).
Value evaluate(const Value& expression, const Document& root, const EvalContext& ctx);

// An aggregation pipeline (the subset in docs/mongodb-behaviour.md, sections "Expressions" and
// "Update pipelines", plus $match, $sort, $skip, $limit, $count, $unwind, $group with $sum),
// parsed once and run over input documents as often as wanted: a change stream runs its stages
// once per event and stream, and parsing its $match filters each time was a fifth of mongosim's
// CPU under 32 waiting streams. parse() checks every stage before anything runs, as mongod does
// (unknown stage 40324, more than 1000 stages, a stage's own parse errors), and throws
// CommandError. Immutable once parsed; copies share the parsed stages; run() from any thread.
class Pipeline {
 public:
  static Pipeline parse(const Array& stages);
  std::vector<Document> run(std::vector<Document> input, const EvalContext& ctx) const;

  struct Stage;  // implementation detail

 private:
  std::shared_ptr<const std::vector<Stage>> stages_;
};

// Pipeline::parse(stages), for its errors only.
void validate_pipeline(const Array& stages);
// The name of a stage {$name: spec}; throws CommandError 14 for a non-document, 40323 for a
// document without exactly one field.
std::string stage_name_of(const Value& stage);

// Pipeline::parse(stages).run(input, ctx).
std::vector<Document> run_pipeline(const Array& stages, std::vector<Document> input,
                                   const EvalContext& ctx);

// Values at a dotted path, traversing arrays the way queries do ("a.b" over [{b:1},{b:2}]
// yields 1 and 2). Used by index key extraction.
// An array at the end of the path yields its elements (an empty array yields itself, []);
// a missing field yields nothing.
std::vector<Value> values_at_path(const Document& doc, std::string_view dotted_path);

}  // namespace mongosim::query
