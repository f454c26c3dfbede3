#include <fraglab/runtime/io/csv.hpp>

#include <fraglab/runtime/io/input_error.hpp>

namespace fraglab {

std::string csv_cell(std::string_view s)
{
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char const c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

bool read_csv_record(std::istream& in, std::string const& path, std::size_t& line, std::vector<std::string>& cells)
{
  cells.clear();
  std::string text;
  if (!std::getline(in, text)) return false;
  std::size_t const first = ++line;
  std::string cell;
  bool in_quotes = false, after_quote = false;
  for (;;) {
    for (std::size_t i = 0; i < text.size(); ++i) {
      char const c = text[i];
      if (in_quotes) {
        if (c != '"') {
          cell += c;
        } else if (i + 1 < text.size() && text[i + 1] == '"') {
          cell += '"';
          ++i;
        } else {
          in_quotes = false;
          after_quote = true;
        }
      } else if (c == ',') {
        cells.push_back(std::move(cell));
        cell.clear();
        after_quote = false;
      } else if (c == '\r' && i + 1 == text.size()) {
        // CRLF line ends, as RFC 4180 writes them
      } else if (after_quote) {
        throw input_error(path, line, "expected a comma or the end of the line after a quoted field, got " + quoted(std::string_view(&text[i], 1)));
      } else if (c == '"' && cell.empty()) {
        in_quotes = true;
      } else {
        cell += c;
      }
    }
    if (!in_quotes) break;
    // A line break inside a quoted field belongs to the field.
    if (!std::getline(in, text))
      throw input_error(path, first, "a quoted field that starts here is never closed");
    ++line;
    cell += '\n';
  }
  cells.push_back(std::move(cell));
  return true;
}

}  // namespace fraglab
