// junit.xml writer (see report/junit.h).
#include "report/junit.h"

#include "report/escape.h"

namespace locklab {

std::string render_junit_xml(const Verdict& verdict, const std::string& suite_name) {
  size_t failures = 0, skipped = 0;
  std::string cases;
  for (const PropertyResult& result : verdict.properties) {
    cases += "  <testcase classname=\"" + xml_escape(suite_name) + "\" name=\"" +
             xml_escape(result.property) + "\"";
    if (result.outcome == Outcome::kValid) {
      cases += "/>\n";
      continue;
    }
    cases += ">\n";
    if (result.outcome == Outcome::kInvalid) {
      ++failures;
      const Violation* first = result.violations.empty() ? nullptr : &result.violations[0];
      std::string message = first != nullptr ? first->message : result.note;
      std::string cause = first != nullptr ? first->cause : "";
      cases += "    <failure message=\"" + xml_escape(message) + "\" type=\"" +
               xml_escape(result.property) + "\">" +
               xml_escape(std::to_string(result.violation_count) + " violations; cause of the " +
                          "first: " + cause) +
               "</failure>\n";
    } else {
      // JUnit has no third outcome: unknown and not-applicable are skipped, told apart by the
      // message's prefix (docs/properties.md "Outcomes").
      ++skipped;
      std::string prefix = result.outcome == Outcome::kUnknown ? "unknown" : "not applicable";
      std::string note = result.note;
      if (note.rfind(prefix + ": ", 0) == 0) note = note.substr(prefix.size() + 2);
      cases += "    <skipped message=\"" + xml_escape(prefix + ": " + note) + "\"/>\n";
    }
    cases += "  </testcase>\n";
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites>\n";
  out += " <testsuite name=\"" + xml_escape(suite_name) + "\" tests=\"" +
         std::to_string(verdict.properties.size()) + "\" failures=\"" + std::to_string(failures) +
         "\" errors=\"0\" skipped=\"" + std::to_string(skipped) + "\">\n";
  out += cases;
  out += " </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace locklab
