// Arithmetic on BSON numbers with mongod's type promotion: int32 op int32 stays int32 unless it
// overflows (then int64); int64 op int64 that overflows becomes double in expressions and is an
// error for update operators; anything with a double is double. decimal128 is computed as
// double (mongosim does no decimal arithmetic). Internal to the query engine.
#pragma once

#include "query/query.h"

namespace mongosim::query {

struct NumericResult {
  Value value;
  bool int64_overflow = false;  // the exact result did not fit in int64; value is a double
};

// Preconditions: both operands are numbers.
NumericResult add_numbers(const Value& a, const Value& b);
NumericResult subtract_numbers(const Value& a, const Value& b);
NumericResult multiply_numbers(const Value& a, const Value& b);

// The "zero" of a number's type ($mul on a missing field stores 0 of the operand's type).
Value zero_like(const Value& number);

}  // namespace mongosim::query
