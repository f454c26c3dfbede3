#include <fraglab/runtime/output/svg_chart.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace fraglab::svg {
namespace {

// matplotlib's tab10: distinct for the colour-blind in most pairs, and what plot.py uses.
constexpr std::array<char const*, 10> palette{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                              "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

struct scale {
  double divisor = 1;
  std::string unit;
};

scale unit_for(axis const& a, double top)
{
  if (!a.bytes) return {};
  static constexpr std::array<std::pair<char const*, double>, 4> units{
      {{"TiB", 1099511627776.0}, {"GiB", 1073741824.0}, {"MiB", 1048576.0}, {"KiB", 1024.0}}};
  for (auto const& [name, size] : units)
    if (top >= size) return {size, name};
  return {1, "B"};
}

// Round ticks from 0 to at least `top`: steps of 1, 2 or 5 times a power of ten, about five.
std::vector<double> ticks(double top)
{
  if (!(top > 0)) top = 1;
  double const raw = top / 5;
  double const power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= raw) {
      step = m * power;
      break;
    }
  std::vector<double> out;
  for (double v = 0; v < top + step * 0.999; v += step) out.push_back(v);
  return out;
}

std::string number(double v)
{
  char buf[32];
  if (v == std::floor(v) && std::abs(v) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string fixed1(double v)
{
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

constexpr int width = 760, left = 70, right_margin = 220, top_margin = 30, bottom_margin = 45;

std::string header(int height, std::string const& title)
{
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) + "\" height=\"" + std::to_string(height) +
         "\" viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height) +
         "\" font-family=\"sans-serif\" font-size=\"11\">\n<title>" + escaped(title) + "</title>\n<text x=\"" +
         std::to_string(left) + "\" y=\"18\" font-size=\"13\" font-weight=\"bold\">" + escaped(title) + "</text>\n";
}

}  // namespace

std::string escaped(std::string const& text)
{
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string line_chart(std::string const& title, axis const& x, axis const& y, std::vector<series> const& lines)
{
  int const height = 300;
  int const plot_w = width - left - right_margin, plot_h = height - top_margin - bottom_margin;
  double x_top = 0, y_top = 0;
  for (auto const& s : lines) {
    for (double v : s.x) x_top = std::max(x_top, v);
    for (double v : s.y) y_top = std::max(y_top, v);
  }
  scale const ys = unit_for(y, y_top);
  std::vector<double> const xt = ticks(x_top), yt = ticks(y_top / ys.divisor);
  double const x_max = xt.back(), y_max = yt.back() * ys.divisor;
  auto const px = [&](double v) { return left + (x_max > 0 ? v / x_max : 0) * plot_w; };
  auto const py = [&](double v) { return top_margin + plot_h - (y_max > 0 ? v / y_max : 0) * plot_h; };
  std::string out = header(height, title);
  // Grid and ticks.
  for (double t : yt) {
    double const at = py(t * ys.divisor);
    out += "<line x1=\"" + fixed1(left) + "\" x2=\"" + fixed1(left + plot_w) + "\" y1=\"" + fixed1(at) + "\" y2=\"" + fixed1(at) +
           "\" stroke=\"#ddd\"/>\n<text x=\"" + fixed1(left - 6) + "\" y=\"" + fixed1(at + 4) + "\" text-anchor=\"end\">" + number(t) +
           "</text>\n";
  }
  for (double t : xt)
    out += "<text x=\"" + fixed1(px(t)) + "\" y=\"" + fixed1(top_margin + plot_h + 15) + "\" text-anchor=\"middle\">" + number(t) +
           "</text>\n";
  out += "<rect x=\"" + std::to_string(left) + "\" y=\"" + std::to_string(top_margin) + "\" width=\"" + std::to_string(plot_w) +
         "\" height=\"" + std::to_string(plot_h) + "\" fill=\"none\" stroke=\"#333\"/>\n";
  out += "<text x=\"" + fixed1(left + plot_w / 2.0) + "\" y=\"" + std::to_string(height - 8) + "\" text-anchor=\"middle\">" +
         escaped(x.label) + "</text>\n";
  out += "<text transform=\"rotate(-90)\" x=\"" + fixed1(-(top_margin + plot_h / 2.0)) + "\" y=\"14\" text-anchor=\"middle\">" +
         escaped(y.label + (ys.unit.empty() ? "" : " (" + ys.unit + ")")) + "</text>\n";
  // The series, then their legend beside the plot.
  for (std::size_t i = 0; i < lines.size(); ++i) {
    series const& s = lines[i];
    std::string const color = s.color.value_or(palette[i % palette.size()]);
    out += "<polyline fill=\"none\" stroke=\"" + color + "\" stroke-width=\"1.5\"" + (s.dashed ? " stroke-dasharray=\"5,3\"" : "") +
           " points=\"";
    for (std::size_t k = 0; k < s.x.size() && k < s.y.size(); ++k) out += fixed1(px(s.x[k])) + "," + fixed1(py(s.y[k])) + " ";
    out += "\"><title>" + escaped(s.name) + "</title></polyline>\n";
    double const ly = top_margin + 8 + 16.0 * static_cast<double>(i);
    out += "<line x1=\"" + fixed1(left + plot_w + 12) + "\" x2=\"" + fixed1(left + plot_w + 34) + "\" y1=\"" + fixed1(ly) + "\" y2=\"" +
           fixed1(ly) + "\" stroke=\"" + color + "\" stroke-width=\"2\"" + (s.dashed ? " stroke-dasharray=\"5,3\"" : "") + "/>\n";
    out += "<text x=\"" + fixed1(left + plot_w + 40) + "\" y=\"" + fixed1(ly + 4) + "\">" + escaped(s.name) + "</text>\n";
  }
  return out + "</svg>\n";
}

std::string bar_chart(std::string const& title, axis const& value, std::vector<bar> const& bars, bool percent)
{
  int const bar_h = 18;
  int const height = top_margin + bottom_margin + bar_h * static_cast<int>(std::max<std::size_t>(bars.size(), 1));
  int const name_w = 150, plot_w = width - name_w - 90;
  double top = 0;
  for (bar const& b : bars) top = std::max(top, b.value);
  scale const s = percent ? scale{0.01, "%"} : unit_for(value, top);
  std::vector<double> const t = ticks(top / s.divisor);
  double const max = t.back() * s.divisor;
  auto const px = [&](double v) { return name_w + (max > 0 ? std::max(0.0, v) / max : 0) * plot_w; };
  std::string out = header(height, title);
  for (double v : t) {
    double const at = px(v * s.divisor);
    out += "<line x1=\"" + fixed1(at) + "\" x2=\"" + fixed1(at) + "\" y1=\"" + std::to_string(top_margin) + "\" y2=\"" +
           std::to_string(height - bottom_margin) + "\" stroke=\"#ddd\"/>\n<text x=\"" + fixed1(at) + "\" y=\"" +
           std::to_string(height - bottom_margin + 15) + "\" text-anchor=\"middle\">" + number(v) + "</text>\n";
  }
  for (std::size_t i = 0; i < bars.size(); ++i) {
    double const y = top_margin + static_cast<double>(i) * bar_h;
    double const w = px(bars[i].value) - name_w;
    std::string const shown = (percent ? fixed1(bars[i].value * 100) : number(bars[i].value / s.divisor)) + (s.unit.empty() ? "" : " " + s.unit);
    out += "<text x=\"" + std::to_string(name_w - 6) + "\" y=\"" + fixed1(y + bar_h * 0.7) + "\" text-anchor=\"end\">" +
           escaped(bars[i].name) + "</text>\n";
    out += "<rect x=\"" + std::to_string(name_w) + "\" y=\"" + fixed1(y + 2) + "\" width=\"" + fixed1(w) + "\" height=\"" +
           std::to_string(bar_h - 4) + "\" fill=\"" + palette[0] + "\"><title>" + escaped(bars[i].name) + ": " + shown +
           "</title></rect>\n";
    out += "<text x=\"" + fixed1(name_w + w + 4) + "\" y=\"" + fixed1(y + bar_h * 0.7) + "\">" + shown + "</text>\n";
  }
  out += "<text x=\"" + fixed1(name_w + plot_w / 2.0) + "\" y=\"" + std::to_string(height - 8) + "\" text-anchor=\"middle\">" +
         escaped(value.label + (s.unit.empty() ? "" : " (" + s.unit + ")")) + "</text>\n";
  return out + "</svg>\n";
}

}  // namespace fraglab::svg
