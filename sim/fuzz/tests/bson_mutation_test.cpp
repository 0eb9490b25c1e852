// The driver's structure-aware edit (sim/fuzz/bson_mutation.h): every edit leaves whole, framed
// messages whose bodies decode, changes one body by exactly one element (an edit that changed
// nothing would fail here), and reaches the fields a
// command checks by type (a txnNumber retyped to a 32-bit int, the value that once ended a
// member).
//
// What this leaves out: whether edited inputs find anything (fuzz.wire.mutations runs them).
#include "fuzz/bson_mutation.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "bson/codec.h"
#include "server/wire.h"

namespace mongosim::fuzz {
namespace {

using Input = std::vector<uint8_t>;

Input corpus_file(const std::string& name) {
  std::ifstream file(std::string(LOCKLAB_FUZZ_CORPUS) + "/" + name, std::ios::binary);
  Input bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (bytes.empty()) ADD_FAILURE() << "no corpus file " << name << " in " << LOCKLAB_FUZZ_CORPUS;
  return bytes;
}

// The OP_MSG bodies of a well-framed input, in order; fails the test on a frame that does not
// chain to the end or a body that does not decode.
std::vector<bson::Document> bodies(const Input& in) {
  std::vector<bson::Document> out;
  size_t at = 0;
  while (at < in.size()) {
    if (in.size() - at < server::kHeaderBytes) {
      ADD_FAILURE() << "a partial header at byte " << at;
      break;
    }
    server::MessageHeader h = server::decode_header(in.data() + at);
    if (h.message_length < 16 || static_cast<size_t>(h.message_length) > in.size() - at) {
      ADD_FAILURE() << "a frame that does not fit at byte " << at;
      break;
    }
    if (h.op_code == server::opcode::kMsg) {
      const size_t body = at + server::kHeaderBytes + 5;
      const int32_t length = bson::peek_document_length(in.data() + body, in.size() - body);
      bson::DecodeResult d = bson::decode_document(in.data() + body, static_cast<size_t>(length));
      if (!d.doc)
        ADD_FAILURE() << "a body that does not decode at byte " << body << ": " << d.error;
      if (d.doc) out.push_back(std::move(*d.doc));
    }
    at += static_cast<size_t>(h.message_length);
  }
  return out;
}

// Elements (at every depth) of two documents that differ: a changed value counts once, a removed
// element once. Below the top level, a document or array replaced by another of its type (the
// palette has both) is one change, whatever it holds.
int differences(const bson::Value& a, const bson::Value& b);

int document_differences(const bson::Document& a, const bson::Document& b) {
  if (a.size() != b.size()) return a.size() > b.size() ? 1 : 99;  // one removed, or something added
  int n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.at(i).first != b.at(i).first) return 99;
    n += differences(a.at(i).second, b.at(i).second);
  }
  return n;
}

int differences(const bson::Value& a, const bson::Value& b) {
  if (a.type() != b.type()) return 1;
  if (a.is_document()) {
    int n = document_differences(a.as_document(), b.as_document());
    return n >= 99 ? 1 : n;
  }
  if (a.is_array()) {
    const auto& x = a.as_array();
    const auto& y = b.as_array();
    if (x.size() != y.size()) return 1;
    int n = 0;
    for (size_t i = 0; i < x.size(); ++i) n += differences(x[i], y[i]);
    return n;
  }
  return a.identical(b) ? 0 : 1;
}

TEST(BsonMutation, EveryEditLeavesWholeMessagesAndChangesOneElementOfOneBody) {
  for (const char* name : {"set-lock-client", "set-member-commands", "find-and-modify-pipeline",
                           "insert-sequence-checksum", "handshake-op-query"}) {
    const Input original = corpus_file(name);
    const std::vector<bson::Document> before = bodies(original);
    for (uint64_t seed = 0; seed < 300; ++seed) {
      std::mt19937_64 rng(seed);
      Input edited = original;
      ASSERT_TRUE(edit_one_element(edited, rng)) << name << " has OP_MSG bodies";
      const std::vector<bson::Document> after = bodies(edited);
      ASSERT_EQ(after.size(), before.size()) << name << " seed " << seed;
      int changed = 0;
      for (size_t i = 0; i < before.size(); ++i)
        changed += document_differences(before[i], after[i]);
      EXPECT_EQ(changed, 1) << name << " seed " << seed;
    }
  }
}

TEST(BsonMutation, NoOpMsgBodyIsNoEdit) {
  Input nothing = {1, 2, 3};
  std::mt19937_64 rng(1);
  EXPECT_FALSE(edit_one_element(nothing, rng));
  EXPECT_EQ(nothing, (Input{1, 2, 3}));
}

TEST(BsonMutation, ATxnNumberIsRetypedToA32BitInt) {
  const Input original = corpus_file("retryable-write");
  int retyped = 0;
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    std::mt19937_64 rng(seed);
    Input edited = original;
    ASSERT_TRUE(edit_one_element(edited, rng));
    for (const bson::Document& body : bodies(edited)) {
      const bson::Value* txn = body.get("txnNumber");
      if (txn != nullptr && txn->type() == bson::Type::kInt32) ++retyped;
    }
  }
  EXPECT_GT(retyped, 0);
}

}  // namespace
}  // namespace mongosim::fuzz
