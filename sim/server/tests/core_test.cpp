// Unit tests of the server core's pure pieces: write-concern parsing, error labels, fail
// points, parameters, replica-set config and state, command-line options.
#include <gtest/gtest.h>

#include "base/error_codes.h"
#include "base/failpoint.h"
#include "command/command.h"
#include "server/options.h"
#include "server/parameters.h"
#include "server/replica_state.h"
#include "server/reply_envelope.h"
#include "server/write_concern.h"

namespace mongosim::server {
namespace {

using bson::Document;
using bson::V;

int32_t error_code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const CommandError& e) {
    return e.code();
  }
  return 0;
}

Document with_wc(Document wc) {
  return Document{{"insert", V("c")}, {"writeConcern", V(std::move(wc))}};
}

TEST(WriteConcernParse, DefaultsToImplicitMajority) {
  WriteConcern wc = parse_write_concern(Document{{"insert", V("c")}}, true);
  EXPECT_EQ(wc.mode, WriteConcern::Mode::kMajority);
  EXPECT_FALSE(wc.explicitly_given);
  EXPECT_EQ(write_concern_document(wc).get("provenance")->as_string(), "implicitDefault");
}

TEST(WriteConcernParse, ReadsEveryField) {
  WriteConcern wc = parse_write_concern(
      with_wc(Document{{"w", V(int32_t{1})}, {"j", V(true)}, {"wtimeout", V(int64_t{500})}}), true);
  EXPECT_EQ(wc.mode, WriteConcern::Mode::kNumber);
  EXPECT_EQ(wc.w, 1);
  EXPECT_TRUE(wc.j);
  EXPECT_EQ(wc.wtimeout_ms, 500);
  EXPECT_TRUE(wc.explicitly_given);
  WriteConcern tag = parse_write_concern(with_wc(Document{{"w", V("dc1")}}), true);
  EXPECT_EQ(tag.mode, WriteConcern::Mode::kTag);
  EXPECT_EQ(tag.tag, "dc1");
}

TEST(WriteConcernParse, RefusesBadShapes) {
  EXPECT_EQ(
      error_code_of([] {
        parse_write_concern(Document{{"insert", V("c")}, {"writeConcern", V(int32_t{1})}}, true);
      }),
      code::kTypeMismatch);
  EXPECT_EQ(error_code_of([] {
              parse_write_concern(with_wc(Document{{"w", V(true)}}), true);
            }),
            code::kFailedToParse);
  EXPECT_EQ(error_code_of([] {
              parse_write_concern(with_wc(Document{{"w", V(int32_t{-1})}}), true);
            }),
            code::kFailedToParse);
  EXPECT_EQ(error_code_of([] {
              parse_write_concern(with_wc(Document{{"j", V("yes")}}), true);
            }),
            code::kFailedToParse);
  EXPECT_EQ(error_code_of([] {
              parse_write_concern(with_wc(Document{{"wtimeout", V("1")}}), true);
            }),
            code::kFailedToParse);
}

TEST(WriteConcernParse, StandaloneRefusesReplicationModes) {
  EXPECT_EQ(error_code_of([] {
              parse_write_concern(with_wc(Document{{"w", V(int32_t{2})}}), false);
            }),
            code::kBadValue);
  EXPECT_EQ(error_code_of([] {
              parse_write_concern(with_wc(Document{{"w", V("dc1")}}), false);
            }),
            code::kBadValue);
  EXPECT_EQ(error_code_of([] {
              parse_write_concern(with_wc(Document{{"w", V("majority")}}), false);
            }),
            0);
}

TEST(SingleNodeWaiter, SatisfiesWhatOneMemberCan) {
  SingleNodeWriteConcernWaiter waiter;
  WriteConcern majority;
  EXPECT_FALSE(waiter.wait(majority, OpTime{}).has_value());
  WriteConcern w2;
  w2.mode = WriteConcern::Mode::kNumber;
  w2.w = 2;
  auto wce = waiter.wait(w2, OpTime{});
  ASSERT_TRUE(wce);
  EXPECT_EQ(wce->get("code")->as_int32(), code::kUnsatisfiableWriteConcern);
  WriteConcern tag;
  tag.mode = WriteConcern::Mode::kTag;
  tag.tag = "nope";
  wce = waiter.wait(tag, std::nullopt);
  ASSERT_TRUE(wce);
  EXPECT_EQ(wce->get("code")->as_int32(), code::kUnknownReplWriteConcern);
  EXPECT_EQ(wce->get("codeName")->as_string(), "UnknownReplWriteConcern");
}

TEST(ErrorLabels, RetryableWriteWithRetriableCode) {
  LabelInputs in;
  in.retryable_write = true;
  in.code = code::kNotWritablePrimary;
  in.wrote_nothing = true;
  EXPECT_EQ(compute_error_labels(in),
            (std::vector<std::string>{"RetryableWriteError", "NoWritesPerformed"}));
  in.wrote_nothing = false;
  EXPECT_EQ(compute_error_labels(in), (std::vector<std::string>{"RetryableWriteError"}));
}

TEST(ErrorLabels, RetriableWriteConcernErrorCode) {
  LabelInputs in;
  in.retryable_write = true;
  in.wce_code = code::kShutdownInProgress;
  EXPECT_EQ(compute_error_labels(in), (std::vector<std::string>{"RetryableWriteError"}));
}

TEST(ErrorLabels, NoLabelForNonRetriableOrNonRetryable) {
  LabelInputs in;
  in.retryable_write = true;
  in.code = code::kInterrupted;
  EXPECT_TRUE(compute_error_labels(in).empty());
  in.wce_code = code::kWriteConcernFailed;
  EXPECT_TRUE(compute_error_labels(in).empty());
  LabelInputs not_retryable;
  not_retryable.code = code::kNotWritablePrimary;
  EXPECT_TRUE(compute_error_labels(not_retryable).empty());
}

TEST(ErrorLabels, OverrideWinsEvenWhenEmpty) {
  LabelInputs in;
  in.retryable_write = true;
  in.code = code::kNotWritablePrimary;
  in.override_labels = std::vector<std::string>{};
  EXPECT_TRUE(compute_error_labels(in).empty());
  in.override_labels = std::vector<std::string>{"Custom"};
  EXPECT_EQ(compute_error_labels(in), (std::vector<std::string>{"Custom"}));
}

Document fail_command(bson::Value mode, Document data) {
  return Document{{"configureFailPoint", V("failCommand")},
                  {"mode", std::move(mode)},
                  {"data", V(std::move(data))}};
}

TEST(FailPoints, TimesConsumesExactlyThatManyMatches) {
  FailPoints fp;
  fp.configure(fail_command(
      V(Document{{"times", V(int32_t{2})}}),
      Document{{"failCommands", V(bson::Array{V("insert")})}, {"errorCode", V(int32_t{91})}}));
  EXPECT_FALSE(fp.match_fail_command("find", ""));  // not listed: consumes nothing
  auto first = fp.match_fail_command("insert", "");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->error_code, 91);
  EXPECT_TRUE(fp.match_fail_command("insert", ""));
  EXPECT_FALSE(fp.match_fail_command("insert", ""));
  Document off =
      fp.configure(Document{{"configureFailPoint", V("failCommand")}, {"mode", V("off")}});
  EXPECT_EQ(off.get("count")->as_int64(), 2);
}

// A code that is not an int32 is no code: UnknownError, not the low 32 bits (4294967387 is 91).
TEST(FailPoints, AnErrorCodeThatIsNotAnInt32IsUnknownError) {
  FailPoints fp;
  fp.configure(fail_command(V("alwaysOn"), Document{{"failCommands", V(bson::Array{V("ping")})},
                                                    {"errorCode", V(int64_t{4294967387})}}));
  auto action = fp.match_fail_command("ping", "");
  ASSERT_TRUE(action);
  EXPECT_EQ(action->error_code, code::kUnknownError);
}

TEST(FailPoints, AppNameFilters) {
  FailPoints fp;
  fp.configure(fail_command(V("alwaysOn"), Document{{"failCommands", V(bson::Array{V("ping")})},
                                                    {"closeConnection", V(true)},
                                                    {"appName", V("app1")}}));
  EXPECT_FALSE(fp.match_fail_command("ping", "other"));
  auto hit = fp.match_fail_command("ping", "app1");
  ASSERT_TRUE(hit);
  EXPECT_TRUE(hit->close_connection);
}

TEST(FailPoints, CarriesLabelsBlockAndWriteConcernError) {
  FailPoints fp;
  fp.configure(fail_command(
      V("alwaysOn"),
      Document{{"failCommands", V(bson::Array{V("insert")})},
               {"blockConnection", V(true)},
               {"blockTimeMS", V(int32_t{5})},
               {"errorLabels", V(bson::Array{})},
               {"writeConcernError", V(Document{{"code", V(int32_t{91})}, {"errmsg", V("x")}})}}));
  auto hit = fp.match_fail_command("insert", "");
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->block_ms, 5);
  ASSERT_TRUE(hit->error_labels);
  EXPECT_TRUE(hit->error_labels->empty());
  ASSERT_TRUE(hit->write_concern_error);
  EXPECT_EQ(hit->write_concern_error->get("code")->as_int32(), 91);
}

TEST(FailPoints, RefusesBadConfigurations) {
  FailPoints fp;
  EXPECT_EQ(error_code_of([&] { fp.configure(fail_command(V("sometimes"), Document{})); }),
            code::kBadValue);
  EXPECT_EQ(error_code_of([&] {
              fp.configure(fail_command(V("alwaysOn"), Document{{"errorCode", V(int32_t{1})}}));
            }),
            code::kBadValue);
  EXPECT_EQ(
      error_code_of([&] {
        fp.configure(fail_command(V("alwaysOn"), Document{{"failCommands", V(bson::Array{V("a")})},
                                                          {"blockConnection", V(true)}}));
      }),
      code::kBadValue);
  EXPECT_EQ(
      error_code_of([&] {
        fp.configure(Document{{"configureFailPoint", V("noSuchFailPoint")}, {"mode", V("off")}});
      }),
      code::kBadValue);
}

TEST(FailPoints, PrimaryTransactionalWrite) {
  FailPoints fp;
  EXPECT_FALSE(fp.match_primary_transactional_write());
  fp.configure(Document{{"configureFailPoint", V("onPrimaryTransactionalWrite")},
                        {"mode", V(Document{{"times", V(int32_t{1})}})},
                        {"data", V(Document{{"closeConnection", V(false)},
                                            {"failBeforeCommitExceptionCode", V(int32_t{91})}})}});
  auto fault = fp.match_primary_transactional_write();
  ASSERT_TRUE(fault);
  EXPECT_FALSE(fault->close_connection);
  EXPECT_EQ(fault->fail_before_commit_code, 91);
  EXPECT_FALSE(fp.match_primary_transactional_write());
}

// mongod closes the connection unless data.closeConnection is explicitly false; the
// retryable-writes spec tests configure the fail point with no data at all and expect a retry.
TEST(FailPoints, PrimaryTransactionalWriteClosesByDefault) {
  FailPoints fp;
  fp.configure(Document{{"configureFailPoint", V("onPrimaryTransactionalWrite")},
                        {"mode", V(Document{{"times", V(int32_t{1})}})}});
  auto fault = fp.match_primary_transactional_write();
  ASSERT_TRUE(fault);
  EXPECT_TRUE(fault->close_connection);
  EXPECT_FALSE(fault->fail_before_commit_code);
}

TEST(Parameters, StartupAndRuntime) {
  ServerParameters params;
  EXPECT_EQ(params.ttl_monitor_sleep_secs(), 60);
  params.set_from_startup("ttlMonitorSleepSecs=1");
  EXPECT_EQ(params.ttl_monitor_sleep_secs(), 1);
  Document was =
      params.set(Document{{"setParameter", V(int32_t{1})}, {"ttlMonitorSleepSecs", V(int32_t{5})}});
  EXPECT_EQ(was.get("was")->as_int32(), 1);
  EXPECT_EQ(params.ttl_monitor_sleep_secs(), 5);
  Document got =
      params.get(Document{{"getParameter", V(int32_t{1})}, {"ttlMonitorSleepSecs", V(int32_t{1})}});
  EXPECT_EQ(got.get("ttlMonitorSleepSecs")->as_int32(), 5);
  EXPECT_EQ(got.size(), 1u);
  Document all = params.get(Document{{"getParameter", V("*")}});
  EXPECT_TRUE(all.has("featureCompatibilityVersion"));
}

TEST(Parameters, RefusesUnknownAndOutOfRange) {
  ServerParameters params;
  EXPECT_THROW(params.set_from_startup("noSuchParam=1"), std::invalid_argument);
  EXPECT_THROW(params.set_from_startup("ttlMonitorSleepSecs=abc"), std::invalid_argument);
  EXPECT_THROW(params.set_from_startup("ttlMonitorSleepSecs=0"), std::invalid_argument);
  EXPECT_THROW(params.set_from_startup("ttlMonitorSleepSecs"), std::invalid_argument);
  EXPECT_EQ(error_code_of([&] {
              params.set(Document{{"setParameter", V(int32_t{1})}, {"bogus", V(int32_t{1})}});
            }),
            code::kInvalidOptions);
  EXPECT_EQ(error_code_of([&] {
              params.get(Document{{"getParameter", V(int32_t{1})}, {"bogus", V(int32_t{1})}});
            }),
            code::kInvalidOptions);
  EXPECT_EQ(
      error_code_of([&] {
        params.set(Document{{"setParameter", V(int32_t{1})}, {"ttlMonitorSleepSecs", V("x")}});
      }),
      code::kBadValue);
  EXPECT_EQ(
      error_code_of([&] {
        params.set(Document{{"setParameter", V(int32_t{1})}, {"enableTestCommands", V(false)}});
      }),
      code::kBadValue);
}

TEST(ReplicaStateTest, ElectionIdEncodesTheTerm) {
  EXPECT_EQ(election_id_for_term(3).hex(), "7fffffff0000000000000003");
  EXPECT_EQ(election_id_for_term(0x0102).hex(), "7fffffff0000000000000102");
}

TEST(ReplicaStateTest, StandaloneIsWritableAndRefusesInitiate) {
  ReplicaState state("", "127.0.0.1:1");
  EXPECT_TRUE(state.snapshot().is_writable_primary());
  EXPECT_EQ(state.term(), 0);
  EXPECT_EQ(error_code_of([&] { state.initiate(V(Document{}), 0); }), code::kNoReplicationEnabled);
}

TEST(ReplicaStateTest, InitiateOnceBecomesPrimaryInTermOne) {
  ReplicaState state("rs0", "127.0.0.1:27017");
  EXPECT_FALSE(state.snapshot().is_writable_primary());
  Document config{
      {"_id", V("rs0")},
      {"members",
       V(bson::Array{V(Document{{"_id", V(int32_t{0})}, {"host", V("127.0.0.1:27017")}})})}};
  state.initiate(V(config), 5000);
  ReplicaSnapshot s = state.snapshot();
  EXPECT_EQ(s.state, MemberState::kPrimary);
  EXPECT_EQ(s.term, 1);
  EXPECT_TRUE(s.is_writable_primary());
  EXPECT_EQ(s.initiate_optime.term, 1);
  EXPECT_EQ(s.initiate_optime.ts.seconds, 5u);
  EXPECT_EQ(error_code_of([&] { state.initiate(V(config), 6000); }), code::kAlreadyInitialized);
}

TEST(ReplicaStateTest, DefaultConfigWhenNoneGiven) {
  ReplicaState state("rs0", "127.0.0.1:27017");
  Document reply = state.initiate(V(int32_t{1}), 0);
  EXPECT_EQ(reply.get("me")->as_string(), "127.0.0.1:27017");
  EXPECT_TRUE(reply.has("info2"));
  EXPECT_EQ(state.snapshot().config->members.at(0).host, "127.0.0.1:27017");
}

TEST(ReplicaStateTest, BadConfigsAreRefused) {
  auto initiate = [](Document config) {
    return error_code_of([&] { ReplicaState("rs0", "h:1").initiate(V(std::move(config)), 0); });
  };
  auto member = [](int32_t id, const char* host) {
    return V(Document{{"_id", V(id)}, {"host", V(host)}});
  };
  EXPECT_EQ(initiate(Document{{"_id", V("other")}, {"members", V(bson::Array{member(0, "h:1")})}}),
            code::kInvalidReplicaSetConfig);
  EXPECT_EQ(initiate(Document{{"_id", V("rs0")}, {"members", V(bson::Array{})}}),
            code::kInvalidReplicaSetConfig);
  EXPECT_EQ(initiate(Document{{"_id", V("rs0")},
                              {"members", V(bson::Array{V(Document{{"_id", V(int32_t{0})}})})}}),
            code::kInvalidReplicaSetConfig);
  EXPECT_EQ(initiate(Document{{"_id", V("rs0")}, {"members", V(bson::Array{member(0, "x:2")})}}),
            code::kNodeNotFound);
  EXPECT_EQ(initiate(Document{{"_id", V("rs0")},
                              {"members", V(bson::Array{member(0, "h:1"), member(0, "h:2")})}}),
            code::kInvalidReplicaSetConfig);
}

TEST(Options, ParsesMongodFlags) {
  const char* argv[] = {
      "mongosim", "--port", "28000",          "--bind_ip=127.0.0.1,10.0.0.1", "--replSet", "rs0",
      "--dbpath", "/tmp/x", "--setParameter", "ttlMonitorSleepSecs=1"};
  ParsedCommandLine cli = parse_command_line(10, argv);
  ASSERT_TRUE(cli.options) << cli.error;
  EXPECT_EQ(cli.options->port, 28000);
  EXPECT_EQ(cli.options->bind_ips, (std::vector<std::string>{"127.0.0.1", "10.0.0.1"}));
  EXPECT_EQ(cli.options->repl_set, "rs0");
  EXPECT_EQ(cli.options->set_parameters, (std::vector<std::string>{"ttlMonitorSleepSecs=1"}));
  EXPECT_EQ(cli.options->self_host(), "127.0.0.1:28000");
}

TEST(Options, ErrorsNameTheProblem) {
  const char* unknown[] = {"mongosim", "--frobnicate"};
  ParsedCommandLine cli = parse_command_line(2, unknown);
  EXPECT_FALSE(cli.options);
  EXPECT_NE(cli.error.find("--frobnicate"), std::string::npos);
  const char* missing[] = {"mongosim", "--port"};
  cli = parse_command_line(2, missing);
  EXPECT_NE(cli.error.find("requires a value"), std::string::npos);
  const char* bad_port[] = {"mongosim", "--port", "99999"};
  cli = parse_command_line(3, bad_port);
  EXPECT_NE(cli.error.find("--port"), std::string::npos);
  const char* help[] = {"mongosim", "--help"};
  EXPECT_TRUE(parse_command_line(2, help).help);
  EXPECT_NE(usage_text().find("--setParameter"), std::string::npos);
}

}  // namespace
}  // namespace mongosim::server
