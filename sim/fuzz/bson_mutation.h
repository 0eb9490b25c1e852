// A structure-aware edit of a wire input for the fuzz driver: one element of one OP_MSG body gets
// a value of another type (or another boundary value), or is removed, and every length around it
// is fixed. A byte edit that changes a type byte leaves the value's bytes behind and almost always
// fails BSON decoding; this one reaches the command's own checks of each field's type, which is
// where a value of an unexpected type once ended a member (a 32-bit txnNumber).
//
// Pure functions of the input and the generator; no I/O. Thread rules: none (no shared state).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace mongosim::fuzz {

// Elements deeper than this in a body are never picked (a body may nest up to 200 levels).
inline constexpr int kMaxEditDepth = 8;

// Picks one OP_MSG of `in` whose body decodes and one element of that body (at depth <=
// kMaxEditDepth), and replaces its value with one drawn from a palette of boundary values of every
// BSON type (never one identical to it), or removes it; re-encodes the body and fixes the message's
// length. A checksum is dropped with its flag bit (it would no longer match). Messages after a
// malformed frame are not considered. Returns false, `in` unchanged, when there is no such message.
bool edit_one_element(std::vector<uint8_t>& in, std::mt19937_64& rng);

}  // namespace mongosim::fuzz
