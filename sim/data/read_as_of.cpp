#include "data/read_as_of.h"

#include <map>
#include <optional>

#include "query/query.h"

namespace mongosim::data {

namespace {

constexpr int32_t kReadConcernMajorityNotAvailableYet = 134;

struct IdLess {
  bool operator()(const bson::Value& a, const bson::Value& b) const {
    return query::compare_values(a, b) < 0;
  }
};

// The working set of one collection while entries are undone: documents by _id, and the
// natural order they will be returned in.
struct View {
  std::vector<std::optional<bson::Document>> slots;  // nullopt: absent at the point
  std::map<bson::Value, size_t, IdLess> by_id;

  void set(const bson::Value& id, std::optional<bson::Document> doc) {
    auto it = by_id.find(id);
    if (it != by_id.end()) {
      slots[it->second] = std::move(doc);
    } else if (doc) {
      by_id.emplace(id, slots.size());
      slots.push_back(std::move(doc));
    }
  }
};

[[noreturn]] void unavailable(const std::string& why) {
  throw CommandError(kReadConcernMajorityNotAvailableYet,
                     "Read concern majority reads are currently not possible: " + why);
}

const bson::Value& id_of(const OplogEntry& e) {
  const bson::Document& key = e.op == 'u' && e.o2 ? *e.o2 : e.o;
  const bson::Value* id = key.get("_id");
  if (id == nullptr) unavailable("oplog entry without _id on " + e.ns);
  return *id;
}

void undo(View& view, const OplogEntry& e) {
  switch (e.op) {
    case 'i':
      view.set(id_of(e), std::nullopt);
      break;
    case 'u':
    case 'd':
      if (!e.pre_image) unavailable("no pre-image for an entry on " + e.ns);
      view.set(id_of(e), *e.pre_image);
      break;
    default:  // commands and no-ops leave documents alone
      break;
  }
}

bool oplog_reaches(const Store::Impl& impl, bool reached_point) {
  // Without the entry at the point, the oplog must hold the whole history; a capped oplog may
  // have dropped its oldest entries.
  return reached_point || impl.oplog.dropped_through() == bson::Timestamp{};
}

// Undoes, newest first, the entries of `ns` after `point` that `concerns` accepts; throws
// (134) when the oplog no longer reaches back to the point.
template <typename Concerns>
void undo_back_to(Store::Impl& impl, View& view, const std::string& ns, OpTime point,
                  const Concerns& concerns) {
  const auto& entries = impl.oplog.entries();
  bool reached_point = false;
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (it->optime <= point) {
      reached_point = true;
      break;
    }
    if (it->ns == ns && concerns(*it)) undo(view, *it);
  }
  if (!oplog_reaches(impl, reached_point)) {
    unavailable("the oplog no longer reaches back to the majority commit point");
  }
}

}  // namespace

std::optional<bson::Document> document_as_of(Store::Impl& impl, const std::string& db,
                                             const std::string& coll, const bson::Value& id,
                                             OpTime point) {
  View view;
  if (Collection* c = impl.find_collection(db, coll)) {
    if (auto rid = c->find_id(id)) view.set(id, c->get(*rid));
  }
  undo_back_to(impl, view, db + "." + coll, point, [&](const OplogEntry& e) {
    return (e.op == 'i' || e.op == 'u' || e.op == 'd') && query::compare_values(id_of(e), id) == 0;
  });
  if (view.slots.empty()) return std::nullopt;
  return std::move(view.slots.front());
}

std::vector<bson::Document> documents_as_of(Store::Impl& impl, const std::string& db,
                                            const std::string& coll, OpTime point) {
  View view;
  if (Collection* c = impl.find_collection(db, coll)) {
    for (const auto& [rid, doc] : c->records()) view.set(*doc.get("_id"), doc);
  }
  undo_back_to(impl, view, db + "." + coll, point, [](const OplogEntry&) { return true; });
  std::vector<bson::Document> out;
  for (auto& slot : view.slots) {
    if (slot) out.push_back(std::move(*slot));
  }
  return out;
}

}  // namespace mongosim::data
