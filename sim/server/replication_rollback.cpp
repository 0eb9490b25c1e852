// Rollback (docs/mongodb-behaviour.md, Oplog and rollback): a member whose oplog diverged from its
// sync source's (a former primary with writes the majority never had) goes to ROLLBACK, finds the
// common point with the source, writes the current version of every document the divergent entries
// touched to <dbpath>/rollback/<collection uuid>/removed.<time>.bson, restores each of those
// documents to the source's version (mongod 4.4+ "recover to stable timestamp", emulated per
// document), truncates its oplog and journal after the common point, forgets the session records of
// the removed writes, and returns to SECONDARY to fetch again from the common point.
//
// Why per-document refetch is enough: every entry is idempotent in full-document form, and the
// fetcher re-applies all of the source's entries after the common point, so once it has caught up
// to the source's position at refetch time the data equals the source's. Until then it may hold a
// document version no oplog point explains: that position is persisted as minValid (DbPath), and
// below it the member does not stand for election nor serve majority reads.
//
// Runs on the fetcher thread, the only writer on a non-primary; the topology stays in ROLLBACK
// (state 9 in hello and replSetGetStatus) until on_rollback_complete().
#include <algorithm>
#include <cstdlib>

#include "base/error_codes.h"
#include "base/log.h"
#include "bson/codec.h"
#include "query/query.h"
#include "server/member_client.h"
#include "server/replication.h"
#include "server/replication_fields.h"

namespace mongosim::server {

using namespace replication_fields;

namespace {

constexpr int64_t kRollbackCommandTimeoutMs = 10'000;
constexpr int64_t kRollbackRetryMs = 500;
constexpr size_t kOptimesPerPage = 50'000;
constexpr size_t kDocumentsPerFetch = 500;

repl::RollbackEntry rollback_entry(const bson::Document& doc) {
  repl::RollbackEntry e;
  e.optime = OpTime{doc.get("ts")->as_timestamp(), int_field(doc, "t", -1)};
  std::string op = string_field(doc, "op");
  e.op = op.size() == 1 ? op[0] : 'n';
  e.ns = string_field(doc, "ns");
  const char* id_holder = e.op == 'u' ? "o2" : "o";
  if (e.op == 'i' || e.op == 'u' || e.op == 'd') {
    const bson::Value* holder = doc.get(id_holder);
    const bson::Value* id =
        holder != nullptr && holder->is_document() ? holder->as_document().get("_id") : nullptr;
    if (id == nullptr)
      throw std::runtime_error("oplog entry without " + std::string(id_holder) + "._id in " + e.ns);
    e.id = *id;
  }
  return e;
}

// One page of a refetch reply, read into `request`: false when it is malformed (an entry that is
// not {ns, _id[, doc]} / {ns, exists}, a document the page did not ask for, or a version whose _id
// is not the one asked), which the caller treats like no reply. The reply is another process's:
// nothing in it is read as another type, and nothing it names is restored unless asked for.
bool read_refetch_page(const bson::Array& docs, const bson::Array& exists,
                       const std::vector<repl::DocumentKey>& asked, size_t from, size_t to,
                       const bson::Array& asked_namespaces, data::RollbackRequest& request) {
  const auto was_asked = [&](const std::string& ns, const bson::Value& id) {
    for (size_t i = from; i < to; ++i) {
      if (asked[i].ns == ns && query::compare_values(asked[i].id, id) == 0) return true;
    }
    return false;
  };
  for (const auto& v : docs) {
    const bson::Value* id = v.is_document() ? v.as_document().get("_id") : nullptr;
    if (id == nullptr) return false;
    const bson::Document& d = v.as_document();
    data::RollbackDocument rd{string_field(d, "ns"), *id, std::nullopt};
    if (!was_asked(rd.ns, rd.id)) return false;
    if (const bson::Value* found = d.get("doc"); found != nullptr && found->is_document()) {
      const bson::Value* version_id = found->as_document().get("_id");
      if (version_id == nullptr || query::compare_values(*version_id, rd.id) != 0) return false;
      rd.source_version = found->as_document();
    }
    request.documents.push_back(std::move(rd));
  }
  for (const auto& v : exists) {
    if (!v.is_document()) return false;
    const bson::Document& d = v.as_document();
    const std::string ns = string_field(d, "ns");
    const bool ns_asked = std::any_of(asked_namespaces.begin(), asked_namespaces.end(),
                                      [&](const bson::Value& a) { return a.as_string() == ns; });
    if (!ns_asked) return false;  // a collection the member did not ask about is never dropped
    if (!bool_field(d, "exists")) request.drop_namespaces.push_back(ns);
  }
  return true;
}

OpTime next_after(OpTime t) {
  return OpTime{bson::Timestamp{t.ts.seconds, t.ts.increment + 1}, t.term};
}

// What the local side contributes to the plan.
struct LocalTail {
  std::vector<bson::Document> docs;  // oplog entries in [since, last], oldest first
  std::vector<repl::RollbackEntry> entries;
  OpTime last;
};

}  // namespace

std::optional<repl::RollbackPlan> ReplicationCoordinator::plan_against(const std::string& host,
                                                                       OpTime& local_last) {
  OpTime committed;
  {
    std::lock_guard lock(mutex_);
    committed = topology_->last_committed();
  }
  // Only the newest kMaxRollbackEntries + 1 entries can hold the common point of a rollback
  // that is allowed at all; never look below the commit point (it is shared by definition).
  LocalTail local;
  local.last = storage_.last_applied();
  std::vector<bson::Document> all = storage_.oplog_from(committed, SIZE_MAX);
  size_t skip =
      all.size() > repl::kMaxRollbackEntries + 1 ? all.size() - repl::kMaxRollbackEntries - 1 : 0;
  local.docs.assign(std::make_move_iterator(all.begin() + static_cast<std::ptrdiff_t>(skip)),
                    std::make_move_iterator(all.end()));
  for (const auto& d : local.docs) local.entries.push_back(rollback_entry(d));
  local_last = local.last;
  OpTime from = local.entries.empty() ? committed : local.entries.front().optime;

  std::vector<OpTime> remote;
  for (;;) {
    bson::Document cmd{{"replSetRollbackOptimes", bson::V(int32_t{1})},
                       {"from", bson::V(from.to_document())},
                       {"upTo", bson::V(local.last.to_document())},
                       {"limit", bson::V(static_cast<int64_t>(kOptimesPerPage))}};
    MemberReply reply = member_command(host, std::move(cmd), kRollbackCommandTimeoutMs);
    if (!reply_ok(reply)) return std::nullopt;
    const bson::Value* optimes = reply.body->get("optimes");
    if (optimes == nullptr || !optimes->is_array()) return std::nullopt;
    for (const auto& v : optimes->as_array()) {
      OpTime t = optime_field(bson::Document{{"optime", v}}, "optime");
      if (t.is_null()) return std::nullopt;  // a malformed reply: treated like no reply
      remote.push_back(t);
    }
    if (optimes->as_array().size() < kOptimesPerPage ||
        remote.size() > 2 * repl::kMaxRollbackEntries) {
      break;
    }
    from = next_after(remote.back());
  }
  log_event(Severity::kInfo, "ROLLBACK", 21603, "BackgroundSync", "Finding the common point",
            bson::Document{{"syncSource", bson::V(host)},
                           {"localEntries", bson::V(static_cast<int64_t>(local.entries.size()))},
                           {"remoteEntries", bson::V(static_cast<int64_t>(remote.size()))}});
  return repl::plan_rollback(local.entries, remote);
}

std::optional<data::RollbackRequest> ReplicationCoordinator::build_request(
    const std::string& host, const repl::RollbackPlan& plan, OpTime local_last) {
  data::RollbackRequest request;
  request.expected_last = local_last;
  refetch_top_ = OpTime{};
  request.common_point = plan.common_point;
  // Catalog entries after the common point: a collection created only on this branch is
  // dropped; a drop cannot be undone by refetching single documents.
  std::vector<std::string> created;
  for (const auto& doc : storage_.oplog_from(next_after(plan.common_point), SIZE_MAX)) {
    if (string_field(doc, "op") != "c") continue;
    const bson::Value* o = doc.get("o");
    if (o == nullptr || !o->is_document()) continue;
    const bson::Document& cmd = o->as_document();
    std::string db = string_field(doc, "ns").substr(0, string_field(doc, "ns").find('.'));
    if (cmd.has("drop") || cmd.has("dropDatabase")) {
      enter_resync_state(
          "a collection or database drop after the common point cannot be rolled "
          "back by refetching documents (" +
          bson::to_json(cmd) + ")");
      return std::nullopt;
    }
    if (const bson::Value* name = cmd.get("create"); name != nullptr && name->is_string()) {
      created.push_back(db + "." + name->as_string());
    }
  }
  for (size_t start = 0; start < plan.documents.size() || start == 0; start += kDocumentsPerFetch) {
    bson::Array keys;
    for (size_t i = start; i < std::min(plan.documents.size(), start + kDocumentsPerFetch); ++i) {
      keys.push_back(bson::V(
          bson::Document{{"ns", bson::V(plan.documents[i].ns)}, {"_id", plan.documents[i].id}}));
    }
    bson::Array namespaces;
    if (start == 0) {
      for (const auto& ns : created) namespaces.push_back(bson::V(ns));
    }
    bson::Document cmd{{"replSetRollbackFetch", bson::V(int32_t{1})},
                       {"documents", bson::V(std::move(keys))},
                       {"namespaces", bson::V(namespaces)}};
    MemberReply reply = member_command(host, std::move(cmd), kRollbackCommandTimeoutMs);
    if (!reply_ok(reply)) return std::nullopt;
    // minValid: the source's newest entry once it answered (its documents are at least that new).
    refetch_top_ = std::max(refetch_top_, optime_field(*reply.body, "lastApplied"));
    const bson::Value* docs = reply.body->get("documents");
    const bson::Value* exists = reply.body->get("namespaces");
    if (docs == nullptr || !docs->is_array() || exists == nullptr || !exists->is_array()) {
      return std::nullopt;
    }
    const size_t to = std::min(plan.documents.size(), start + kDocumentsPerFetch);
    if (!read_refetch_page(docs->as_array(), exists->as_array(), plan.documents, start, to,
                           namespaces, request)) {
      return std::nullopt;
    }
    if (plan.documents.empty()) break;
  }
  return request;
}

void ReplicationCoordinator::write_rollback_files(const data::RollbackOutcome& outcome) {
  for (const auto& removed : outcome.removed) {
    if (removed.documents.empty()) continue;
    bson::Document attrs{{"namespace", bson::V(removed.ns)},
                         {"uuid", removed.uuid},
                         {"documents", bson::V(static_cast<int64_t>(removed.documents.size()))}};
    if (dbpath_ == nullptr) {
      log_event(Severity::kWarning, "ROLLBACK", 21610, "BackgroundSync",
                "No --dbpath: removed documents are not written to a rollback file", attrs);
      continue;
    }
    attrs.append("file", bson::V(dbpath_->write_rollback_file(removed, now_ms())));
    log_event(Severity::kInfo, "ROLLBACK", 21609, "BackgroundSync",
              "Wrote the removed documents to a rollback file", attrs);
  }
}

void ReplicationCoordinator::record_min_valid(OpTime optime) {
  if (optime.is_null()) return;
  if (dbpath_ != nullptr) dbpath_->save_min_valid(optime);  // throws: retried
  std::lock_guard lock(mutex_);
  topology_->set_min_valid(std::max(topology_->min_valid(), optime));
  log_event(Severity::kInfo, "ROLLBACK", 21608, "BackgroundSync",
            "Set minValid: not electable and no majority reads until applied "
            "through it",
            bson::Document{{"minValid", bson::V(optime.to_document())}});
}

void ReplicationCoordinator::finish_rollback(OpTime common_point) {
  Actions actions;
  {
    std::lock_guard lock(mutex_);
    topology_->on_rollback_complete(now_ms(), common_point, common_point);
    reported_applied_ = common_point;
    reported_durable_ = common_point;
    actions = drain_locked();
  }
  perform(std::move(actions));
  log_event(Severity::kInfo, "REPL", 21358, "BackgroundSync", "Replica set state transition",
            bson::Document{{"newState", bson::V("SECONDARY")}, {"oldState", bson::V("ROLLBACK")}});
}

void ReplicationCoordinator::enter_resync_state(const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    needs_resync_ = true;
    mirror_state_locked();
  }
  log_event(Severity::kError, "ROLLBACK", 21675, "BackgroundSync",
            "Rollback cannot complete; this member is in RECOVERING and needs a resync: stop it, "
            "empty its dbpath and restart it",
            bson::Document{{"reason", bson::V(reason)}});
}

void ReplicationCoordinator::run_rollback(int source) {
  std::string host;
  OpTime committed;
  {
    std::lock_guard lock(mutex_);
    host = topology_->config().members[static_cast<size_t>(source)].host;
    committed = topology_->last_committed();
  }
  log_event(Severity::kInfo, "ROLLBACK", 21593, "BackgroundSync", "Transition to ROLLBACK",
            bson::Document{{"syncSource", bson::V(host)},
                           {"lastApplied", bson::V(storage_.last_applied().to_document())}});
  auto retry_later = [&](const std::string& why) {
    log_event(Severity::kWarning, "ROLLBACK", 21606, "BackgroundSync",
              "Rollback attempt failed; retrying", bson::Document{{"error", bson::V(why)}});
    sleep_ms(kRollbackRetryMs);
    std::lock_guard lock(mutex_);
    // The topology picks no sync source while in ROLLBACK: if the source went away, retry
    // against the primary this member now knows of.
    int primary = topology_->primary_index();
    bool primary_usable = primary >= 0 && primary != topology_->self_index() &&
                          topology_->member_is_up(now_ms(), primary);
    rollback_source_ = primary_usable ? primary : source;
  };
  try {
    OpTime local_last;
    std::optional<repl::RollbackPlan> plan = plan_against(host, local_last);
    if (!plan) return retry_later("the sync source did not answer with its oplog");
    if (plan->needs_resync) return enter_resync_state(plan->resync_reason);
    if (plan->common_point < committed) {
      // Log matching makes this impossible between members that follow the protocol:
      // majority-committed entries are on every future primary, so the source is not one (a
      // reply of no optimes at all gets here). Continuing would silently drop acknowledged
      // writes; mongod terminates. mongosim's choice: the member stops as after any rollback that
      // cannot complete (RECOVERING, needs a resync), changing nothing, its process alive.
      log_event(Severity::kError, "ROLLBACK", 21700, "BackgroundSync",
                "Rollback common point is before the commit point",
                bson::Document{{"commonPoint", bson::V(plan->common_point.to_document())},
                               {"commitPoint", bson::V(committed.to_document())}});
      return enter_resync_state(
          "the sync source's history does not hold this member's commit "
          "point (common point " +
          bson::to_json(plan->common_point.to_document()) + ")");
    }
    log_event(Severity::kInfo, "ROLLBACK", 21607, "BackgroundSync", "Rollback common point",
              bson::Document{{"commonPoint", bson::V(plan->common_point.to_document())},
                             {"entriesToUndo", bson::V(static_cast<int64_t>(plan->to_undo.size()))},
                             {"documents", bson::V(static_cast<int64_t>(plan->documents.size()))}});
    std::optional<data::RollbackRequest> request = build_request(host, *plan, local_last);
    if (!request) {
      bool resync = false;
      {
        std::lock_guard lock(mutex_);
        resync = needs_resync_;
      }
      if (!resync) retry_later("the sync source did not answer the document refetch");
      return;
    }
    record_min_valid(refetch_top_);  // before the data changes, as mongod orders it
    data::RollbackOutcome outcome;
    {
      // Like a fetched batch: only while nothing is published writable.
      ReplStateLock::Shared hold(repl_state_lock_);
      if (hold.state().writable) return retry_later("this member is a writable primary");
      outcome = storage_.roll_back(*request);
    }
    write_rollback_files(outcome);  // before the journal forgets the entries
    storage_.journal_truncation(plan->common_point);
    size_t removed_documents = 0;
    for (const auto& r : outcome.removed) removed_documents += r.documents.size();
    log_event(
        Severity::kInfo, "ROLLBACK", 21612, "BackgroundSync", "Rollback summary",
        bson::Document{
            {"syncSource", bson::V(host)},
            {"commonPoint", bson::V(plan->common_point.to_document())},
            {"oplogEntriesRemoved", bson::V(static_cast<int64_t>(outcome.oplog_entries_removed))},
            {"documentsWrittenToRollbackFiles", bson::V(static_cast<int64_t>(removed_documents))},
            {"retryableStatementsForgotten",
             bson::V(static_cast<int64_t>(outcome.statements_forgotten))}});
    finish_rollback(plan->common_point);
  } catch (const std::exception& e) {
    retry_later(e.what());
  }
}

bson::Document ReplicationCoordinator::handle_rollback_optimes(const bson::Document& body) {
  require_topology_of_this_set(body);
  OpTime from = optime_field(body, "from");
  OpTime up_to = optime_field(body, "upTo");
  auto limit = static_cast<size_t>(
      std::clamp<int64_t>(int_field(body, "limit", 1), 1, static_cast<int64_t>(kOptimesPerPage)));
  bson::Array optimes;
  for (const auto& e : storage_.oplog_from(from, limit)) {
    OpTime t{e.get("ts")->as_timestamp(), int_field(e, "t", -1)};
    if (up_to < t) break;
    optimes.push_back(bson::V(t.to_document()));
  }
  return bson::Document{{"optimes", bson::V(std::move(optimes))}};
}

bson::Document ReplicationCoordinator::handle_rollback_fetch(const bson::Document& body) {
  // Only a member of a set (with a topology) is a rollback source, and only for its own set: a
  // config installed since the wrapper's check must not let another set read what is written
  // under it.
  require_topology_of_this_set(body);
  const bson::Value* documents = body.get("documents");
  const bson::Value* namespaces = body.get("namespaces");
  if (documents == nullptr || !documents->is_array() || namespaces == nullptr ||
      !namespaces->is_array() || documents->as_array().size() > kDocumentsPerFetch) {
    throw CommandError(code::kBadValue, "replSetRollbackFetch needs 'documents' (at most " +
                                            std::to_string(kDocumentsPerFetch) +
                                            ") and 'namespaces' arrays");
  }
  bson::Array found;
  for (const auto& v : documents->as_array()) {
    const bson::Value* id = v.is_document() ? v.as_document().get("_id") : nullptr;
    if (id == nullptr) throw CommandError(code::kBadValue, "replSetRollbackFetch: key without _id");
    std::string ns = string_field(v.as_document(), "ns");
    bson::Document out{{"ns", bson::V(ns)}, {"_id", *id}};
    if (auto doc = storage_.find_by_id(ns, *id)) out.append("doc", bson::V(std::move(*doc)));
    found.push_back(bson::V(std::move(out)));
  }
  bson::Array exists;
  for (const auto& v : namespaces->as_array()) {
    if (!v.is_string()) throw CommandError(code::kBadValue, "replSetRollbackFetch: bad namespace");
    exists.push_back(bson::V(
        bson::Document{{"ns", v}, {"exists", bson::V(storage_.collection_exists(v.as_string()))}}));
  }
  return bson::Document{{"documents", bson::V(std::move(found))},
                        {"namespaces", bson::V(std::move(exists))},
                        {"lastApplied", bson::V(storage_.last_applied().to_document())}};
}

}  // namespace mongosim::server
