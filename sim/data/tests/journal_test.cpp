// The journal: records survive a reopen, a torn tail is dropped and reported, corruption
// before the tail is an error naming the file and offset, a truncation record removes the
// entries after its common point, a full journal refuses writes before they happen, and a store
// replayed from the journal has the same catalog, documents, oplog and sessions.
#include "data/journal.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "base/error_codes.h"
#include "data/tests/store_fixture.h"
#include "temp_dir.h"

namespace mongosim::data::testing {
namespace {

namespace fs = std::filesystem;

OpTime optime(uint32_t secs, uint32_t inc, int64_t term = 1) {
  return OpTime{bson::Timestamp{secs, inc}, term};
}

Document entry(OpTime t, int32_t id) {
  return Document{{"ts", Value::timestamp(t.ts)}, {"t", bson::V(t.term)},
                  {"v", bson::V(int64_t{2})},     {"op", bson::V("i")},
                  {"ns", bson::V("db.c")},        {"o", bson::V(Document{{"_id", bson::V(id)}})},
                  {"wall", Value::date(0)}};
}

using locklab::testkit::TempDir;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// Three entries written through a Journal; returns the record boundaries.
std::vector<uint64_t> write_three(const std::string& path) {
  std::vector<uint64_t> ends;
  Journal journal(path, 0, OpTime{});
  for (int32_t i = 1; i <= 3; ++i) {
    journal.append_entry(entry(optime(100, static_cast<uint32_t>(i)), i),
                         optime(100, static_cast<uint32_t>(i)));
    ends.push_back(journal.size_bytes());
  }
  EXPECT_TRUE(journal.wait_durable(optime(100, 3)));
  EXPECT_EQ(journal.durable(), optime(100, 3));
  return ends;
}

TEST(Journal, RecordsSurviveReopen) {
  TempDir dir;
  std::string path = dir.file("j");
  std::vector<uint64_t> ends = write_three(path);
  JournalContents c = read_journal(path);
  EXPECT_FALSE(c.torn_tail);
  ASSERT_EQ(c.entries.size(), 3u);
  EXPECT_EQ(bson::to_json(c.entries[2]), bson::to_json(entry(optime(100, 3), 3)));
  EXPECT_EQ(c.valid_bytes, ends.back());
  // Appending after a reopen continues the same file.
  {
    Journal journal(path, c.valid_bytes, optime(100, 3));
    journal.append_entry(entry(optime(100, 4), 4), optime(100, 4));
  }
  EXPECT_EQ(read_journal(path).entries.size(), 4u);
}

TEST(Journal, TornTailCutShortIsDropped) {
  TempDir dir;
  std::string path = dir.file("j");
  std::vector<uint64_t> ends = write_three(path);
  std::string bytes = read_bytes(path);
  write_bytes(path, bytes.substr(0, ends[2] - 5));  // killed mid-write of the third record
  JournalContents c = read_journal(path);
  EXPECT_TRUE(c.torn_tail);
  EXPECT_EQ(c.torn_offset, ends[1]);
  EXPECT_NE(c.torn_reason.find("cut short"), std::string::npos) << c.torn_reason;
  ASSERT_EQ(c.entries.size(), 2u);
  EXPECT_EQ(c.valid_bytes, ends[1]);
  // Reopening cuts the file to the intact prefix, so new records follow it directly.
  {
    Journal journal(path, c.valid_bytes, optime(100, 2));
    journal.append_entry(entry(optime(100, 9), 9), optime(100, 9));
  }
  JournalContents again = read_journal(path);
  EXPECT_FALSE(again.torn_tail);
  ASSERT_EQ(again.entries.size(), 3u);
  EXPECT_EQ(bson::to_json(again.entries[2]), bson::to_json(entry(optime(100, 9), 9)));
}

TEST(Journal, TornTailWithBadChecksumOrHeaderOrZerosIsDropped) {
  TempDir dir;
  std::string path = dir.file("j");
  std::vector<uint64_t> ends = write_three(path);
  std::string bytes = read_bytes(path);

  std::string flipped = bytes;
  flipped[ends[2] - 3] ^= 0x5a;  // the last record's payload never fully reached the disk
  write_bytes(path, flipped);
  JournalContents c = read_journal(path);
  EXPECT_TRUE(c.torn_tail);
  EXPECT_NE(c.torn_reason.find("checksum"), std::string::npos);
  EXPECT_EQ(c.entries.size(), 2u);

  write_bytes(path, bytes.substr(0, ends[1] + 3));  // a header cut short
  c = read_journal(path);
  EXPECT_TRUE(c.torn_tail);
  EXPECT_EQ(c.entries.size(), 2u);

  write_bytes(path, bytes + std::string(4096, '\0'));  // zero-filled blocks after a crash
  c = read_journal(path);
  EXPECT_TRUE(c.torn_tail);
  EXPECT_EQ(c.entries.size(), 3u);
  EXPECT_EQ(c.valid_bytes, ends[2]);
}

TEST(Journal, CorruptionBeforeTheTailNamesFileAndOffset) {
  TempDir dir;
  std::string path = dir.file("j");
  std::vector<uint64_t> ends = write_three(path);
  std::string bytes = read_bytes(path);
  bytes[ends[0] + kJournalHeaderBytes + 2] ^= 0x01;  // inside the second record's payload
  write_bytes(path, bytes);
  try {
    read_journal(path);
    FAIL() << "corruption was not detected";
  } catch (const JournalCorrupt& e) {
    EXPECT_EQ(e.offset(), ends[0]);
    std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("offset " + std::to_string(ends[0])), std::string::npos) << what;
    EXPECT_NE(what.find("checksum"), std::string::npos) << what;
  }

  std::string bad_length = read_bytes(path);
  bad_length = std::string(bad_length.begin(), bad_length.begin() + static_cast<long>(ends[0]));
  bad_length += std::string("\xff\xff\xff\x7f", 4) + std::string(64, 'x');
  write_bytes(path, bad_length);
  EXPECT_THROW(read_journal(path), JournalCorrupt);
}

// A truncation record that decodes but whose optime's term is no whole number in [-1, 2^62]
// (1e300: a cast of it is undefined; a string or none: it read as -1, before every entry, and
// recovery dropped them all) is corruption, named with its offset.
TEST(Journal, TruncationRecordWithATermThatIsNoWholeNumberIsCorruption) {
  const Value ts = Value::timestamp(bson::Timestamp{100, 2});
  const Document afters[] = {Document{{"ts", ts}, {"t", bson::V(1e300)}},
                             Document{{"ts", ts}, {"t", bson::V("1")}}, Document{{"ts", ts}},
                             Document{{"ts", ts}, {"t", bson::V(kMaxTerm + 1)}},
                             Document{{"t", bson::V(int64_t{1})}}};
  for (const Document& after : afters) {
    SCOPED_TRACE(bson::to_json(after));
    TempDir dir;
    const std::string path = dir.file("j");
    const std::vector<uint64_t> ends = write_three(path);
    write_bytes(path, read_bytes(path) + encode_journal_record(Document{
                                             {"k", bson::V("t")}, {"after", bson::V(after)}}));
    try {
      read_journal(path);
      ADD_FAILURE() << "the truncation was read";
    } catch (const JournalCorrupt& e) {
      EXPECT_EQ(e.offset(), ends[2]);
    }
  }
}

TEST(Journal, TruncationRecordDropsLaterEntries) {
  TempDir dir;
  std::string path = dir.file("j");
  {
    Journal journal(path, 0, OpTime{});
    for (uint32_t i = 1; i <= 4; ++i) {
      journal.append_entry(entry(optime(100, i), static_cast<int32_t>(i)), optime(100, i));
    }
    journal.truncate_after(optime(100, 2));
    EXPECT_EQ(journal.durable(), optime(100, 2));
    journal.append_entry(entry(optime(200, 1, 2), 7), optime(200, 1, 2));
  }
  JournalContents c = read_journal(path);
  ASSERT_EQ(c.entries.size(), 3u);
  EXPECT_EQ(bson::to_json(c.entries[1]), bson::to_json(entry(optime(100, 2), 2)));
  EXPECT_EQ(bson::to_json(c.entries[2]), bson::to_json(entry(optime(200, 1, 2), 7)));
}

TEST(Journal, FullJournalRefusesWritesBeforeTheyHappen) {
  TempDir dir;
  Journal journal(dir.file("j"), 0, OpTime{}, /*max_bytes=*/200);
  journal.append_entry(entry(optime(100, 1), 1), optime(100, 1));
  journal.append_entry(entry(optime(100, 2), 2), optime(100, 2));
  try {
    journal.check_capacity();
    FAIL() << "a full journal accepted more";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), code::kOutOfDiskSpace);
    EXPECT_NE(std::string(e.what()).find(dir.file("j")), std::string::npos);
  }
}

// The code of writeErrors[0], or 0 when the write succeeded.
int32_t first_write_error_code(const Document& reply) {
  const Value* errors = reply.get("writeErrors");
  if (errors == nullptr || errors->as_array().empty()) return 0;
  return static_cast<int32_t>(errors->as_array()[0].as_document().get("code")->number_as_double());
}

class JournalReplay : public StoreFixture {};

TEST_F(JournalReplay, ReplayRebuildsCatalogDocumentsAndSessions) {
  TempDir dir;
  std::string path = dir.file("j");
  {
    Journal journal(path, 0, OpTime{});
    store_->attach_journal(&journal);
    run(R"({"createIndexes": "c", "indexes": [{"key": {"k": 1}, "name": "k_1", "unique": true}]})");
    run(R"({"insert": "c", "documents": [{"_id": 1, "k": 1}, {"_id": 2, "k": 2}]})");
    run(R"({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"v": 5}}}]})");
    run(R"({"delete": "c", "deletes": [{"q": {"_id": 2}, "limit": 1}]})");
    run(R"({"insert": "gone", "documents": [{"_id": 1}]})");
    run(R"({"drop": "gone"})");
    EXPECT_TRUE(store_->wait_durable(store_->last_applied()));
    EXPECT_EQ(store_->last_durable(), store_->last_applied());
    store_->attach_journal(nullptr);
  }
  OpTime before = store_->last_applied();
  bson::Array docs_before = all("c");
  make_store(60);  // an empty store, as after a restart
  for (const auto& e : read_journal(path).entries) store_->apply_oplog_entry(e);
  EXPECT_EQ(store_->last_applied(), before);
  EXPECT_EQ(bson::to_json(bson::V(all("c"))), bson::to_json(bson::V(docs_before)));
  EXPECT_TRUE(all("gone").empty());
  // The unique index came back with the catalog.
  Document dup = run(R"({"insert": "c", "documents": [{"_id": 3, "k": 1}]})");
  EXPECT_EQ(first_write_error_code(dup), code::kDuplicateKey) << bson::to_json(dup);
}

// An update may build a document as deep as a stored one may nest (180 levels) and no deeper
// (15 Overflow, nothing written): the journal, which wraps each document two levels deeper,
// reads every stored one back.
TEST_F(JournalReplay, AStoredDocumentNestsAtMostAsDeepAsTheJournalReadsBack) {
  const auto nest = [&](int levels) {
    bson::Array ones;
    for (int i = 0; i < levels; ++i) ones.push_back(bson::V(int32_t{1}));
    Document reduce{{"input", bson::V(std::move(ones))},
                    {"initialValue", bson::V(int32_t{0})},
                    {"in", bson::V(Document{{"a", bson::V("$$value")}})}};
    Document set{
        {"$set", bson::V(Document{{"deep", bson::V(Document{{"$reduce", bson::V(reduce)}})}})}};
    Document update{{"q", bson::V(Document{{"_id", bson::V(int32_t{1})}})},
                    {"u", bson::V(bson::Array{bson::V(set)})}};
    return run("db", Document{{"update", bson::V("c")},
                              {"updates", bson::V(bson::Array{bson::V(update)})}});
  };
  TempDir dir;
  std::string path = dir.file("j");
  {
    Journal journal(path, 0, OpTime{});
    store_->attach_journal(&journal);
    run(R"({"insert": "c", "documents": [{"_id": 1}]})");
    EXPECT_EQ(first_write_error_code(nest(bson::kMaxStoredNestingDepth)), 0);
    const Document refused = nest(bson::kMaxStoredNestingDepth + 1);
    EXPECT_EQ(first_write_error_code(refused), code::kOverflow) << bson::to_json(refused);
    EXPECT_NE(bson::to_json(refused).find("Document exceeds maximum nesting depth of 180"),
              std::string::npos)
        << bson::to_json(refused);
    EXPECT_TRUE(store_->wait_durable(store_->last_applied()));
    store_->attach_journal(nullptr);
  }
  const std::string before = bson::to_json(bson::V(all("c")));
  make_store(60);  // an empty store, as after a restart
  for (const auto& e : read_journal(path).entries) store_->apply_oplog_entry(e);
  EXPECT_EQ(bson::to_json(bson::V(all("c"))), before);
  EXPECT_TRUE(bson::deeper_than(all("c")[0].as_document(), bson::kMaxStoredNestingDepth - 1));
}

TEST_F(JournalReplay, FullJournalLeavesNoTraceOfARefusedWrite) {
  TempDir dir;
  Journal journal(dir.file("j"), 0, OpTime{}, /*max_bytes=*/400);
  store_->attach_journal(&journal);
  run(R"({"insert": "c", "documents": [{"_id": 1}]})");
  OpTime last = store_->last_applied();
  bool refused = false;
  for (int i = 2; i < 50 && !refused; ++i) {
    Document reply =
        run("db",
            Document{{"insert", bson::V("c")},
                     {"documents", bson::V(bson::Array{bson::V(Document{{"_id", bson::V(i)}})})}});
    int32_t code = first_write_error_code(reply);
    if (code == 0) {
      last = store_->last_applied();
    } else {
      EXPECT_EQ(code, code::kOutOfDiskSpace) << bson::to_json(reply);
      refused = true;
    }
  }
  EXPECT_TRUE(refused);
  EXPECT_EQ(store_->last_applied(), last);
  EXPECT_EQ(all("c").size(), read_journal(dir.file("j")).entries.size() - 1);  // minus create
  store_->attach_journal(nullptr);
}

}  // namespace
}  // namespace mongosim::data::testing
