// The Store's durability and rollback surface: the journal attachment, the reads a sync source
// answers during another member's rollback, and the rollback itself (docs/mongodb-behaviour.md,
// Oplog and rollback).
#include <cassert>
#include <stdexcept>

#include "data/journal.h"
#include "data/store.h"
#include "data/store_impl.h"

namespace mongosim::data {

namespace {

std::pair<std::string, std::string> split_namespace(const std::string& ns) {
  size_t dot = ns.find('.');
  if (dot == std::string::npos) return {ns, std::string()};
  return {ns.substr(0, dot), ns.substr(dot + 1)};
}

RemovedDocuments& removed_for(std::vector<RemovedDocuments>& removed, const Collection& c) {
  for (auto& r : removed) {
    if (r.ns == c.ns()) return r;
  }
  removed.push_back(RemovedDocuments{c.ns(), c.uuid(), {}});
  return removed.back();
}

// Puts one document back to the sync source's version; the local version, if any, is kept
// in `removed` for the rollback file.
void restore_document(Store::Impl& impl, const RollbackDocument& d,
                      std::vector<RemovedDocuments>& removed) {
  auto [db, coll] = split_namespace(d.ns);
  Collection* c = impl.find_collection(db, coll);
  if (c == nullptr) {
    if (!d.source_version) return;
    // The collection was dropped in the rolled-back branch; the caller refuses that case.
    throw std::logic_error("rollback: collection " + d.ns + " is missing locally");
  }
  std::optional<RecordId> rid = c->find_id(d.id);
  if (rid) removed_for(removed, *c).documents.push_back(c->get(*rid));
  if (!d.source_version) {
    if (rid) c->erase(*rid);
    return;
  }
  // Unique indexes are not rechecked: the source's documents satisfied them there, and the
  // other rolled-back documents are being restored to the source's versions too.
  if (rid) {
    c->replace(*rid, *d.source_version);
  } else {
    c->insert(*d.source_version);
  }
}

}  // namespace

void Store::attach_journal(Journal* journal) {
  std::lock_guard lock(impl_->mu);
  impl_->journal = journal;
  impl_->journal_for_readers.store(journal);
}

OpTime Store::last_durable() const {
  // Without mu, like last_applied(): the journal's durable() has its own lock.
  Journal* journal = impl_->journal_for_readers.load();
  return journal != nullptr ? journal->durable() : impl_->oplog.published_last();
}

bool Store::wait_durable(OpTime optime) const {
  Journal* journal = nullptr;
  {
    std::lock_guard lock(impl_->mu);
    journal = impl_->journal;
  }
  return journal == nullptr || journal->wait_durable(optime);
}

std::vector<bson::Document> Store::oplog_from(OpTime from, size_t max_entries) const {
  std::lock_guard lock(impl_->mu);
  std::vector<bson::Document> out;
  for (const auto& e : impl_->oplog.entries()) {
    if (out.size() >= max_entries) break;
    if (from <= e.optime) out.push_back(e.to_document());
  }
  return out;
}

std::optional<bson::Document> Store::find_by_id(const std::string& ns,
                                                const bson::Value& id) const {
  std::lock_guard lock(impl_->mu);
  auto [db, coll] = split_namespace(ns);
  Collection* c = impl_->find_collection(db, coll);
  if (c == nullptr) return std::nullopt;
  std::optional<RecordId> rid = c->find_id(id);
  if (!rid) return std::nullopt;
  return c->get(*rid);
}

bool Store::collection_exists(const std::string& ns) const {
  std::lock_guard lock(impl_->mu);
  auto [db, coll] = split_namespace(ns);
  return impl_->find_collection(db, coll) != nullptr;
}

RollbackOutcome Store::roll_back(const RollbackRequest& request) {
  RollbackOutcome out;
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->oplog.last_optime() != request.expected_last) {
      throw std::logic_error("rollback: the oplog changed while the rollback was planned");
    }
    assert(request.common_point <= request.expected_last);
    for (const auto& d : request.documents) restore_document(*impl_, d, out.removed);
    for (const auto& ns : request.drop_namespaces) {
      auto [db, coll] = split_namespace(ns);
      Collection* c = impl_->find_collection(db, coll);
      if (c == nullptr) continue;
      for (const auto& [rid, doc] : c->records())
        removed_for(out.removed, *c).documents.push_back(doc);
      impl_->dbs[db].erase(coll);
      if (impl_->dbs[db].empty()) impl_->dbs.erase(db);
    }
    out.oplog_entries_removed = impl_->oplog.truncate_after(request.common_point);
    out.statements_forgotten = impl_->sessions.forget_after(request.common_point);
  }
  // mongod kills every user operation when it enters rollback; a change stream then resumes
  // elsewhere (docs/mongodb-behaviour.md, Change streams).
  impl_->cursors.close_streams(code::kInterruptedDueToReplStateChange,
                               "operation was interrupted because of a rollback");
  impl_->signal->notify();
  return out;
}

void Store::journal_truncation(OpTime common_point) {
  Journal* journal = nullptr;
  {
    std::lock_guard lock(impl_->mu);
    assert(impl_->oplog.last_optime() == common_point);
    journal = impl_->journal;
  }
  if (journal != nullptr) journal->truncate_after(common_point);
}

}  // namespace mongosim::data
