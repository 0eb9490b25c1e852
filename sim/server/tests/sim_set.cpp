#include "server/tests/sim_set.h"

namespace mongosim::testing {

std::vector<Document> read_bson_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<Document> out;
  size_t offset = 0;
  while (offset + 4 <= bytes.size()) {
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data()) + offset;
    int32_t length = bson::peek_document_length(p, bytes.size() - offset);
    if (length <= 0 || static_cast<size_t>(length) > bytes.size() - offset) {
      throw std::runtime_error("bad document at offset " + std::to_string(offset) + " of " + path);
    }
    auto decoded = bson::decode_document(p, static_cast<size_t>(length));
    if (!decoded.doc) throw std::runtime_error(path + ": " + decoded.error);
    out.push_back(*decoded.doc);
    offset += static_cast<size_t>(length);
  }
  return out;
}

std::optional<Document> SimSet::insert(int i, const Document& doc,
                                       const Document& write_concern) const {
  return command(i,
                 Document{{"insert", V("c")},
                          {"documents", V(bson::Array{V(doc)})},
                          {"writeConcern", V(write_concern)}},
                 "db");
}

// Each attempt inserts a new _id: an attempt answered with a write-concern error, or not at
// all, may still have been applied and replicate (an indeterminate write), and retrying the
// same _id would then fail with E11000 forever although the set takes writes.
int SimSet::wait_for_majority_write(std::optional<Document>* last) const {
  const Document majority{{"w", V("majority")}, {"wtimeout", V(int32_t{5000})}};
  int primary_index = -1;
  int attempt = 0;
  std::optional<Document> reply;
  const bool taken = poll_until(after(kDurableConvergeTimeout), [&] {
    primary_index = primary();
    if (primary_index < 0) return false;
    std::string id = "majority-probe-" + std::to_string(++attempt);
    reply = insert(primary_index, Document{{"_id", V(id)}}, majority);
    return write_ok(reply);
  });
  if (last != nullptr) *last = reply;
  return taken ? primary_index : -1;
}

std::optional<std::vector<std::string>> SimSet::ids(int i) const {
  auto reply =
      command(i,
              Document{{"find", V("c")},
                       {"batchSize", V(int32_t{100000})},
                       {"$readPreference", V(Document{{"mode", V("secondaryPreferred")}})}},
              "db");
  if (!reply_is_ok(reply)) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& d : reply->get("cursor")->as_document().get("firstBatch")->as_array()) {
    out.push_back(bson::to_json(*d.as_document().get("_id")));
  }
  return out;
}

std::string SimSet::state(int i) const {
  auto h = command(i, Document{{"hello", V(1)}});
  if (!h) return "";
  if (h->get("isWritablePrimary")->truthy()) return "PRIMARY";
  const bson::Value* s = h->get("secondary");
  return s != nullptr && s->truthy() ? "SECONDARY" : "OTHER";
}

bool SimSet::has_document(int i, const std::string& db, const std::string& coll,
                          const bson::Value& id) const {
  auto found = command(i,
                       Document{{"find", V(coll)},
                                {"filter", V(Document{{"_id", id}})},
                                {"$readPreference", V(Document{{"mode", V("nearest")}})}},
                       db);
  return reply_is_ok(found) &&
         found->get("cursor")->as_document().get("firstBatch")->as_array().size() == 1;
}

int64_t SimSet::term(int i) const {
  auto status = command(i, Document{{"replSetGetStatus", V(int32_t{1})}});
  return reply_is_ok(status) ? status->get("term")->as_int64() : -1;
}

int64_t fail_point(SimSet& set, int i, const std::string& name, bson::Value mode, Document data) {
  auto reply = set.command(i, Document{{"configureFailPoint", V(name)},
                                       {"mode", std::move(mode)},
                                       {"data", V(std::move(data))}});
  if (!reply_is_ok(reply)) throw std::runtime_error("configureFailPoint failed: " + show(reply));
  return static_cast<int64_t>(reply->get("count")->number_as_double());
}

void stop_fetcher(SimSet& set, int i) {
  int64_t before = fail_point(set, i, "stopReplProducer", V("alwaysOn"));
  if (!poll_until(after(kDurableConvergeTimeout),
                  [&] { return fail_point(set, i, "stopReplProducer", V("alwaysOn")) > before; })) {
    throw std::runtime_error("member " + std::to_string(i) +
                             "'s fetcher never reached stopReplProducer: an earlier fetch may "
                             "still deliver");
  }
}

}  // namespace mongosim::testing
