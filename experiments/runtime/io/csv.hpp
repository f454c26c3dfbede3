// CSV as RFC 4180 defines it, both ways: a field holding a comma, a double quote or a line
// break is quoted, its quotes doubled, and a quoted field may span lines. A `compose:` policy
// (commas) or a trace named `a,b.trace` makes such fields in every sweep's output.
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace fraglab {

std::string csv_cell(std::string_view s);

// Reads one record into `cells`; false at the end of the input. `line` counts the physical
// lines read so far (a quoted field may span several): the record began at its value
// before the call plus one.
// Throws input_error(`path`:LINE: ...) for a quote that is never closed or a character
// after a closing quote.
bool read_csv_record(std::istream& in, std::string const& path, std::size_t& line, std::vector<std::string>& cells);

}  // namespace fraglab
