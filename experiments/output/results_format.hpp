// Result rows as an aligned table (terminal), CSV, JSON or Markdown, and atomic file
// output: a reader of the file sees either the old file or the complete new one.
#pragma once

#include "experiments/replay/replay_result.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace fraglab {

enum class output_format { table, csv, json, md };

// Throws std::invalid_argument naming the accepted formats.
output_format parse_output_format(std::string_view s);

// Columns in the order and spelling of the `replay --format csv` contract.
std::vector<std::string> result_columns();
std::vector<std::string> result_cells(replay_result const& r);

std::string format_rows(std::vector<std::string> const& columns, std::vector<std::vector<std::string>> const& rows,
                        output_format f);

// Writes to PATH.tmp.PID, then renames over PATH. Throws std::runtime_error on failure,
// leaving no partial file behind.
void write_file_atomically(std::string const& path, std::string const& content);

}  // namespace fraglab
