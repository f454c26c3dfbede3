// Charts as self-contained SVG text, for `fraglab report`: a line chart of series over a
// shared x axis and a horizontal bar chart, each with its title, axes that start at zero,
// ticks at round values, sizes in the binary unit that fits, and a legend beside the data.
// No script, no font file, nothing fetched: a browser, an editor or a Markdown viewer shows it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fraglab::svg {

struct series {
  std::string name;
  std::vector<double> x, y;
  bool dashed = false;
  std::optional<std::string> color;  // default: the palette, in order
};

struct axis {
  std::string label;
  bool bytes = false;  // values are bytes: drawn in KiB, MiB, GiB as fits
};

std::string line_chart(std::string const& title, axis const& x, axis const& y, std::vector<series> const& lines);

struct bar {
  std::string name;
  double value = 0;
};

// `percent`: values are fractions, drawn as percentages.
std::string bar_chart(std::string const& title, axis const& value, std::vector<bar> const& bars, bool percent = false);

// Text as SVG and HTML carry it: & < > " escaped.
std::string escaped(std::string const& text);

}  // namespace fraglab::svg
