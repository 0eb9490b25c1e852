#include "index_check.h"

#include <cstdio>
#include <optional>
#include <utility>

#include "bson_ptr.h"
#include "commands.h"

namespace mongolock::detail {
namespace {

struct TtlIndex {
  std::string name;
  std::string key_json;
  bool on_reap_at_alone = false;
  bool on_expires_at = false;
  std::optional<int64_t> expire_after_s;  // nullopt: present but not a number we can read
};

// An index with an expireAfterSeconds field of any type is a TTL index to this judge: a value it
// cannot read (Decimal128, NaN, a string) is not taken for "no TTL".
std::optional<TtlIndex> ttl_index(const bson_t& index) {
  if (!has_path(index, "expireAfterSeconds")) return std::nullopt;
  TtlIndex out;
  out.name = find_utf8(index, "name").value_or("(unnamed)");
  out.expire_after_s = find_int64(index, "expireAfterSeconds");
  if (std::optional<Bson> key = find_document(index, "key")) {
    out.key_json = to_json(**key);
    out.on_reap_at_alone = bson_count_keys(key->get()) == 1 && find_int64(**key, "reapAt");
    out.on_expires_at = find_int64(**key, "expiresAt").has_value();
  }
  return out;
}

// A name inside a JavaScript string literal: " and \ escaped, control characters as \uXXXX
// (a raw line break ends a string literal).
std::string js_quoted(const std::string& name) {
  std::string out = "\"";
  for (const char c : name) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned char>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// "db.getSiblingDB("db")" and "collection" from "db.collection" (a database name has no dot).
// The collection is named with getCollection("..."), which takes any name ("app-locks" too).
std::pair<std::string, std::string> shell_names(const IndexRule& rule) {
  const std::string::size_type dot = rule.collection_path.find('.');
  return {"db.getSiblingDB(" + js_quoted(rule.collection_path.substr(0, dot)) + ")",
          js_quoted(rule.collection_path.substr(dot + 1))};
}

std::string drop_hint(const IndexRule& rule, const std::string& name) {
  const auto [db, collection] = shell_names(rule);
  return db + ".getCollection(" + collection + ").dropIndex(" + js_quoted(name) + ")";
}

std::string raise_hint(const IndexRule& rule, const std::string& name) {
  const auto [db, collection] = shell_names(rule);
  return db + ".runCommand({collMod: " + collection + ", index: {name: " + js_quoted(name) +
         ", expireAfterSeconds: " + std::to_string(rule.reap_after_s) + "}})";
}

std::string value_text(const TtlIndex& index) {
  return index.expire_after_s ? std::to_string(*index.expire_after_s) : "(not a number)";
}

std::string refusal(const IndexRule& rule, const TtlIndex& index) {
  const std::string where = "collection " + rule.collection_path + " has the TTL index \"" +
                            index.name + "\" on " + index.key_json;
  const std::string harm =
      "it deletes lock documents, and the tombstones and token floor they carry, sooner than "
      "this Provider's reap_after_s (" +
      std::to_string(rule.reap_after_s) +
      " s) promises (a token can go back, a resolved acquire can take effect)";
  if (rule.plain && index.name == kTtlIndexName && index.on_expires_at) {
    return where + ", left by an earlier mongolock version; " + harm + ". Drop it once, e.g. in " +
           "mongosh: " + drop_hint(rule, index.name) + " (the index \"" + kReapIndexName +
           "\" on reapAt replaces it)";
  }
  if (index.on_reap_at_alone) {
    const std::string why = index.expire_after_s
                                ? ", below this Provider's reap_after_s " +
                                      std::to_string(rule.reap_after_s) +
                                      " (the Provider that created it had a shorter one)"
                                : ", which this Provider cannot compare with its reap_after_s " +
                                      std::to_string(rule.reap_after_s);
    return where + " with expireAfterSeconds " + value_text(index) + why + "; " + harm +
           ". Give every Provider on this collection the same reap_after_s, or raise the "
           "index's once, e.g. in mongosh: " +
           raise_hint(rule, index.name);
  }
  return where + " (expireAfterSeconds " + value_text(index) + "), which is not the library's; " +
         harm + ". Drop it, e.g. in mongosh: " + drop_hint(rule, index.name);
}

}  // namespace

IndexVerdict judge_indexes(const bson_t& reply, const IndexRule& rule) {
  bool reap_index_seen = false;
  std::optional<IndexVerdict> refused;
  if (std::optional<Bson> cursor = find_document(reply, "cursor")) {
    // MongoDB allows 64 indexes a collection and answers 101 in a first batch; a server that
    // leaves a cursor open has more, and the judgement would be on part of the list.
    if (find_int64(**cursor, "id").value_or(0) != 0) {
      return {IndexVerdictKind::kIncomplete,
              "listIndexes on " + rule.collection_path +
                  " answered in more than one batch (more indexes than MongoDB allows)"};
    }
    for_each_document(**cursor, "firstBatch", [&](const bson_t& index) {
      std::optional<TtlIndex> ttl = ttl_index(index);
      if (!ttl) return true;
      if (ttl->on_reap_at_alone && ttl->expire_after_s &&
          *ttl->expire_after_s >= rule.reap_after_s) {
        reap_index_seen = true;  // ours, or another name on the same key: either will do
        return true;
      }
      refused = IndexVerdict{IndexVerdictKind::kRefused, refusal(rule, *ttl)};
      return false;
    });
  }
  if (refused) return *refused;
  if (reap_index_seen || !rule.creates_index) return {IndexVerdictKind::kUsable, {}};
  return {IndexVerdictKind::kUsableUntilIndexed, {}};
}

}  // namespace mongolock::detail
