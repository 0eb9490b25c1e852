// The tree's one owner of libbson documents: every libmongoc caller (mongolock, the harness,
// the client kit, the benchmarks) holds a bson_t through these two classes, never by hand.
//
//   Bson       owns one heap bson_t (bson_new, BCON_NEW, bson_new_from_json, bson_copy); may be
//              empty (no document), which get() reports as nullptr.
//   BsonReply  storage for a libmongoc reply out-parameter: libmongoc initializes the document
//              it is given whether the call succeeds or not, so out() hands over an empty,
//              statically initialized document (which owns no memory: overwriting it leaks
//              nothing) and the destructor frees whatever the call put there.
//
// Header only, built into each target that includes it: mongolock takes it at build time
// (target mongolock_bson_owner, never installed), so the installed library does not depend on
// it. std::unique_ptr<bson_t> would trip -Wignored-attributes on bson_t's alignment
// attribute, hence the small classes. Thread rules: one thread at a time per object, except a
// document no one writes after it is built, which any threads may read at once (libbson only
// reads a source document): release_command's hand-over pipeline, built once per process.
#pragma once

#include <bson/bson.h>

#include <cassert>

namespace mongolock::bson {

class Bson {
 public:
  Bson() = default;
  // Takes ownership of a heap document (or nullptr: empty).
  explicit Bson(bson_t* doc) : doc_(doc) {}
  Bson(Bson&& other) noexcept : doc_(other.doc_) { other.doc_ = nullptr; }
  Bson& operator=(Bson&& other) noexcept {
    if (this != &other) {
      reset();
      doc_ = other.doc_;
      other.doc_ = nullptr;
    }
    return *this;
  }
  Bson(const Bson&) = delete;
  Bson& operator=(const Bson&) = delete;
  ~Bson() { reset(); }

  bson_t* get() const { return doc_; }
  const bson_t& operator*() const {
    assert(doc_ != nullptr && "dereferencing an empty Bson");
    return *doc_;
  }
  explicit operator bool() const { return doc_ != nullptr; }

 private:
  void reset() {
    if (doc_ != nullptr) bson_destroy(doc_);
    doc_ = nullptr;
  }
  bson_t* doc_ = nullptr;
};

inline Bson make_bson() {
  return Bson(bson_new());
}

class BsonReply {
 public:
  BsonReply() = default;
  BsonReply(const BsonReply&) = delete;
  BsonReply& operator=(const BsonReply&) = delete;
  ~BsonReply() { bson_destroy(&doc_); }

  // For the libmongoc call's reply argument; once per object (a second call would drop the
  // first reply's memory).
  bson_t* out() {
    assert(!handed_out_ && "a BsonReply takes one reply");
    handed_out_ = true;
    return &doc_;
  }
  const bson_t* get() const { return &doc_; }
  // The reply as an owned heap document (a copy; this object keeps and frees its own).
  Bson copy() const { return Bson(bson_copy(&doc_)); }

 private:
  bson_t doc_ = BSON_INITIALIZER;
  bool handed_out_ = false;
};

}  // namespace mongolock::bson
