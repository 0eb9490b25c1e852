// Unit tests of what the server core reads through ServerContext's two interfaces: the data
// layer's newest oplog entry (data::OplogPosition) and replication (ReplicationView). Each
// interface is a small test implementation here, not the store or the coordinator; what this
// leaves out: threads (attachment happens before any connection thread in the real server),
// the store's locking, and the coordinator's topology (the replica-set suites cover those).
#include "server/server_context.h"

#include <gtest/gtest.h>

#include <optional>

#include "base/optime.h"
#include "data/replication_storage.h"
#include "server/options.h"
#include "server/replication_view.h"

namespace mongosim::server {
namespace {

OpTime optime(int64_t term, uint32_t seconds) {
  return OpTime{bson::Timestamp{seconds, 1}, term};
}

class FixedOplogPosition final : public data::OplogPosition {
 public:
  OpTime applied;
  int64_t wall_ms = 0;
  OpTime last_applied() const override { return applied; }
  int64_t last_write_date_ms() const override { return wall_ms; }
};

class RecordingReplicationView final : public ReplicationView {
 public:
  OpTime commit_point;
  int64_t barrier_max_time_ms = -1;  // -1: the barrier was not run
  OpTime majority_read_point() const override { return commit_point; }
  void linearizable_barrier(int64_t max_time_ms) override { barrier_max_time_ms = max_time_ms; }
  std::optional<bson::Document> repl_set_status() const override {
    return bson::Document{{"set", bson::V("rs")}};
  }
  void one_member_initiated() override {}
};

TEST(ServerContextOplog, NullUntilAttachedThenTheAttachedPosition) {
  ServerContext ctx{ServerOptions{}};
  EXPECT_TRUE(ctx.last_applied().is_null());
  EXPECT_EQ(ctx.last_write_date_ms(), 0);

  FixedOplogPosition oplog;
  oplog.applied = optime(3, 100);
  oplog.wall_ms = 1'700'000'000'000;
  ctx.attach_oplog(oplog);
  EXPECT_EQ(ctx.last_applied(), optime(3, 100));
  EXPECT_EQ(ctx.last_write_date_ms(), 1'700'000'000'000);
  EXPECT_EQ(ctx.effective_last_applied(), optime(3, 100));

  oplog.applied = optime(3, 101);  // read through the interface on every call, never copied
  EXPECT_EQ(ctx.last_applied(), optime(3, 101));
}

TEST(ServerContextReplication, SingleNodeAnswersUntilAViewIsAttached) {
  ServerContext ctx{ServerOptions{}};
  FixedOplogPosition oplog;
  oplog.applied = optime(1, 50);
  ctx.attach_oplog(oplog);
  // A single node commits what it applies and has no replSetGetStatus of its own to give.
  EXPECT_EQ(ctx.replication().majority_read_point(), optime(1, 50));
  EXPECT_FALSE(ctx.replication().repl_set_status().has_value());
  ctx.replication().linearizable_barrier(10);  // returns at once: nothing to wait for

  RecordingReplicationView view;
  view.commit_point = optime(1, 40);
  ctx.attach_replication(view);
  EXPECT_EQ(ctx.replication().majority_read_point(), optime(1, 40));
  ASSERT_TRUE(ctx.replication().repl_set_status().has_value());
  EXPECT_EQ(ctx.replication().repl_set_status()->get("set")->as_string(), "rs");
  ctx.replication().linearizable_barrier(250);
  EXPECT_EQ(view.barrier_max_time_ms, 250);
}

}  // namespace
}  // namespace mongosim::server
