// The fault-kind table: one row per kind, names round-trip, and the columns that the preflight
// and the backends read say what the faults do. A unit test of pure data: it leaves out whether
// each Fault class really does what its row claims (the scenario tests run them).
#include "nemesis/fault_kind.h"

#include <gtest/gtest.h>

#include <set>

namespace locklab {
namespace {

TEST(FaultKindTable, OneRowPerKindInOrderWithUniqueNames) {
  std::set<std::string_view> names;
  const auto& rows = fault_kinds();
  ASSERT_EQ(rows.size(), static_cast<size_t>(FaultKind::kReplyDelay) + 1);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(rows[i].kind), i);
    EXPECT_TRUE(names.insert(rows[i].name).second) << rows[i].name;
    EXPECT_EQ(fault_kind_named(rows[i].name), rows[i].kind);
    EXPECT_EQ(to_string(rows[i].kind), rows[i].name);
    EXPECT_GE(rows[i].members_min, 1);
  }
  EXPECT_EQ(fault_kind_named("flood"), std::nullopt);
  EXPECT_EQ(fault_kind_named(""), std::nullopt);
}

TEST(FaultKindTable, NamesListedSortedForMessages) {
  const std::string list = fault_kind_names();
  EXPECT_EQ(list.rfind("clock-jump, clock-jump-worker, clock-skew, ", 0), 0u) << list;
  EXPECT_NE(list.find("primary-divergence, reply-delay, step-down"), std::string::npos) << list;
}

// The columns the preflight and the backends' supports() rely on.
TEST(FaultKindTable, ColumnsSayWhatEachKindNeeds) {
  std::set<std::string_view> network, signals, member_clock, worker_clock;
  for (const FaultKindRow& row : fault_kinds()) {
    if (row.needs_network) network.insert(row.name);
    if (row.signals_members) signals.insert(row.name);
    if (row.clock == ClockMoved::kMember) member_clock.insert(row.name);
    if (row.clock == ClockMoved::kWorker) worker_clock.insert(row.name);
  }
  EXPECT_EQ(network,
            (std::set<std::string_view>{"isolate-worker", "isolate-member", "partition-halves",
                                        "partition-ring", "partition-bridge", "partition-worker",
                                        "primary-divergence", "reply-delay"}));
  EXPECT_EQ(signals,
            (std::set<std::string_view>{"pause-member", "kill-member", "primary-divergence"}));
  EXPECT_EQ(member_clock,
            (std::set<std::string_view>{"clock-skew", "clock-jump", "primary-divergence"}));
  EXPECT_EQ(worker_clock, (std::set<std::string_view>{"clock-skew-worker", "clock-jump-worker"}));
  EXPECT_EQ(fault_row(FaultKind::kPartitionRing).members_min, 5);
  EXPECT_EQ(fault_row(FaultKind::kFreeze).default_target, "secondaries");
}

TEST(FaultKindTable, ParamsCheckedByTheirRow) {
  EXPECT_EQ(fault_param_error(FaultKind::kPauseWorker, nlohmann::json::object(), 1), std::nullopt);
  auto e = fault_param_error(FaultKind::kClockSkew, nlohmann::json::object(), 3);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->key, "offset_ms");
  e = fault_param_error(FaultKind::kPrimaryDivergence, {{"clock_ms", 0}}, 3);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->what, "must not be 0");
  EXPECT_EQ(fault_param_error(FaultKind::kPrimaryDivergence, nlohmann::json::object(), 3),
            std::nullopt);
  e = fault_param_error(FaultKind::kPartitionWorker, nlohmann::json::object(), 1);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->key, "fault");
  EXPECT_EQ(e->what, "partition-worker needs cluster.members >= 3 (the scenario has 1)");
  e = fault_param_error(FaultKind::kReplyDelay, nlohmann::json::object(), 1);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->key, "delay_ms");
  e = fault_param_error(FaultKind::kReplyDelay, {{"delay_ms", 0}}, 1);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->key, "delay_ms");
  EXPECT_EQ(fault_param_error(FaultKind::kReplyDelay, {{"delay_ms", 1700}}, 1), std::nullopt);
}

}  // namespace
}  // namespace locklab
