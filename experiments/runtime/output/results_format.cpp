#include <fraglab/runtime/output/results_format.hpp>

#include <fraglab/runtime/io/csv.hpp>
#include <fraglab/runtime/output/svg_chart.hpp>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string_view>

namespace fraglab {
namespace {

// The bytes of the UTF-8 sequence `s` starts with, or 0 where it starts with none.
std::size_t utf8_sequence_length(std::string_view s)
{
  auto const c = static_cast<unsigned char>(s[0]);
  std::size_t const n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0 || s.size() < n) return 0;
  for (std::size_t i = 1; i < n; ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xc0) != 0x80) return 0;
  auto const c1 = static_cast<unsigned char>(s[1]);
  if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0) || (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90))
    return 0;  // overlong, a surrogate, or above U+10FFFF
  return n;
}

// Columns of a terminal a cell takes: UTF-8 continuation bytes take none.
std::size_t display_width(std::string const& s)
{
  std::size_t n = 0;
  for (char const c : s) n += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  return n;
}


bool is_numeric(std::string const& s)
{
  return !s.empty() && s.find_first_not_of("0123456789.-e+") == std::string::npos;
}

// A number, or one in a table for a reader (table_view.hpp): 142.76 MiB, 3.1%.
bool is_quantity(std::string const& s)
{
  std::size_t const digits = s.find_first_not_of("0123456789.-e+");
  if (digits == 0 || s.empty()) return false;
  if (digits == std::string::npos) return true;
  std::string_view const unit = std::string_view(s).substr(digits);
  for (std::string_view u : {"%", " B", " KiB", " MiB", " GiB", " TiB"})
    if (unit == u) return true;
  return false;
}

// JSON strings are Unicode: a byte that is not part of valid UTF-8 (a file name in another
// encoding) is written as the lone surrogate U+DC00+byte, as Python's surrogateescape reads
// file names, so that `os.fsencode` gives the bytes back; control characters as \uXXXX.
std::string json_escape(std::string const& s)
{
  std::string out;
  auto hex4 = [&out](unsigned v) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", v);
    out += buf;
  };
  for (std::size_t i = 0; i < s.size();) {
    auto const c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c == '"' || c == '\\') out += '\\';
      if (c < 0x20) hex4(c);
      else out += static_cast<char>(c);
      ++i;
      continue;
    }
    std::size_t const n = utf8_sequence_length(std::string_view(s).substr(i));
    if (n == 0) {
      hex4(0xdc00 + c);
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

// What a table or Markdown cell shows of text from outside (a file name): control bytes as
// \xNN, so a name cannot move the cursor or clear the screen; in Markdown as markdown_text
// says, and a '|' escaped, so that it cannot split a cell.
std::string shown_cell(std::string const& s, bool md)
{
  std::string out;
  for (char const ch : s) {
    auto const c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else if (md && c == '|') {
      out += "\\|";
    } else if (md) {
      out += markdown_text(std::string_view(&ch, 1));
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace

std::string markdown_text(std::string_view s)
{
  std::string out;
  for (char const ch : s) {
    switch (ch) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '\\':
      case '`':
      case '[':
      case ']':
        out += '\\';
        out += ch;
        break;
      default: out += ch;
    }
  }
  return out;
}

output_format parse_output_format(std::string_view s)
{
  if (s == "table") return output_format::table;
  if (s == "csv") return output_format::csv;
  if (s == "json") return output_format::json;
  if (s == "md") return output_format::md;
  throw std::invalid_argument("unknown format '" + std::string(s) + "' (known: table, csv, json, md)");
}

std::string fixed(double v, int digits)
{
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::vector<std::string> result_columns()
{
  return {"trace", "policy", "events", "allocs", "frees", "failed_allocs", "peak_live_bytes", "peak_allocated_bytes",
          "peak_reserved_bytes", "frag1", "frag2", "frag3", "frag4", "ext_frag_at_peak", "ext_frag_avg", "utilization", "free_chunks_at_peak",
          "unknown_frees", "duplicate_allocs", "acquisitions", "releases", "cache_releases", "splits", "merges",
          "index_steps_per_op", "ns_per_op", "backend", "granularity", "parameters"};
}

std::vector<std::string> result_cells(replay_result const& r)
{
  return {r.trace,
          r.policy,
          std::to_string(r.events),
          std::to_string(r.allocs),
          std::to_string(r.frees),
          std::to_string(r.failed_allocs),
          std::to_string(r.peak_live_bytes),
          std::to_string(r.peak_allocated_bytes),
          std::to_string(r.peak_reserved_bytes),
          fixed(r.frag1, 4),
          fixed(r.frag2, 4),
          fixed(r.frag3, 4),
          fixed(r.frag4, 4),
          fixed(r.ext_frag_at_peak, 4),
          fixed(r.ext_frag_avg, 4),
          fixed(r.utilization(), 4),
          std::to_string(r.free_chunks_at_peak),
          std::to_string(r.unknown_frees),
          std::to_string(r.duplicate_allocs),
          std::to_string(r.acquisitions),
          std::to_string(r.releases),
          std::to_string(r.cache_releases),
          std::to_string(r.splits),
          std::to_string(r.merges),
          fixed(r.index_steps_per_op, 2),
          fixed(r.ns_per_op, 1),
          r.backend,
          std::to_string(r.granularity),
          r.parameters};
}

std::vector<std::string> timeseries_columns()
{
  return {"trace",          "policy",      "event",          "live_bytes",    "allocated_bytes",
          "reserved_bytes", "largest_free_bytes", "free_chunks", "max_live_bytes", "max_reserved_bytes"};
}

void append_timeseries_rows(replay_result const& r, std::vector<std::vector<std::string>>& rows)
{
  for (timeseries_sample const& s : r.timeseries)
    rows.push_back({r.trace, r.policy, std::to_string(s.event), std::to_string(s.live_bytes),
                    std::to_string(s.allocated_bytes), std::to_string(s.reserved_bytes),
                    std::to_string(s.largest_free_bytes), std::to_string(s.free_chunks), std::to_string(s.max_live_bytes),
                    std::to_string(s.max_reserved_bytes)});
}

std::string format_rows(std::vector<std::string> const& columns, std::vector<std::vector<std::string>> const& rows,
                        output_format f)
{
  std::string out;
  switch (f) {
    case output_format::csv:
      for (std::size_t i = 0; i < columns.size(); ++i) {
        if (i != 0) out += ',';
        out += csv_cell(columns[i]);
      }
      out += '\n';
      for (auto const& row : rows) {
        for (std::size_t i = 0; i < row.size(); ++i) {
          if (i != 0) out += ',';
          out += csv_cell(row[i]);
        }
        out += '\n';
      }
      return out;
    case output_format::json:
      out += "[\n";
      for (std::size_t r = 0; r < rows.size(); ++r) {
        out += "  {";
        for (std::size_t i = 0; i < columns.size(); ++i) {
          if (i != 0) out += ", ";
          out += '"';
          out += columns[i];
          out += "\": ";
          if (is_numeric(rows[r][i])) {
            out += rows[r][i];
          } else {
            out += '"';
            out += json_escape(rows[r][i]);
            out += '"';
          }
        }
        out += r + 1 < rows.size() ? "},\n" : "}\n";
      }
      return out + "]\n";
    case output_format::md:
    case output_format::table: {
      bool const md = f == output_format::md;
      std::vector<std::vector<std::string>> shown;
      shown.reserve(rows.size());
      for (auto const& row : rows) {
        shown.emplace_back();
        for (auto const& cell : row) shown.back().push_back(shown_cell(cell, md));
      }
      std::vector<std::size_t> width(columns.size());
      for (std::size_t i = 0; i < columns.size(); ++i) {
        width[i] = columns[i].size();
        for (auto const& row : shown) width[i] = std::max(width[i], display_width(row[i]));
      }
      // A column of quantities is right-aligned, so that their digits line up.
      std::vector<bool> quantities(columns.size(), !shown.empty());
      for (auto const& row : shown)
        for (std::size_t i = 0; i < row.size(); ++i) quantities[i] = quantities[i] && (row[i].empty() || is_quantity(row[i]));
      auto line = [&](std::vector<std::string> const& cells) {
        std::string l = md ? "| " : "";
        for (std::size_t i = 0; i < cells.size(); ++i) {
          bool const right = quantities[i] && &cells != &columns;
          std::string const pad(width[i] - display_width(cells[i]), ' ');
          l += right ? pad + cells[i] : cells[i] + pad;
          l += i + 1 < cells.size() ? (md ? " | " : "  ") : (md ? " |" : "");
        }
        while (!md && !l.empty() && l.back() == ' ') l.pop_back();
        return l + "\n";
      };
      out += line(columns);
      if (md) {
        out += "|";
        for (std::size_t i = 0; i < columns.size(); ++i) out += std::string(width[i] + 2, '-') + "|";
        out += "\n";
      }
      for (auto const& row : shown) out += line(row);
      return out;
    }
  }
  return out;
}

std::string html_table(std::vector<std::string> const& columns, std::vector<std::vector<std::string>> const& rows)
{
  std::string out = "<table>\n<tr>";
  for (auto const& c : columns) out += "<th>" + svg::escaped(c) + "</th>";
  out += "</tr>\n";
  for (auto const& row : rows) {
    out += "<tr>";
    for (auto const& cell : row) out += "<td>" + svg::escaped(cell) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

}  // namespace fraglab
