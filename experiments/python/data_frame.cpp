// Tables as DataFrames: the cells are the command line's text (results_format.hpp), so a
// column read here holds exactly what `--format csv` writes, typed once for the whole column.
#include <fraglab/python/bindings.hpp>

#include <pybind11/numpy.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace fraglab::python {
namespace {

// Names and labels, which may look like numbers (a trace called 1, a policy labelled 64).
constexpr std::string_view text_columns[] = {"trace", "policy", "backend", "parameters", "preset", "verdict",
                                             "first_mismatch", "found_by", "heuristic", "format", "name", "id"};

template <class T>
bool parses_as(std::string_view text, T& value)
{
  auto const [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc{} && end == text.data() + text.size();
}

enum class column_kind { integer, number, yes_no, text };

column_kind kind_of(std::string_view name, std::vector<std::vector<std::string>> const& rows, std::size_t c)
{
  if (rows.empty() || std::find(std::begin(text_columns), std::end(text_columns), name) != std::end(text_columns))
    return column_kind::text;
  bool integers = true, numbers = true, yes_no = true, any = false;
  for (auto const& row : rows) {
    std::string_view const cell = row[c];
    if (cell.empty()) {
      integers = yes_no = false;
      continue;
    }
    any = true;
    std::int64_t i = 0;
    double d = 0;
    integers = integers && parses_as(cell, i);
    numbers = numbers && parses_as(cell, d);
    yes_no = yes_no && (cell == "yes" || cell == "no");
  }
  if (!any) return column_kind::text;
  return integers ? column_kind::integer : numbers ? column_kind::number : yes_no ? column_kind::yes_no : column_kind::text;
}

template <class T, class Convert>
py::array_t<T> column_array(std::vector<std::vector<std::string>> const& rows, std::size_t c, Convert convert)
{
  py::array_t<T> out(static_cast<py::ssize_t>(rows.size()));
  T* data = out.mutable_data();
  for (std::size_t r = 0; r < rows.size(); ++r) data[r] = convert(std::string_view(rows[r][c]));
  return out;
}

}  // namespace

py::object data_frame(results_table const& table)
{
  py::dict columns;
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    py::str const name(table.columns[c]);
    switch (kind_of(table.columns[c], table.rows, c)) {
      case column_kind::integer:
        columns[name] = column_array<std::int64_t>(table.rows, c, [](std::string_view s) {
          std::int64_t v = 0;
          parses_as(s, v);
          return v;
        });
        break;
      case column_kind::number:
        columns[name] = column_array<double>(table.rows, c, [](std::string_view s) {
          double v = std::nan("");
          if (!s.empty()) parses_as(s, v);
          return v;
        });
        break;
      case column_kind::yes_no:
        columns[name] = column_array<bool>(table.rows, c, [](std::string_view s) { return s == "yes"; });
        break;
      case column_kind::text: {
        py::list cells(table.rows.size());
        for (std::size_t r = 0; r < table.rows.size(); ++r) cells[r] = py::str(table.rows[r][c]);
        columns[name] = cells;
        break;
      }
    }
  }
  return py::module_::import("pandas").attr("DataFrame")(columns);
}

}  // namespace fraglab::python
