// mongoc_init() before the first test of the binary and mongoc_cleanup() after the last
// (mongoc_view.h); registered once here so no test file does it again.
#include <gtest/gtest.h>
#include <mongoc/mongoc.h>

namespace {

class MongocEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { mongoc_init(); }
  void TearDown() override { mongoc_cleanup(); }
};
const auto* const kMongocEnv = ::testing::AddGlobalTestEnvironment(new MongocEnvironment);

}  // namespace
