// What is shown of a table of results: its rows sorted (--sort), its columns chosen
// (--columns, --all), and for a reader rather than a program (the table and Markdown
// formats) sizes in binary units and fractions as percentages under short headings.
// CSV and JSON keep every column and the raw numbers unless --columns asks otherwise.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fraglab {

struct rows_table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

struct view_choice {
  std::vector<std::string> columns;  // --columns: these, in this order; empty: the default
  bool all = false;                  // --all: every column, raw
  std::string sort;                  // --sort COLUMN[:desc]; empty: the rows as they came
};

// Throws std::invalid_argument naming a column that is not in `t` (with the closest one).
void sort_rows(rows_table& t, std::string const& sort);

// The columns a reader sees first: of results, trace, policy, a sweep's varied keys (the
// columns between policy and events), backend, peak live and reserved bytes, frag4, external
// fragmentation at the peak, failed allocations, the gap to the offline best (--offline) and,
// where timed, ns_per_op; of tune's, all but the preset specs its settings name; of any other
// table, every column.
std::vector<std::string> default_columns(rows_table const& t);

// `t` as the view asks, for a reader when `readable`.
rows_table viewed(rows_table t, view_choice const& v, bool readable);

// `bytes` in the binary unit that fits: 512 B, 1.500 GiB, 142.76 MiB.
std::string human_size(std::size_t bytes);

// What `column` measures (docs/metrics.md), in a line; empty for a column without one.
std::string meaning_of(std::string_view column);

// One line per column of `columns`: its meaning (docs/metrics.md).
std::string legend(std::vector<std::string> const& columns);

}  // namespace fraglab
