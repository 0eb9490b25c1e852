#include "data/change_events.h"

#include "base/command_error.h"
#include "base/error_codes.h"
#include "bson/codec.h"
#include "query/update_description.h"

namespace mongosim::data {

namespace {

struct Namespace {
  std::string db;
  std::string coll;
};

Namespace split(const std::string& ns) {
  size_t dot = ns.find('.');
  if (dot == std::string::npos) return {ns, ""};
  return {ns.substr(0, dot), ns.substr(dot + 1)};
}

// _id, operationType, clusterTime and wallTime: the head every event starts with.
bson::Document event_head(const ResumeToken& token, const char* operation_type,
                          const OplogEntry& e) {
  return bson::Document{{"_id", bson::V(token.to_document())},
                        {"operationType", bson::V(operation_type)},
                        {"clusterTime", bson::Value::timestamp(e.optime.ts)},
                        {"wallTime", bson::Value::date(e.wall_ms)}};
}

bson::Document ns_document(const Namespace& ns) {
  bson::Document d{{"db", bson::V(ns.db)}};
  if (!ns.coll.empty()) d.append("coll", bson::V(ns.coll));
  return d;
}

[[noreturn]] void image_required(const char* which, const bson::Document& event) {
  throw CommandError(code::kNoMatchingDocument,
                     std::string("Change stream was configured to require a ") + which +
                         " for all update, delete and replace events, but the " + which +
                         " was not found for event: " + bson::to_json(event));
}

// fullDocumentBeforeChange for update, replace and delete events: mongosim keeps no pre-images
// for change streams, so "whenAvailable" shows null and "required" fails.
void add_pre_image(const ChangeStreamSpec& spec, bson::Document& event) {
  if (spec.before_change == BeforeChangeMode::kOff) return;
  if (spec.before_change == BeforeChangeMode::kRequired) image_required("pre-image", event);
  event.append("fullDocumentBeforeChange", bson::Value::null());
}

// An update entry's updateDescription field, or nullopt when mongod logs it as a replacement.
std::optional<bson::Value> describe(const OplogEntry& e, const bson::Document& key) {
  // Without a pre-image (an update applied to a missing document) only _id is known before.
  const bson::Document& pre = e.pre_image ? *e.pre_image : key;
  std::optional<query::UpdateDescription> d =
      e.update_kind == UpdateKind::kOperators
          ? std::optional(query::describe_operator_update(pre, e.o))
          : query::describe_pipeline_update(pre, e.o);
  if (!d) return std::nullopt;
  return bson::V(d->to_document());
}

ChangeEvent crud_event(const OplogEntry& e, const Namespace& ns, const ChangeStreamSpec& spec,
                       const DocumentLookup& lookup) {
  ResumeToken token{e.optime.ts, ResumeToken::Kind::kEvent};
  const bson::Value* id =
      (e.op == 'u' && e.o2 ? *e.o2 : e.o).get("_id");  // asserted present by the write path
  bson::Document key{{"_id", id != nullptr ? *id : bson::Value::null()}};
  const bson::Value* description = nullptr;  // the updateDescription field, if an update
  const char* type = e.op == 'i' ? "insert" : e.op == 'd' ? "delete" : "replace";
  if (e.op == 'u' && e.update_kind != UpdateKind::kReplacement) {
    if (!e.described) e.described = describe(e, key);
    if (*e.described) description = &**e.described;
    if (description) type = "update";
  }
  bson::Document event = event_head(token, type, e);
  if (e.op == 'i' || (e.op == 'u' && !description)) {
    event.append("fullDocument", bson::V(e.o));
  } else if (description && spec.full_document != FullDocumentMode::kDefault) {
    std::optional<bson::Document> post;
    if (spec.full_document == FullDocumentMode::kUpdateLookup) {
      post = lookup(ns.db, ns.coll, *key.get("_id"));
    } else if (spec.full_document == FullDocumentMode::kRequired) {
      image_required("post-image", event);
    }
    event.append("fullDocument", post ? bson::V(std::move(*post)) : bson::Value::null());
  }
  event.append("ns", bson::V(ns_document(ns)));
  event.append("documentKey", bson::V(std::move(key)));
  if (description) event.append("updateDescription", *description);
  if (e.op != 'i') add_pre_image(spec, event);
  return ChangeEvent{token, std::move(event), false};
}

ChangeEvent invalidate_event(const OplogEntry& e) {
  ResumeToken token{e.optime.ts, ResumeToken::Kind::kInvalidate};
  return ChangeEvent{token, event_head(token, "invalidate", e), true};
}

std::vector<ChangeEvent> command_events(const OplogEntry& e, const std::string& db,
                                        const ChangeStreamSpec& spec) {
  std::vector<ChangeEvent> out;
  ResumeToken token{e.optime.ts, ResumeToken::Kind::kEvent};
  if (const bson::Value* drop = e.o.get("drop"); drop != nullptr && drop->is_string()) {
    Namespace ns{db, drop->as_string()};
    if (!spec.watches(ns.db, ns.coll)) return out;
    bson::Document event = event_head(token, "drop", e);
    event.append("ns", bson::V(ns_document(ns)));
    out.push_back(ChangeEvent{token, std::move(event), false});
    if (spec.scope == StreamScope::kCollection) out.push_back(invalidate_event(e));
  } else if (e.o.has("dropDatabase")) {
    // A collection stream saw its collection's own drop entry first.
    if (spec.scope == StreamScope::kCollection || !spec.watches_database(db)) return out;
    bson::Document event = event_head(token, "dropDatabase", e);
    event.append("ns", bson::V(ns_document(Namespace{db, ""})));
    out.push_back(ChangeEvent{token, std::move(event), false});
    if (spec.scope == StreamScope::kDatabase) out.push_back(invalidate_event(e));
  }
  return out;
}

}  // namespace

std::vector<ChangeEvent> events_for(const OplogEntry& entry, const ChangeStreamSpec& spec,
                                    const DocumentLookup& lookup) {
  Namespace ns = split(entry.ns);
  switch (entry.op) {
    case 'i':
    case 'u':
    case 'd':
      if (!spec.watches(ns.db, ns.coll)) return {};
      return {crud_event(entry, ns, spec, lookup)};
    case 'c':
      return command_events(entry, ns.db, spec);
    default:
      return {};
  }
}

}  // namespace mongosim::data
