// timeline.html writer (see report/timeline.h). The page's text parts (verdict, violations,
// fault table, charts) are plain HTML, readable without script; the timeline is drawn by the
// inlined script from the embedded data.
#include "report/timeline.h"

#include <cstdio>

#include "report/charts.h"
#include "report/escape.h"
#include "report/page_assets.h"
#include "report/timeline_data.h"

namespace locklab {
namespace {

// Violation links listed per property row of the verdict table; the list below has them all.
constexpr size_t kTableLinksMax = 8;

std::string seconds(int64_t ns) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f s", static_cast<double>(ns) / 1e9);
  return buffer;
}

std::string start_text(const std::vector<Event>& history) {
  for (const Event& event : history) {
    if (event.process != "harness" || event.f != "start" || !event.value.is_object()) continue;
    std::string text;
    for (const char* key : {"scenario", "seed", "workload", "write_concern"}) {
      auto it = event.value.find(key);
      if (it == event.value.end()) continue;
      text += std::string(text.empty() ? "" : " · ") + key + " " +
              (it->is_string() ? it->get<std::string>() : it->dump());
    }
    return text;
  }
  return "";
}

std::string render_header(const std::vector<Event>& history, const Verdict& verdict) {
  const std::string outcome(to_string(verdict.overall));
  const Stats& s = verdict.stats;
  return "<header><h1>locklab run report</h1><span class=\"badge " + outcome +
         "\" id=\"outcome\">" + outcome + "</span><span class=\"meta\">" +
         xml_escape(start_text(history)) + "</span><span class=\"meta\">" +
         std::to_string(s.events) + " events · " + seconds(s.duration_ns) + " · " +
         std::to_string(s.processes) + " workers · " + std::to_string(s.acquisitions) +
         " acquisitions · " + std::to_string(s.faults) + " fault events</span></header>\n";
}

std::string render_verdict_table(const Verdict& verdict) {
  std::string out =
      "<section id=\"verdict\"><h2>Verdict</h2><table><tr><th>property</th><th>outcome</th>"
      "<th>violations</th><th>note</th></tr>\n";
  size_t number = 0;  // global violation number, in all_violations() order
  for (const PropertyResult& result : verdict.properties) {
    const std::string outcome(to_string(result.outcome));
    std::string links;
    for (size_t k = 0; k < result.violations.size(); ++k, ++number) {
      if (k < kTableLinksMax) {
        links += " <a href=\"#violation-" + std::to_string(number) + "\">#" +
                 std::to_string(number) + "</a>";
      }
    }
    if (result.violations.size() > kTableLinksMax) links += " …";
    out += "<tr><td>" + xml_escape(result.property) + "</td><td class=\"" + outcome + "\">" +
           outcome + "</td><td>" + std::to_string(result.violation_count) + links + "</td><td>" +
           xml_escape(result.note) + "</td></tr>\n";
  }
  return out + "</table></section>\n";
}

// Collapsed, so that the timeline stays on the first screen however many violations there are:
// a summary line that opens the list, and the first violation (the one the timeline marks on
// opening) on one line below it, cut with an ellipsis, its whole text in its title.
std::string render_violation_list(const Verdict& verdict) {
  const std::vector<const Violation*> violations = all_violations(verdict);
  if (violations.empty()) return "";
  std::string out = "<section id=\"violations\"><details><summary><b>Violations (" +
                    std::to_string(violations.size()) +
                    " kept)</b>: show the list (each links to the events that prove it)</summary>"
                    "<ol start=\"0\">\n";
  for (size_t k = 0; k < violations.size(); ++k) {
    const Violation& v = *violations[k];
    const std::string id = "violation-" + std::to_string(k);
    out += "<li id=\"" + id + "-item\"><a href=\"#" + id + "\"><b>" + xml_escape(v.property) +
           "</b> (zoom)</a> " + xml_escape(v.message) +
           " <span class=\"cause\">cause: " + xml_escape(v.cause) + "</span></li>\n";
  }
  const Violation& first = *violations.front();
  const std::string text = first.message + " (cause: " + first.cause + ")";
  return out + "</ol></details><div class=\"first\" title=\"" + xml_escape(text) +
         "\">first, marked on the timeline: <a href=\"#violation-0\"><b>" +
         xml_escape(first.property) + "</b> (zoom)</a> " + xml_escape(text) + "</div></section>\n";
}

std::string render_timeline_section() {
  return "<section id=\"timeline\"><div class=\"toolbar\"><b>Timeline</b>"
         "<button id=\"b-whole\">whole run (0)</button><button id=\"b-in\">zoom in (+)</button>"
         "<button id=\"b-out\">zoom out (−)</button><span id=\"view\"></span>"
         "<span class=\"legend\"><span style=\"background:hsl(200,62%,52%)\"></span>hold (colour "
         "= token)<span style=\"background:#94a3b8\"></span>acquire wait<span "
         "style=\"background:#0ea5e9\"></span>release<span style=\"background:#10b981\"></span>"
         "write<span style=\"background:#fb923c\"></span>fail<span style=\"background:#7c3aed\">"
         "</span>unknown<span style=\"background:rgba(234,88,12,.45)\"></span>fault<span "
         "style=\"background:rgba(22,163,74,.4)\"></span>primary (observed)<span "
         "style=\"background:#dc2626\"></span>violation evidence</span></div>"
         "<div class=\"hint\" style=\"font-size:12px\">wheel: zoom · drag or shift+wheel: pan · "
         "keys + − ← → 0, n/p: next/previous violation · hover or click an item for its "
         "events</div><div id=\"tl-wrap\"><canvas id=\"tl\" tabindex=\"0\" height=\"200\"></canvas>"
         "<div id=\"tip\"></div></div><div id=\"details\">Click an item, a fault band or a "
         "violation to see its events here.</div></section>\n";
}

std::string render_fault_table(const RunModel& model) {
  if (model.windows.empty()) return "";
  std::string out =
      "<section id=\"faults\"><h2>Fault windows</h2><table><tr><th>#</th><th>fault</th>"
      "<th>intent</th><th>in force</th><th>end</th><th>status</th><th>errors</th></tr>\n";
  for (size_t k = 0; k < model.windows.size(); ++k) {
    const ReportWindow& w = model.windows[k];
    std::string errors;
    for (const std::string& e : w.errors) errors += (errors.empty() ? "" : "; ") + e;
    out += "<tr><td><a href=\"#fault-" + std::to_string(k) + "\">" + xml_escape(w.window) +
           "</a></td><td>" + xml_escape(w.label()) + "</td><td>" +
           seconds(model.offset_ns(w.start_ns)) + "</td><td>" +
           seconds(model.offset_ns(w.in_force_ns)) + "</td><td>" +
           seconds(model.offset_ns(w.end_ns)) + "</td><td>" + xml_escape(w.status) + "</td><td>" +
           xml_escape(errors) + "</td></tr>\n";
  }
  return out + "</table></section>\n";
}

std::string render_primaries_note(const RunModel& model) {
  if (model.primaries.empty()) {
    return "<p class=\"hint\" style=\"font-size:12px\">Primary: no event of this history "
           "names one (only replica-set faults record the primary they saw).</p>\n";
  }
  return "<p class=\"hint\" style=\"font-size:12px\">Primary: the history records no primary "
         "over time; the members rows show each moment the harness observed one (" +
         std::to_string(model.primaries.size()) +
         " observations, from fault events), shaded until the next observation.</p>\n";
}

}  // namespace

std::string render_timeline_html(const std::vector<Event>& history, const Verdict& verdict) {
  return render_timeline_html(history, verdict, RunModel::build(history));
}

std::string render_timeline_html(const std::vector<Event>& history, const Verdict& verdict,
                                 const RunModel& model) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>locklab run "
      "report: " +
      std::string(to_string(verdict.overall)) + "</title>" + kTimelineStyle + "</head><body>\n";
  out += render_header(history, verdict);
  out += "<main><div class=\"tops\">" + render_verdict_table(verdict) +
         render_violation_list(verdict) + "</div>\n";
  out += render_timeline_section();
  out += render_primaries_note(model);
  out += "<section class=\"charts\" id=\"charts\"><h2>Run charts</h2>" +
         render_run_chart_svg(model, RunChart::kAcquisitions) +
         render_run_chart_svg(model, RunChart::kWaiting) + "</section>\n";
  out += render_fault_table(model);
  out += "</main><div id=\"state\" hidden></div>\n";
  out += "<script type=\"application/json\" id=\"data\">";
  out += render_timeline_data(history, verdict, model);
  out += "</script>\n";
  out += kTimelineErrorHook;
  out += kTimelineScript;
  out += "\n</body></html>\n";
  return out;
}

}  // namespace locklab
