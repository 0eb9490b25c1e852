#include "records.h"

#include <sstream>
#include <stdexcept>

namespace lockbench {

std::string to_text(const ContenderReport& report) {
  std::ostringstream out;
  for (const Hold& h : report.holds) {
    out << "H " << h.lock << ' ' << h.token << ' ' << h.asked_ns << ' ' << h.acquired_ns << ' '
        << h.released_ns << ' ' << h.release_asked_ns << '\n';
  }
  if (report.open_wait) {
    out << "W " << report.open_wait->lock << ' ' << report.open_wait->asked_ns << ' '
        << report.open_wait->given_up_ns << '\n';
  }
  out << "T " << report.acquisitions << ' ' << report.releases << '\n';
  for (const auto& [name, count] : report.commands_sent)
    out << "C " << name << ' ' << count << '\n';
  if (!report.error.empty()) {
    std::string flat = report.error;
    for (char& c : flat) {
      if (c == '\n') c = ' ';
    }
    out << "E " << flat << '\n';
  }
  return out.str();
}

namespace {

[[noreturn]] void bad_line(const std::string& source, int number, const std::string& line) {
  throw std::runtime_error(source + ":" + std::to_string(number) + ": malformed record '" + line +
                           "'");
}

void parse_line(ContenderReport& report, const std::string& line, const std::string& source,
                int number) {
  std::istringstream in(line);
  char kind = 0;
  in >> kind;
  if (kind == 'E') {
    report.error = line.size() > 2 ? line.substr(2) : "(no message)";
    return;
  }
  bool ok = false;
  if (kind == 'H') {
    Hold h;
    ok = static_cast<bool>(in >> h.lock >> h.token >> h.asked_ns >> h.acquired_ns >>
                           h.released_ns >> h.release_asked_ns);
    if (ok) report.holds.push_back(h);
  } else if (kind == 'W') {
    OpenWait w;
    ok = static_cast<bool>(in >> w.lock >> w.asked_ns >> w.given_up_ns);
    if (ok) report.open_wait = w;
  } else if (kind == 'T') {
    ok = static_cast<bool>(in >> report.acquisitions >> report.releases);
  } else if (kind == 'C') {
    std::string name;
    int64_t count = 0;
    ok = static_cast<bool>(in >> name >> count);
    if (ok) report.commands_sent[name] += count;
  }
  std::string rest;
  if (!ok || (in >> rest)) bad_line(source, number, line);
}

}  // namespace

ContenderReport from_text(const std::string& text, const std::string& source) {
  ContenderReport report;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  bool tally_seen = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    if (line[0] == 'T') tally_seen = true;
    parse_line(report, line, source, number);
  }
  if (!tally_seen) {
    throw std::runtime_error(source + ": no 'T' line (the contender did not finish its report)");
  }
  return report;
}

}  // namespace lockbench
