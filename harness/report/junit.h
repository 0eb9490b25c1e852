// junit.xml for CI systems: one testsuite "locklab", one testcase per checked property; a
// violated property carries a <failure> whose message is its first violation, an unknown one
// a <skipped> with the reason.
// Thread rules: pure function; call from any thread.
#pragma once

#include <string>

#include "checker/checker.h"

namespace locklab {

std::string render_junit_xml(const Verdict& verdict, const std::string& suite_name);

}  // namespace locklab
