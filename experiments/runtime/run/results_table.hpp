// A run's rows as text, each cell as the command line writes it (results_format.hpp): what
// the command line formats and the Python module types column by column.
#pragma once

#include <string>
#include <vector>

namespace fraglab {

struct results_table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // one cell a column each
};

}  // namespace fraglab
