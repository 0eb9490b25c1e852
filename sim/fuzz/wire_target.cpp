#include "fuzz/wire_target.h"

#include <cassert>
#include <deque>

#include "data/cursors.h"
#include "fuzz/fuzz_member.h"

namespace mongosim::fuzz {
namespace {

// The replSetInitiate sent ahead of the input: an empty config (this member alone, which makes
// it primary at once), or this member and one on port 2, which never answers (this member
// stays a secondary and serves the member-to-member commands of a set with a topology).
std::string set_prefix(Topology topology) {
  bson::Document config;
  if (topology == Topology::kSecondaryOfTwo) {
    auto member = [](int32_t id, const char* host) {
      return bson::V(bson::Document{{"_id", bson::V(id)}, {"host", bson::V(host)}});
    };
    config = bson::Document{
        {"_id", bson::V("fuzz")},
        {"members", bson::V(bson::Array{member(0, "127.0.0.1:1"), member(1, "127.0.0.1:2")})}};
  }
  return initiate_message(config);
}

}  // namespace

int64_t cursor_id(int n) {
  assert(n >= 1);
  data::CursorManager cursors(kCursorIdSeed);
  int64_t id = 0;
  for (int i = 0; i < n; ++i) {
    std::deque<bson::Document> two(2);  // one for the first batch, one left for the cursor
    id = cursors.open("fuzz.c", std::move(two), 1, false, 0)
             .get("cursor")
             ->as_document()
             .get("id")
             ->as_int64();
  }
  return id;
}

void run_wire_input(const uint8_t* data, size_t size) {
  if (size > kMaxInputBytes) return;
  for (Topology topology : kTopologies) serve_wire_input(data, size, topology, nullptr);
}

std::string serve_wire_input(const uint8_t* data, size_t size, Topology topology) {
  std::string replies;
  serve_wire_input(data, size, topology, &replies);
  return replies;
}

void serve_wire_input(const uint8_t* data, size_t size, Topology topology, std::string* replies) {
  silence_once();
  if (topology == Topology::kStandalone) {
    Standalone member;
    serve_connection(member.context(), {}, data, size, replies);
  } else {
    SetMember member;
    serve_connection(member.context(), set_prefix(topology), data, size, replies);
  }
}

}  // namespace mongosim::fuzz
