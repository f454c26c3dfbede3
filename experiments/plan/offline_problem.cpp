#include "experiments/plan/offline_problem.hpp"

#include "experiments/output/csv.hpp"
#include "experiments/trace/event_batches.hpp"
#include "experiments/trace/input_error.hpp"
#include "experiments/trace/input_file.hpp"
#include "policies/offline/lower_bounds.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <variant>

namespace fraglab::plan {

namespace {

// A problem no memory can hold is bad input, not a height that wraps: `where` names it.
void check_load(offline::problem const& p, std::string const& where)
{
  if (auto const t = offline::load_too_large_at(p))
    throw input_error(where + ": the buffers live at time step " + std::to_string(*t) + " need 2^62 bytes or more: no placement can address them");
}

}  // namespace

offline_input offline_problem(trace::trace const& t)
{
  offline_input in;
  in.name = t.name;
  constexpr std::uint32_t none = ~std::uint32_t{0};
  std::vector<std::uint32_t> live(t.slots, none);  // slot -> its live buffer
  std::uint64_t time = 0;
  trace::for_each_event(t, [&](trace::event const& e) {
    if (e.kind == trace::op::alloc) {
      if (e.slot >= live.size()) live.resize(e.slot + 1, none);
      // An id allocated again while live (which replay skips) starts nothing here either.
      if (live[e.slot] == none) {
        live[e.slot] = static_cast<std::uint32_t>(in.problem.buffers.size());
        in.problem.buffers.push_back({time, 0, e.size, e.alignment});
      }
    } else if (e.kind == trace::op::free && e.slot < live.size() && live[e.slot] != none) {
      in.problem.buffers[live[e.slot]].upper = time;
      live[e.slot] = none;
    }
    ++time;
  });
  for (std::uint32_t const b : live)
    if (b != none) in.problem.buffers[b].upper = time;
  check_load(in.problem, t.name);
  return in;
}

namespace {

// MiniMalloc's column names (its converter), in any order: an id, when the buffer is live,
// its size, and optionally its alignment, its gaps and an offset. `end` is the last step a
// buffer is live (MiniMalloc's older files), `upper` the first it is not.
enum class column { id, lower, upper, end, size, alignment, gaps, offset };

std::optional<column> column_named(std::string_view name)
{
  if (name == "id" || name == "buffer" || name == "buffer_id") return column::id;
  if (name == "lower" || name == "start" || name == "begin") return column::lower;
  if (name == "upper") return column::upper;
  if (name == "end") return column::end;
  if (name == "size") return column::size;
  if (name == "alignment") return column::alignment;
  if (name == "gaps") return column::gaps;
  if (name == "offset") return column::offset;
  return std::nullopt;
}

constexpr char const* expected_header =
    "MiniMalloc's header: id, lower, upper and size in any order (or buffer, start, end), optionally alignment, gaps "
    "and offset";

// Where each column is, or why the header is not MiniMalloc's.
struct layout {
  std::array<std::optional<std::size_t>, 8> at{};
  std::size_t fields = 0;
  [[nodiscard]] std::optional<std::size_t> operator[](column c) const { return at[static_cast<std::size_t>(c)]; }
};

std::variant<layout, std::string> layout_of(std::vector<std::string> const& cells)
{
  layout l;
  l.fields = cells.size();
  for (std::size_t i = 0; i < cells.size(); ++i) {
    auto const c = column_named(trace::without_utf8_bom(cells[i]));
    if (!c) return "an unknown column " + fraglab::quoted(cells[i]);
    auto& at = l.at[static_cast<std::size_t>(*c)];
    if (at) return "the column " + fraglab::quoted(cells[i]) + " a second time";
    if ((*c == column::end && l[column::upper]) || (*c == column::upper && l[column::end])) return std::string("both upper and end");
    at = i;
  }
  if (!l[column::id] || !l[column::lower] || !(l[column::upper] || l[column::end]) || !l[column::size])
    return std::string("no id, lower, upper or size column");
  return l;
}

}  // namespace

bool is_minimalloc_csv(std::string const& path)
{
  // Only a regular file is looked into: the first line of a pipe, once read, is gone.
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return false;
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return false;
  // No trace format begins with one of MiniMalloc's column names and a comma (native text
  // begins with an event or '#', RMM's CSV with "Thread,"): a header that begins so and then
  // goes wrong is MiniMalloc's, mistyped.
  std::string_view const first = trace::without_utf8_bom(line);
  std::size_t const comma = first.find(',');
  return comma != std::string_view::npos && column_named(first.substr(0, comma)).has_value();
}

offline_input read_minimalloc_csv(std::string const& path)
{
  std::ifstream file = open_input(path, "a MiniMalloc CSV (id,lower,upper,size)");
  offline_input in;
  in.name = trace::file_base_name(path);
  std::vector<std::string> cells;
  std::size_t lines = 0, records = 0;
  std::unordered_set<std::string> seen;
  layout columns;
  for (std::size_t before = 0; read_csv_record(file, path, lines, cells); before = lines) {
    std::size_t const line = before + 1;
    if (++records == 1) {
      auto const l = layout_of(cells);
      if (auto const* why = std::get_if<std::string>(&l)) throw input_error(path, line, std::string("expected ") + expected_header + ", got " + *why);
      columns = std::get<layout>(l);
      continue;
    }
    if (cells.size() == 1 && cells[0].empty()) continue;  // a blank line
    if (cells.size() != columns.fields)
      throw input_error(path, line, "expected " + std::to_string(columns.fields) + " fields as the header has, got " + std::to_string(cells.size()));
    auto const number = [&](column c, std::string_view name) {
      std::string const& text = cells[*columns[c]];
      std::uint64_t n = 0;
      auto const [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
      if (ec != std::errc{} || end != text.data() + text.size() || text.empty())
        throw input_error(path, line, "expected " + std::string(name) + " as a whole number of at most 20 digits, got " + fraglab::quoted(text));
      return n;
    };
    offline::buffer b;
    b.lower = number(column::lower, "lower");
    if (columns[column::upper]) b.upper = number(column::upper, "upper");
    else if ((b.upper = number(column::end, "end")) == std::numeric_limits<std::uint64_t>::max())
      throw input_error(path, line, "expected end below 2^64 - 1, got " + cells[*columns[column::end]]);
    else ++b.upper;  // the last step live, inclusive
    b.size = number(column::size, "size");
    if (columns[column::alignment]) {
      b.alignment = number(column::alignment, "alignment");
      if (b.alignment == 0 || (b.alignment & (b.alignment - 1)) != 0)
        throw input_error(path, line, "expected alignment as a power of two, got " + cells[*columns[column::alignment]]);
    }
    if (b.upper < b.lower)
      throw input_error(path, line, "expected upper >= lower (the buffer lives over [lower, upper)), got " + std::to_string(b.lower) + " and " + std::to_string(b.upper));
    std::string const& id = cells[*columns[column::id]];
    if (!seen.insert(id).second) throw input_error(path, line, "the id " + fraglab::quoted(id) + " is given twice");
    in.problem.buffers.push_back(b);
    in.ids.push_back(id);
  }
  if (records == 0) throw input_error(path, 1, std::string("expected ") + expected_header + ", got an empty file");
  check_load(in.problem, path);
  return in;
}

std::string minimalloc_csv(offline_input const& in, std::vector<std::uint64_t> const& offsets)
{
  // An alignment column where a buffer has one, as MiniMalloc writes it.
  bool const aligned = std::any_of(in.problem.buffers.begin(), in.problem.buffers.end(), [](offline::buffer const& b) { return b.alignment != 1; });
  std::string out = aligned ? "id,lower,upper,size,alignment,offset\n" : "id,lower,upper,size,offset\n";
  for (std::size_t i = 0; i < in.problem.buffers.size(); ++i) {
    offline::buffer const& b = in.problem.buffers[i];
    out += (in.ids.empty() ? std::to_string(b.lower) : csv_cell(in.ids[i])) + ',' + std::to_string(b.lower) + ',' + std::to_string(b.upper) + ',' + std::to_string(b.size) + ',' +
           (aligned ? std::to_string(b.alignment) + ',' : std::string()) + std::to_string(offsets[i]) + '\n';
  }
  return out;
}

}  // namespace fraglab::plan
