// The lists of supported names (query/supported.h) are the ones the parsers use, and
// docs/mongodb-behaviour.md ("What the query engine implements") shows exactly them: every listed
// name gets past its parser's "unknown name" refusal, a name one letter off does not, and each
// bullet of the docs section names the same set as its list.
//
// What this leaves out: whether an operator behaves as mongod's does (the other query tests), and
// names outside these parsers ($changeStream's options, projection operators).
#include "query/supported.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "query/expression.h"
#include "query/query.h"
#include "query/tests/query_test_util.h"

namespace mongosim::query {
namespace {

using bson::Array;
using bson::Document;
using bson::V;
using testing::error_code_of;

template <size_t N>
std::vector<std::string> as_strings(const std::string_view (&names)[N]) {
  return {std::begin(names), std::end(names)};
}

std::vector<std::string> expression_names() {
  std::vector<std::string> out;
  for (std::string_view n : expression_operator_names()) out.emplace_back(n);
  return out;
}

// The backticked $names of the docs bullet that starts with `label`, in order.
std::vector<std::string> documented(const std::string& label) {
  std::ifstream file(std::string(LOCKLAB_SOURCE_DIR) + "/docs/mongodb-behaviour.md");
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const size_t section = text.find("### What the query engine implements");
  const size_t start = text.find("\n- " + label + ":", section);
  if (section == std::string::npos || start == std::string::npos) {
    ADD_FAILURE() << "no bullet '" << label << "' in the docs section";
    return {};
  }
  size_t end = text.find("\n- ", start + 1);
  end = std::min(end, text.find("\n\n", start + 1));
  const std::string line = text.substr(start, end - start);
  const std::string bullet = line.substr(line.find(':'));  // the label's own names left out
  // Up to the first parenthesis: what follows it names what is not supported.
  const std::string listed = bullet.substr(0, bullet.find('('));
  std::vector<std::string> out;
  const std::regex name("`(\\$[A-Za-z]+)`");
  for (auto it = std::sregex_iterator(listed.begin(), listed.end(), name);
       it != std::sregex_iterator(); ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

void expect_sorted_unique(const std::vector<std::string>& names) {
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
}

TEST(Supported, TheDocsListExactlyWhatTheParsersAccept) {
  const std::pair<const char*, std::vector<std::string>> lists[] = {
      {"Filter operators", as_strings(kFieldOperators)},
      {"Top-level filter operators", as_strings(kTopLevelOperators)},
      {"Update operators", as_strings(kUpdateOperators)},
      {"Pipeline stages", as_strings(kPipelineStages)},
      {"`$group` accumulators", as_strings(kGroupAccumulators)},
      {"Expression operators", expression_names()},
  };
  for (const auto& [label, names] : lists) {
    SCOPED_TRACE(label);
    expect_sorted_unique(names);
    EXPECT_EQ(documented(label), names);
  }
}

// Each listed name gets past the "unknown" check of its parser (it may still refuse the sample
// argument, with another code); the same name with an extra letter does not.
TEST(Supported, EveryListedNameIsKnownToItsParser) {
  for (const std::string& n : as_strings(kFieldOperators)) {
    auto parse = [](const std::string& op) {
      std::string message;
      (void)error_code_of(
          [&] {
            (void)Matcher::parse(Document{{"a", V(Document{{op, V(int32_t{1})}})}});
          },
          &message);
      return message.find("unknown operator") == std::string::npos;
    };
    EXPECT_TRUE(parse(n)) << n;
    EXPECT_FALSE(parse(n + "x")) << n;
  }
  for (const std::string& n : as_strings(kTopLevelOperators)) {
    auto parse = [](const std::string& op) {
      std::string message;
      const Value arg = op == "$and" || op == "$or" || op == "$nor"
                            ? V(Array{V(Document{{"a", V(int32_t{1})}})})
                            : V(int32_t{1});
      (void)error_code_of([&] { (void)Matcher::parse(Document{{op, arg}}); }, &message);
      return message.find("unknown top level operator") == std::string::npos;
    };
    EXPECT_TRUE(parse(n)) << n;
    EXPECT_FALSE(parse(n + "x")) << n;
  }
  for (const std::string& n : as_strings(kUpdateOperators)) {
    auto unknown = [](const std::string& op) {
      std::string message;
      (void)error_code_of(
          [&] {
            (void)Update::parse(V(Document{{op, V(Document{{"a", V(int32_t{1})}})}}));
          },
          &message);
      return message.find("Unknown modifier") != std::string::npos;
    };
    EXPECT_FALSE(unknown(n)) << n;
    EXPECT_TRUE(unknown(n + "x")) << n;
  }
  for (const std::string& n : as_strings(kPipelineStages)) {
    auto code = [](const std::string& stage) {
      return error_code_of([&] { validate_pipeline(Array{V(Document{{stage, V(Document{})}})}); });
    };
    EXPECT_NE(code(n), 40324) << n;
    EXPECT_EQ(code(n + "x"), 40324) << n;
  }
  for (const std::string& n : as_strings(kGroupAccumulators)) {
    auto code = [](const std::string& acc) {
      const Document group{{"_id", Value::null()}, {"x", V(Document{{acc, V("$a")}})}};
      return error_code_of([&] { validate_pipeline(Array{V(Document{{"$group", V(group)}})}); });
    };
    EXPECT_NE(code(n), 15952) << n;
    EXPECT_EQ(code(n + "x"), 15952) << n;
  }
  for (const std::string& n : expression_names()) {
    auto code = [](const std::string& op) {
      return error_code_of([&] { validate_expression(V(Document{{op, V(Array{})}})); });
    };
    EXPECT_NE(code(n), 168) << n;
    EXPECT_EQ(code(n + "x"), 168) << n;
  }
}

}  // namespace
}  // namespace mongosim::query
