// timeline.html writer (see report_timeline.h). The SVG is laid out here, so the page needs no
// script to draw; the script only highlights a violation's events when it is clicked.
#include "report_timeline.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "checker_index.h"
#include "report_escape.h"

namespace locklab {
namespace {

// The plot is wide enough that a typical (median) hold is kHoldWidthPx wide, within limits;
// the page scrolls sideways.
constexpr double kPlotWidthMinPx = 1400;
constexpr double kPlotWidthMaxPx = 60'000;
constexpr double kHoldWidthPx = 8;
constexpr double kLabelWidthPx = 90;
constexpr double kLaneHeightPx = 26;
constexpr double kAxisHeightPx = 30;
constexpr int kAxisTicks = 10;
// Beyond this many holds the page stays usable by drawing only the first ones.
constexpr size_t kHoldsDrawnMax = 20'000;

struct Layout {
  int64_t start_ns;
  int64_t span_ns;
  double plot_width_px;
  std::map<std::string, size_t> lane;  // process -> lane number

  double x(int64_t t_ns) const {
    return kLabelWidthPx +
           plot_width_px * static_cast<double>(t_ns - start_ns) / static_cast<double>(span_ns);
  }
  double y(size_t lane_number) const { return kAxisHeightPx + kLaneHeightPx * lane_number; }
  double height() const { return kAxisHeightPx + kLaneHeightPx * lane.size() + 10; }
};

std::string num(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", value);
  return buffer;
}

std::string ms(int64_t ns) {
  return num(static_cast<double>(ns) / 1e6);
}

std::string token_colour(const std::optional<int64_t>& token) {
  if (!token) return "#999999";
  // Unsigned: tokens can be near 2^61 (mongolock derives them from the server clock), and the
  // hue only needs a stable spread, so wrapping multiplication is what we want.
  const uint64_t hue = (static_cast<uint64_t>(*token) * 47u) % 360u;
  return "hsl(" + std::to_string(hue) + ",65%,55%)";
}

std::string render_axis(const Layout& layout) {
  std::string out;
  for (int k = 0; k <= kAxisTicks; ++k) {
    int64_t t = layout.start_ns + layout.span_ns * k / kAxisTicks;
    double x = layout.x(t);
    out += "<line class=\"tick\" x1=\"" + num(x) + "\" y1=\"" + num(kAxisHeightPx - 6) +
           "\" x2=\"" + num(x) + "\" y2=\"" + num(layout.height()) + "\"/>";
    out += "<text x=\"" + num(x) + "\" y=\"14\" text-anchor=\"middle\">" + ms(t - layout.start_ns) +
           " ms</text>\n";
  }
  return out;
}

std::string render_lanes(const Layout& layout) {
  std::string out;
  for (const auto& [process, number] : layout.lane) {
    out += "<g class=\"lane\" data-process=\"" + xml_escape(process) + "\"><rect x=\"0\" y=\"" +
           num(layout.y(number)) + "\" width=\"" + num(kLabelWidthPx + layout.plot_width_px) +
           "\" height=\"" + num(kLaneHeightPx) + "\" class=\"lane-bg" + (number % 2 ? " odd" : "") +
           "\"/><text x=\"4\" y=\"" + num(layout.y(number) + kLaneHeightPx * 0.65) + "\">" +
           xml_escape(process) + "</text></g>\n";
  }
  return out;
}

std::string render_faults(const HistoryIndex& index, const Layout& layout) {
  std::string out;
  for (const FaultWindow& window : index.windows) {
    std::vector<size_t> lanes;
    for (const std::string& target : window.targets) {
      auto it = layout.lane.find(target);
      if (it != layout.lane.end()) lanes.push_back(it->second);
    }
    double x = layout.x(window.start_ns);
    double width = std::max(1.0, layout.x(window.end_ns) - x);
    std::string title = "<title>" + xml_escape(window.describe()) + ": " +
                        ms(window.start_ns - layout.start_ns) + " .. " +
                        ms(window.end_ns - layout.start_ns) + " ms</title>";
    if (lanes.empty()) {  // cluster-wide: shade every lane
      out += "<rect class=\"fault wide\" x=\"" + num(x) + "\" y=\"" + num(kAxisHeightPx) +
             "\" width=\"" + num(width) + "\" height=\"" + num(kLaneHeightPx * layout.lane.size()) +
             "\">" + title + "</rect>\n";
    }
    for (size_t lane : lanes) {
      out += "<rect class=\"fault\" x=\"" + num(x) + "\" y=\"" + num(layout.y(lane)) +
             "\" width=\"" + num(width) + "\" height=\"" + num(kLaneHeightPx) + "\">" + title +
             "</rect>\n";
    }
  }
  return out;
}

std::string render_holds(const HistoryIndex& index, const Layout& layout) {
  std::string out;
  size_t drawn = 0;
  for (const Hold& hold : index.holds) {
    if (++drawn > kHoldsDrawnMax) break;
    auto lane = layout.lane.find(hold.process);
    if (lane == layout.lane.end()) continue;
    double x = layout.x(hold.start_ns);
    double width = std::max(1.0, layout.x(hold.end_ns) - x);
    std::string token = hold.token ? std::to_string(*hold.token) : "?";
    out += "<rect class=\"hold\" data-ev=\"" + std::to_string(hold.acquire_ok) + "\" x=\"" +
           num(x) + "\" y=\"" + num(layout.y(lane->second) + 4) + "\" width=\"" + num(width) +
           "\" height=\"" + num(kLaneHeightPx - 8) + "\" fill=\"" + token_colour(hold.token) +
           "\"><title>" + xml_escape(hold.process) + " holds " + xml_escape(hold.lock) + " token " +
           token + (hold.shared ? " (shared)" : "") + ": " + ms(hold.start_ns - layout.start_ns) +
           " .. " + ms(hold.end_ns - layout.start_ns) + " ms, ended by " +
           std::string(to_string(hold.end)) + "</title></rect>\n";
  }
  return out;
}

// A marker on every event that is evidence of a violation, and the violation list.
std::string render_violation_marks(const std::vector<Event>& history, const Verdict& verdict,
                                   const Layout& layout) {
  std::set<size_t> evidence;
  for (const PropertyResult& result : verdict.properties) {
    for (const Violation& violation : result.violations)
      evidence.insert(violation.events.begin(), violation.events.end());
  }
  std::string out;
  for (size_t e : evidence) {
    if (e >= history.size()) continue;
    const Event& event = history[e];
    auto lane = layout.lane.find(event.process);
    double x = layout.x(event.t_ns);
    double top = lane == layout.lane.end() ? kAxisHeightPx : layout.y(lane->second);
    double bottom = lane == layout.lane.end() ? layout.height() - 10 : top + kLaneHeightPx;
    out += "<line class=\"mark\" data-ev=\"" + std::to_string(e) + "\" x1=\"" + num(x) +
           "\" y1=\"" + num(top) + "\" x2=\"" + num(x) + "\" y2=\"" + num(bottom) + "\"><title>" +
           xml_escape(to_json_line(event)) + "</title></line>\n";
  }
  return out;
}

std::string render_violation_list(const Verdict& verdict) {
  std::string out = "<ol id=\"violations\">\n";
  for (const PropertyResult& result : verdict.properties) {
    for (const Violation& violation : result.violations) {
      std::string events;
      for (size_t e : violation.events) events += (events.empty() ? "" : " ") + std::to_string(e);
      out += "<li class=\"violation\" data-events=\"" + events + "\"><b>" +
             xml_escape(result.property) + "</b>: " + xml_escape(violation.message) +
             " <i>cause: " + xml_escape(violation.cause) + "</i></li>\n";
    }
  }
  return out + "</ol>\n";
}

std::string render_property_table(const Verdict& verdict) {
  std::string out = "<table><tr><th>property</th><th>outcome</th><th>violations</th></tr>\n";
  for (const PropertyResult& result : verdict.properties) {
    std::string outcome(to_string(result.outcome));
    out += "<tr><td>" + xml_escape(result.property) + "</td><td class=\"" + outcome + "\">" +
           outcome + "</td><td>" + std::to_string(result.violation_count) + "</td></tr>\n";
  }
  return out + "</table>\n";
}

const char* kStyle = R"(<style>
body{font-family:sans-serif;margin:16px}svg{font-size:11px}
.lane-bg{fill:#fafafa}.lane-bg.odd{fill:#f0f0f0}.tick{stroke:#ddd}
.fault{fill:#ff8c00;opacity:.25}.fault.wide{fill:#8a2be2;opacity:.12}
.hold{stroke:#333;stroke-width:.3}.mark{stroke:#d00;stroke-width:2}
.hl{stroke:#000!important;stroke-width:4!important;opacity:1!important}
.violation{cursor:pointer}.violation.on{background:#fee}
.valid{color:#080}.invalid{color:#c00;font-weight:bold}.unknown{color:#c80}
</style>)";

const char* kScript = R"(<script>
document.querySelectorAll('.violation').forEach(function(li){li.onclick=function(){
var on=!li.classList.contains('on');
document.querySelectorAll('.violation.on').forEach(function(x){x.classList.remove('on')});
document.querySelectorAll('.hl').forEach(function(x){x.classList.remove('hl')});
if(!on)return;li.classList.add('on');
li.dataset.events.split(' ').forEach(function(e){
document.querySelectorAll('[data-ev="'+e+'"]').forEach(function(x){x.classList.add('hl')})})}});
</script>)";

double plot_width_px(const HistoryIndex& index, int64_t span_ns) {
  std::vector<int64_t> lengths;
  for (const Hold& hold : index.holds) lengths.push_back(hold.end_ns - hold.start_ns);
  if (lengths.empty()) return kPlotWidthMinPx;
  auto middle = lengths.begin() + static_cast<std::ptrdiff_t>(lengths.size() / 2);
  std::nth_element(lengths.begin(), middle, lengths.end());
  const double median_ns = static_cast<double>(std::max<int64_t>(1, *middle));
  const double wanted = kHoldWidthPx * static_cast<double>(span_ns) / median_ns;
  return std::clamp(wanted, kPlotWidthMinPx, kPlotWidthMaxPx);
}

}  // namespace

std::string render_timeline_html(const std::vector<Event>& history, const Verdict& verdict) {
  HistoryIndex index = HistoryIndex::build(history);
  const int64_t span_ns = std::max<int64_t>(1, index.last_ns - index.first_ns);
  Layout layout{index.first_ns, span_ns, plot_width_px(index, span_ns), {}};
  for (const std::string& worker : index.workers) layout.lane.emplace(worker, layout.lane.size());
  std::string out = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>locklab " +
                    std::string("timeline</title>") + kStyle + "</head><body>\n";
  out += "<h1>locklab timeline: <span class=\"" + std::string(to_string(verdict.overall)) + "\">" +
         std::string(to_string(verdict.overall)) + "</span></h1>\n";
  out += render_property_table(verdict);
  out += "<div style=\"overflow-x:auto\">";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         num(kLabelWidthPx + layout.plot_width_px + 10) + "\" height=\"" + num(layout.height()) +
         "\">\n";
  out += render_lanes(layout);
  out += render_axis(layout);
  out += render_faults(index, layout);
  out += render_holds(index, layout);
  out += render_violation_marks(history, verdict, layout);
  out +=
      "</svg></div>\n<p>Holds are coloured by fencing token; orange: faults on a worker, violet: "
      "faults on the cluster; red lines: events that show a violation. Click a violation "
      "to highlight its events.</p>\n";
  out += render_violation_list(verdict);
  out += kScript;
  out += "</body></html>\n";
  return out;
}

}  // namespace locklab
