// Run charts as SVG (see report/charts.h).
#include "report/charts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report/escape.h"

namespace locklab {
namespace {

constexpr double kWidthPx = 960;
constexpr double kHeightPx = 190;
constexpr double kLeftPx = 52;
constexpr double kRightPx = 12;
constexpr double kTopPx = 34;     // title and fault labels
constexpr double kBottomPx = 22;  // time axis
constexpr int kTimeTicks = 10;
constexpr int kValueTicks = 4;
constexpr size_t kBandLabelCharsMax = 28;

std::string num(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", value);
  return buffer;
}

std::string short_number(double value) {
  char buffer[32];
  if (value >= 100 || value == std::floor(value)) {
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.1f", value);
  }
  return buffer;
}

// The smallest of 1, 2, 5 times a power of ten that is >= value (value > 0).
double nice_ceiling(double value) {
  double power = std::pow(10.0, std::floor(std::log10(value)));
  for (double step : {1.0, 2.0, 5.0, 10.0}) {
    if (step * power >= value) return step * power;
  }
  return 10 * power;
}

struct Frame {
  const RunModel& model;
  double y_max;
  double plot_w() const { return kWidthPx - kLeftPx - kRightPx; }
  double plot_h() const { return kHeightPx - kTopPx - kBottomPx; }
  double x(int64_t t_ns) const { return at(static_cast<double>(model.offset_ns(t_ns))); }
  double at(double offset_ns) const {  // x of a time since the run's first event
    return kLeftPx + plot_w() * offset_ns / static_cast<double>(model.span_ns());
  }
  double y(double value) const { return kTopPx + plot_h() * (1 - value / y_max); }
};

// Every band is numbered (its number starts its title). Its label goes above the plot when it
// does not overlap the previous label; otherwise the band's number alone is drawn at the top of
// the band inside the plot, on one of kBandNumberLevels lines, so close bands stay identifiable.
std::string render_bands(const Frame& f) {
  constexpr int kBandNumberLevels = 4;
  std::string out;
  double label_end_px = 0;
  for (size_t k = 0; k < f.model.windows.size(); ++k) {
    const ReportWindow& w = f.model.windows[k];
    const std::string number = std::to_string(k + 1);
    const double x0 = f.x(w.start_ns), x1 = std::max(x0 + 1, f.x(w.end_ns));
    out += "<rect class=\"band\" x=\"" + num(x0) + "\" y=\"" + num(kTopPx) + "\" width=\"" +
           num(x1 - x0) + "\" height=\"" + num(f.plot_h()) +
           "\" fill=\"#f59e0b\" opacity=\"0.18\">" + "<title>" +
           xml_escape(number + ": " + w.label() + " (" + w.status + ")") + "</title></rect>\n";
    std::string label = number + " " + w.label();
    if (label.size() > kBandLabelCharsMax) {
      size_t cut = kBandLabelCharsMax - 1;  // back to a UTF-8 lead byte: never split a character
      while (cut > 0 && (static_cast<unsigned char>(label[cut]) & 0xC0) == 0x80) --cut;
      label = label.substr(0, cut) + "…";
    }
    if (x0 >= label_end_px) {
      out += "<text class=\"band-label\" x=\"" + num(x0 + 2) + "\" y=\"" + num(kTopPx - 4) +
             "\" font-size=\"10\" fill=\"#92400e\">" + xml_escape(label) + "</text>\n";
      label_end_px = x0 + 6.0 * static_cast<double>(label.size()) + 8;
    } else {
      const double y = kTopPx + 10 + 10.0 * static_cast<double>(k % kBandNumberLevels);
      out += "<text class=\"band-label\" x=\"" + num(x0 + 1) + "\" y=\"" + num(y) +
             "\" font-size=\"9\" fill=\"#92400e\">" + number + "</text>\n";
    }
  }
  return out;
}

std::string render_axes(const Frame& f) {
  std::string out;
  for (int k = 0; k <= kValueTicks; ++k) {
    const double value = f.y_max * k / kValueTicks;
    out += "<line x1=\"" + num(kLeftPx) + "\" x2=\"" + num(kWidthPx - kRightPx) + "\" y1=\"" +
           num(f.y(value)) + "\" y2=\"" + num(f.y(value)) + "\" stroke=\"#e5e7eb\"/>";
    out += "<text x=\"" + num(kLeftPx - 4) + "\" y=\"" + num(f.y(value) + 3) +
           "\" font-size=\"10\" text-anchor=\"end\" fill=\"#555\">" + short_number(value) +
           "</text>\n";
  }
  const double span_s = static_cast<double>(f.model.span_ns()) / 1e9;
  const double step_s = nice_ceiling(span_s / kTimeTicks);
  for (double seconds = 0; seconds <= span_s; seconds += step_s) {
    char text[32];
    std::snprintf(text, sizeof text, step_s < 1 ? "%.1f s" : "%.0f s", seconds);
    out += "<text x=\"" + num(f.at(seconds * 1e9)) + "\" y=\"" + num(kHeightPx - 6) +
           "\" font-size=\"10\" text-anchor=\"middle\" fill=\"#555\">" + text + "</text>\n";
  }
  return out;
}

std::string render_line(const Frame& f, const std::vector<double>& values, const char* colour) {
  std::string points;
  const int64_t bucket_ns = f.model.series.bucket_ns;
  for (size_t b = 0; b < values.size(); ++b) {
    const double t0 = static_cast<double>(b) * static_cast<double>(bucket_ns);
    const double t1 =
        std::min(static_cast<double>(f.model.span_ns()), t0 + static_cast<double>(bucket_ns));
    points += num(f.at(t0)) + "," + num(f.y(values[b])) + " " + num(f.at(t1)) + "," +
              num(f.y(values[b])) + " ";
  }
  return "<polyline fill=\"none\" stroke=\"" + std::string(colour) +
         "\" stroke-width=\"1.5\" points=\"" + points + "\"/>\n";
}

}  // namespace

const char* run_chart_file(RunChart chart) {
  return chart == RunChart::kAcquisitions ? "acquisitions.svg" : "waiting.svg";
}

std::string render_run_chart_svg(const RunModel& model, RunChart chart) {
  const bool acquisitions = chart == RunChart::kAcquisitions;
  const std::vector<double>& values =
      acquisitions ? model.series.acquisitions_per_s : model.series.waiting_workers;
  const double peak = values.empty() ? 0 : *std::max_element(values.begin(), values.end());
  // kValueTicks ticks of a round step: 0, 2, 4, 6, 8 rather than 0, 1.2, 2.5...
  Frame frame{model, kValueTicks * nice_ceiling(std::max(1.0, peak) / kValueTicks)};
  char bucket[64];
  std::snprintf(bucket, sizeof bucket, "%g ms buckets",
                static_cast<double>(model.series.bucket_ns) / 1e6);
  const std::string title =
      std::string(acquisitions ? "acquisitions per second" : "waiting workers (pending acquires)") +
      ", " + bucket + "; bands: fault windows";
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"run-chart\" width=\"" +
                    num(kWidthPx) + "\" height=\"" + num(kHeightPx) + "\" viewBox=\"0 0 " +
                    num(kWidthPx) + " " + num(kHeightPx) +
                    "\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" "
                    "fill=\"#fff\"/>\n<text x=\"" +
                    num(kLeftPx) + "\" y=\"13\" font-size=\"12\" font-weight=\"bold\">" +
                    xml_escape(title) + "</text>\n";
  out += render_bands(frame);
  out += render_axes(frame);
  out += render_line(frame, values, acquisitions ? "#2563eb" : "#dc2626");
  return out + "</svg>\n";
}

}  // namespace locklab
