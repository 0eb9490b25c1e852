// Escaping for the text reports: XML/HTML attribute and text content, and Markdown table
// cells. One helper per target syntax, shared by every report writer.
// Thread rules: pure functions; call from any thread.
#pragma once

#include <string>
#include <string_view>

namespace locklab {

// &, <, >, " and ' escaped; control characters other than tab and newline dropped (XML 1.0
// cannot carry them).
std::string xml_escape(std::string_view text);
// | escaped and newlines flattened, so the text stays inside one Markdown table cell.
std::string markdown_cell(std::string_view text);

}  // namespace locklab
