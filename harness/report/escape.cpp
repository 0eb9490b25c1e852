// Escaping for the text reports (see report/escape.h).
#include "report/escape.h"

#include <cstdio>

namespace locklab {
namespace {

// The code point of the bidirectional control whose UTF-8 encoding starts at text[i], or 0.
unsigned bidi_control_at(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  if (i + 1 < text.size() && byte(i) == 0xD8 && byte(i + 1) == 0x9C) return 0x061C;
  if (i + 2 >= text.size() || byte(i) != 0xE2) return 0;
  const unsigned point = 0x2000u | ((byte(i + 1) & 0x3Fu) << 6) | (byte(i + 2) & 0x3Fu);
  const bool control = point == 0x200E || point == 0x200F || (point >= 0x202A && point <= 0x202E) ||
                       (point >= 0x2066 && point <= 0x2069);
  return control && (byte(i + 1) & 0xC0) == 0x80 && (byte(i + 2) & 0xC0) == 0x80 ? point : 0;
}

}  // namespace

std::string bidi_visible(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned point = bidi_control_at(text, i);
    if (point == 0) {
      out += text[i];
      continue;
    }
    char code[16];
    std::snprintf(code, sizeof code, "[U+%04X]", point);
    out += code;
    i += point == 0x061C ? 1 : 2;  // the rest of its encoding
  }
  return out;
}

std::string xml_escape(std::string_view raw) {
  const std::string text = bidi_visible(raw);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') break;
        out += c;
    }
  }
  return out;
}

std::string markdown_cell(std::string_view raw) {
  const std::string text = bidi_visible(raw);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace locklab
