// A --dbpath's small files (the replica state: term, vote, config; minValid) are read back as
// whole numbers in range, or the member stops naming the file and the field: a value a disk or an
// editor changed (a term of 1e300, a vote for member 2^32) is never cast into one. Model: the
// files are written here by hand; a torn or half-synced write of them is the atomic-rename
// writer's concern (dbpath_sync_test.cpp), not this reader's.
#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <string>

#include "base/clock.h"
#include "base/failpoint.h"
#include "bson/codec.h"
#include "data/journal.h"
#include "data/store.h"
#include "repl/config.h"
#include "server/durability.h"
#include "temp_dir.h"

namespace mongosim::server {
namespace {

void write_bson(const std::string& path, const bson::Document& doc) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bson::encode_document(doc);
}

// The message of the runtime_error f throws; "" when it throws none.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(DbPathFiles, ReplicaStateNumbersAreReadInRangeOrRefusedNamingTheField) {
  const locklab::testkit::TempDir dir("mongosim-dbpath-files");
  DbPath db(dir.path());
  PersistedReplicaState saved;
  saved.config = repl::parse_repl_set_config(bson::from_json(
      R"({"_id": "rs", "version": 1, "members": [{"_id": 0, "host": "h:1"},
          {"_id": 1, "host": "h:2"}, {"_id": 2, "host": "h:3"}]})"));
  saved.election.term = 7;
  saved.election.last_vote_term = 7;
  saved.election.last_vote_candidate = 2;
  db.save_replica_state(saved);
  const auto loaded = db.load_replica_state();
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->election.term, 7);
  EXPECT_EQ(loaded->election.last_vote_candidate, 2);

  const std::string file = dir.file("replset.election.bson");
  const struct {
    bson::Document doc;
    const char* field;
  } bad[] = {
      {{{"term", bson::V(1e300)}}, "'term'"},
      {{{"term", bson::V(int64_t{-5})}}, "'term'"},
      {{{"term", bson::V(int64_t{3})}, {"lastVoteTerm", bson::V(2.5)}}, "'lastVoteTerm'"},
      {{{"term", bson::V(int64_t{3})}, {"lastVoteCandidate", bson::V(int64_t{1} << 32)}},
       "'lastVoteCandidate'"},
      // Past kMaxTerm: the next election's term + 1 would overflow.
      {{{"term", bson::V(INT64_MAX)}}, "'term'"},
      {{{"term", bson::V(int64_t{3})}, {"lastVoteTerm", bson::V(kMaxTerm + 1)}}, "'lastVoteTerm'"},
      // A decimal is read by its digits: this one is not 3.
      {{{"term",
         *bson::from_json(R"({"v": {"$numberDecimal": "3.000000000000000000000000000000001"}})")
              .get("v")}},
       "'term'"},
      // No config, so no member to have voted for.
      {{{"term", bson::V(int64_t{3})}, {"lastVoteCandidate", bson::V(int32_t{0})}},
       "'lastVoteCandidate'"},
  };
  for (const auto& b : bad) {
    write_bson(file, b.doc);
    const std::string message = error_of([&] { (void)db.load_replica_state(); });
    EXPECT_NE(message.find(b.field), std::string::npos) << message;
    EXPECT_NE(message.find(file), std::string::npos) << message;
  }
}

// A journal entry the oplog cannot take stops recovery naming the file and the entry.
TEST(DbPathFiles, AJournalEntryThatCannotBeReplayedIsNamedWithItsFile) {
  const locklab::testkit::TempDir dir("mongosim-dbpath-files");
  const std::string journal = dir.file("journal/oplog.journal");
  {
    DbPath db(dir.path());  // creates DIR/journal
  }
  {
    data::Journal writer(journal, 0, OpTime{});
    const bson::Document entry{{"ts", bson::Value::timestamp(bson::Timestamp{5, 1})},
                               {"t", bson::V(int64_t{1})},
                               {"op", bson::V("x")},
                               {"ns", bson::V("db.c")},
                               {"o", bson::V(bson::Document{})}};
    writer.append_entry(entry, OpTime{bson::Timestamp{5, 1}, 1});
    ASSERT_TRUE(writer.wait_durable(OpTime{bson::Timestamp{5, 1}, 1}));
  }
  ServerClock clock;
  FailPoints failpoints;
  data::StoreOptions options;
  options.clock = &clock;
  options.failpoints = &failpoints;
  data::Store store(std::move(options));
  DbPath db(dir.path());
  const std::string message = error_of([&] { db.recover(store); });
  store.stop();
  EXPECT_NE(message.find(journal), std::string::npos) << message;
  EXPECT_NE(message.find("entry 1 of 1"), std::string::npos) << message;
  EXPECT_NE(message.find("'op'"), std::string::npos) << message;
}

TEST(DbPathFiles, MinValidTermIsReadInRangeOrRefused) {
  const locklab::testkit::TempDir dir("mongosim-dbpath-files");
  DbPath db(dir.path());
  const OpTime saved{bson::Timestamp{5, 1}, 3};
  db.save_min_valid(saved);
  EXPECT_EQ(db.load_min_valid().term, 3);
  write_bson(dir.file("minvalid.bson"),
             bson::Document{{"ts", bson::Value::timestamp(bson::Timestamp{5, 1})},
                            {"t", bson::V(-1e300)}});
  const std::string message = error_of([&] { (void)db.load_min_valid(); });
  EXPECT_NE(message.find("'t'"), std::string::npos) << message;
}

}  // namespace
}  // namespace mongosim::server
