// Markdown output (`--format md`, `report -o R.md`) of cells from outside on any bytes: every
// row keeps its columns (no unescaped '|' splits a cell), and nothing a renderer would run or
// fetch survives: no '<' and no '[' that is not escaped.
#include <fraglab/runtime/output/results_format.hpp>
#include "fuzz_input.hpp"

#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size)
{
  std::string const bytes(reinterpret_cast<char const*>(data), size);
  std::vector<std::string> cells;
  for (std::size_t at = 0; cells.size() < 3; ++at) {  // three cells, split at the first two NULs
    std::size_t const end = std::min(bytes.find('\0', at), bytes.size());
    cells.push_back(bytes.substr(std::min(at, bytes.size()), end - std::min(at, bytes.size())));
    at = end;
  }
  std::string const md = fraglab::format_rows({"trace", "policy", "note"}, {cells}, fraglab::output_format::md);
  std::string const text = fraglab::markdown_text(bytes);
  for (std::string const& out : {md, text})
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out[i] == '<') fraglab::fuzz::bug("a '<' reached Markdown output");
      if (out[i] == '[' || out[i] == '`') {
        std::size_t slashes = 0;
        for (std::size_t j = i; j > 0 && out[j - 1] == '\\'; --j) ++slashes;
        if (slashes % 2 == 0) fraglab::fuzz::bug("an unescaped '[' or '`' reached Markdown output");
      }
    }
  // Each table line has the header's four unescaped '|' (three cells).
  std::size_t line_start = 0;
  while (line_start < md.size()) {
    std::size_t const line_end = std::min(md.find('\n', line_start), md.size());
    std::size_t bars = 0;
    for (std::size_t i = line_start; i < line_end; ++i) {
      if (md[i] != '|') continue;
      std::size_t slashes = 0;
      for (std::size_t j = i; j > line_start && md[j - 1] == '\\'; --j) ++slashes;
      if (slashes % 2 == 0) ++bars;
    }
    if (line_end > line_start && bars != 4) fraglab::fuzz::bug("a Markdown row has a cell too many or too few");
    line_start = line_end + 1;
  }
  return 0;
}
