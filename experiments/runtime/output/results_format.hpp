// Result rows as an aligned table (terminal), CSV, JSON or Markdown.
#pragma once

#include <fraglab/runtime/io/output_file.hpp>
#include <fraglab/runtime/replay/replay_result.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace fraglab {

enum class output_format { table, csv, json, md };

// Throws std::invalid_argument naming the accepted formats.
output_format parse_output_format(std::string_view s);

// `v` with `digits` after the point, as every fractional column is written.
std::string fixed(double v, int digits);

// Text from outside (a file name, a policy's @LABEL) as Markdown shows it and never runs it:
// <, > and & as HTML entities, so that no renderer makes a tag of them; \, `, [ and ]
// escaped, so that no code span, link or image (which a viewer would fetch) begins there.
std::string markdown_text(std::string_view s);

// Columns in the order and spelling of the `replay --format csv` contract.
std::vector<std::string> result_columns();
std::vector<std::string> result_cells(replay_result const& r);

// `--timeseries FILE`: one row per sampled event of every (trace, policy).
std::vector<std::string> timeseries_columns();
void append_timeseries_rows(replay_result const& r, std::vector<std::vector<std::string>>& rows);

std::string format_rows(std::vector<std::string> const& columns, std::vector<std::vector<std::string>> const& rows,
                        output_format f);

// The rows as an HTML table, every cell escaped: the tables of report's and explain's pages.
std::string html_table(std::vector<std::string> const& columns, std::vector<std::vector<std::string>> const& rows);

}  // namespace fraglab
