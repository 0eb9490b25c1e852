// Escaping for the text reports: XML/HTML attribute and text content, Markdown table cells, and
// the bidirectional controls any of them may carry. One helper per target syntax, shared by
// every report writer.
// Invariant: no report text holds a bidirectional control character from the history (an
// override such as U+202E in a worker id would reorder the text around the name); each is
// shown as its code point, "[U+202E]".
// Thread rules: pure functions; call from any thread.
#pragma once

#include <string>
#include <string_view>

namespace locklab {

// &, <, >, " and ' escaped; control characters other than tab and newline dropped (XML 1.0
// cannot carry them); bidirectional controls shown as code points (bidi_visible).
std::string xml_escape(std::string_view text);
// | escaped and newlines flattened, so the text stays inside one Markdown table cell;
// bidirectional controls shown as code points (bidi_visible).
std::string markdown_cell(std::string_view text);
// The text with every bidirectional control (U+061C, U+200E, U+200F, U+202A..U+202E,
// U+2066..U+2069) replaced by its code point in brackets, "[U+202E]"; everything else as is.
std::string bidi_visible(std::string_view text);

}  // namespace locklab
