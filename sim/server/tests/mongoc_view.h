// libmongoc as mongosim's server tests use it: the driver initialised once per test binary
// (mongoc_view.cpp registers the environment), a driver reply read as a bson::Document, and
// owning handles for the client, collection and change stream a test opens.
//
//   Client c = make_client(set.uri("serverSelectionTimeoutMS=20000"));
//   Document reply = to_document(bson_reply.get());
//
// Thread rules: libmongoc's (a client is used by one thread at a time).
#pragma once

#include <mongoc/mongoc.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "bson/codec.h"

namespace mongosim::testing {

struct ClientDeleter {
  void operator()(mongoc_client_t* c) const { mongoc_client_destroy(c); }
};
struct CollectionDeleter {
  void operator()(mongoc_collection_t* c) const { mongoc_collection_destroy(c); }
};
struct StreamDeleter {
  void operator()(mongoc_change_stream_t* s) const { mongoc_change_stream_destroy(s); }
};
using Client = std::unique_ptr<mongoc_client_t, ClientDeleter>;
using Collection = std::unique_ptr<mongoc_collection_t, CollectionDeleter>;
using Stream = std::unique_ptr<mongoc_change_stream_t, StreamDeleter>;

// A client for `uri`; throws naming the URI when libmongoc refuses it.
inline Client make_client(const std::string& uri) {
  mongoc_client_t* c = mongoc_client_new(uri.c_str());
  if (c == nullptr) throw std::runtime_error("bad URI " + uri);
  return Client(c);
}

// A libbson document decoded by mongosim's own codec; throws with the codec's reason.
inline bson::Document to_document(const bson_t* b) {
  auto decoded = bson::decode_document(bson_get_data(b), b->len);
  if (!decoded.doc) throw std::runtime_error(decoded.error);
  return *decoded.doc;
}

}  // namespace mongosim::testing
