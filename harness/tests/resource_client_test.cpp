// The counter resource against a real three-member mongosim set (loopback, no faults): what one
// worker wrote, the next read shows — its own next read and another worker's — at every write
// concern a scenario may choose. A counter read that misses an acknowledged write makes the
// counter check report a lost update the lock did not cause (a false verdict).
//
// Model left out: faults (a w:1 write rolled back by a failover is a real loss and stays one),
// concurrent writers (the lock orders them), the fenced resource (its filter is server-side).
#include "client/resource_client.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "db/db.h"
#include "harness_db.h"
#include "programs.h"
#include "run/process.h"
#include "temp_dir.h"

namespace locklab {
namespace {

constexpr int kMembers = 3;
constexpr int64_t kWrites = 60;

class ResourceClientTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (!testing::programs_built()) GTEST_SKIP() << "needs mongosim built";
    dir_ = std::make_unique<testkit::TempDir>();
    cluster_ = testkit::harness_db(dir_->path(), kMembers, supervisor_);
    cluster_->start();
  }
  void TearDown() override {
    if (cluster_) cluster_->stop();
  }

  WorkerConfig worker(const std::string& id) const {
    WorkerConfig c;
    c.id = id;
    c.uri = cluster_->uri(id);
    c.lock.write_concern_w = GetParam();
    c.lock.expiry_ms = 10'000;
    return c;
  }

  std::unique_ptr<testkit::TempDir> dir_;
  Supervisor supervisor_;
  std::unique_ptr<Db> cluster_;
};

// One worker increments the counter as the counter workload does (read, write back plus one):
// every read must show the previous write. At w:1 a read at read concern majority misses the
// last write until the secondaries have it, which this catches within a few writes.
TEST_P(ResourceClientTest, AReadShowsTheWorkersOwnLastWrite) {
  ResourceClient client(worker("w1"));
  std::string error;
  for (int64_t i = 1; i <= kWrites; ++i) {
    const std::optional<int64_t> read = client.read_counter(&error);
    ASSERT_TRUE(read.has_value()) << error;
    ASSERT_EQ(*read, i - 1) << "read " << i << " missed the worker's own acknowledged write";
    ASSERT_EQ(client.write_counter(*read + 1, &error), WriteOutcome::kAccepted) << error;
  }
}

// Two workers take turns, as holders hand the lock over: the next holder's read shows the last
// holder's write.
TEST_P(ResourceClientTest, AReadShowsTheLastHoldersWrite) {
  ResourceClient first(worker("w1"));
  ResourceClient second(worker("w2"));
  std::string error;
  for (int64_t i = 1; i <= kWrites; ++i) {
    ResourceClient& holder = i % 2 == 0 ? second : first;
    const std::optional<int64_t> read = holder.read_counter(&error);
    ASSERT_TRUE(read.has_value()) << error;
    ASSERT_EQ(*read, i - 1) << "read " << i << " missed the previous holder's acknowledged write";
    ASSERT_EQ(holder.write_counter(*read + 1, &error), WriteOutcome::kAccepted) << error;
  }
}

// The harness's final read (Db::read_confirmed, at majority) right after the last write: it
// must show that write, as the set will once the secondaries have it, or the counter check
// reports the last acknowledged writes as lost. Run several times, since one write may be
// committed before the read by chance.
TEST_P(ResourceClientTest, TheFinalReadShowsTheLastAcknowledgedWrite) {
  ResourceClient client(worker("w1"));
  std::string error;
  for (int64_t i = 1; i <= kWrites / 4; ++i) {
    ASSERT_EQ(client.write_counter(i, &error), WriteOutcome::kAccepted) << error;
    const int primary = cluster_->wait_for_primary(10'000);
    ASSERT_GE(primary, 0);
    const nlohmann::json doc =
        cluster_->read_confirmed(primary, "locklab", kCounterCollection, kCounterResource);
    ASSERT_TRUE(doc.is_object()) << doc.dump();
    ASSERT_EQ(doc.value("count", int64_t{-1}), i)
        << "the final read missed acknowledged write " << i;
  }
}

// 0 = majority; 1 = the primary alone (the known-unsafe scenarios' choice); 2 = a majority of 3
// by number.
INSTANTIATE_TEST_SUITE_P(WriteConcern, ResourceClientTest, ::testing::Values(0, 1, 2),
                         [](const ::testing::TestParamInfo<int>& param) {
                           return param.param == 0 ? std::string("majority")
                                                   : "w" + std::to_string(param.param);
                         });

}  // namespace
}  // namespace locklab
