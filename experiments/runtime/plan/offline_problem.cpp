#include <fraglab/runtime/plan/offline_problem.hpp>

#include <fraglab/policies/offline/lower_bounds.hpp>
#include <fraglab/runtime/io/csv.hpp>
#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/io/input_file.hpp>
#include <fraglab/runtime/trace/event_batches.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>
#include <type_traits>
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

lifetimes lifetimes_named(std::string const& option, std::string const& name)
{
  if (name == "half-open") return lifetimes::half_open;
  if (name == "inclusive") return lifetimes::inclusive;
  throw std::invalid_argument(option + ": expected half-open or inclusive, got " + fraglab::quoted(name));
}

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

offline_input read_minimalloc_csv(std::string const& path, lifetimes read_as)
{
  std::ifstream file = open_input(path, "a MiniMalloc CSV (id,lower,upper,size)");
  offline_input in;
  in.name = trace::file_base_name(path);
  std::vector<std::string> cells;
  std::size_t lines = 0, records = 0;
  std::unordered_set<std::string> seen;
  layout columns;
  // Each buffer's times as written, [first, last] live, until the earliest is known.
  struct written_times {
    std::int64_t lower, last;
    std::size_t line;
  };
  std::vector<written_times> times;
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
    auto const number = [&]<class Number>(column c, std::string_view name, Number) {
      std::string const& text = cells[*columns[c]];
      Number n = 0;
      auto const [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
      if (ec != std::errc{} || end != text.data() + text.size() || text.empty())
        throw input_error(path, line, "expected " + std::string(name) +
                                          (std::is_signed_v<Number> ? " as a 64-bit integer" : " as a whole number of at most 20 digits") +
                                          ", got " + fraglab::quoted(text));
      return n;
    };
    std::int64_t const lower = number(column::lower, "lower", std::int64_t{});
    bool const last_named = columns[column::end] || read_as == lifetimes::inclusive;
    std::string_view const upper_name = columns[column::end] ? "end" : "upper";
    std::int64_t last = number(columns[column::end] ? column::end : column::upper, upper_name, std::int64_t{});
    if (!last_named) {  // the first step no longer live: the last step live is one before
      if (last == std::numeric_limits<std::int64_t>::min())
        throw input_error(path, line, "expected upper above -2^63, got " + std::to_string(last));
      --last;
    }
    // A buffer of no lifetime ends the step before it starts.
    bool const empty = lower != std::numeric_limits<std::int64_t>::min() && last == lower - 1;
    if (last < lower && !empty)
      throw input_error(path, line, last_named ? "expected " + std::string(upper_name) + " >= lower - 1 (the buffer lives over [lower, " +
                                                     std::string(upper_name) + "]), got " + std::to_string(lower) + " and " + std::to_string(last)
                                               : "expected upper >= lower (the buffer lives over [lower, upper)), got " +
                                                     std::to_string(lower) + " and " + std::to_string(last + 1));
    offline::buffer b;
    b.size = number(column::size, "size", std::uint64_t{});
    if (columns[column::alignment]) {
      b.alignment = number(column::alignment, "alignment", std::uint64_t{});
      if (b.alignment == 0 || (b.alignment & (b.alignment - 1)) != 0)
        throw input_error(path, line, "expected alignment as a power of two, got " + cells[*columns[column::alignment]]);
    }
    std::string const& id = cells[*columns[column::id]];
    if (!seen.insert(id).second) throw input_error(path, line, "the id " + fraglab::quoted(id) + " is given twice");
    in.problem.buffers.push_back(b);
    in.ids.push_back(id);
    times.push_back({lower, last, line});
  }
  if (records == 0) throw input_error(path, 1, std::string("expected ") + expected_header + ", got an empty file");
  // The problem counts from the earliest step: [lower, last + 1) less the origin, in 64 bits
  // unsigned (two's complement differences of 64-bit integers always fit).
  in.time_origin = 0;
  for (auto const& t : times) in.time_origin = std::min(in.time_origin, t.lower);
  for (std::size_t i = 0; i < times.size(); ++i) {
    std::uint64_t const lower = static_cast<std::uint64_t>(times[i].lower) - static_cast<std::uint64_t>(in.time_origin);
    std::uint64_t const steps = static_cast<std::uint64_t>(times[i].last) - static_cast<std::uint64_t>(times[i].lower) + 1;  // 0: none
    if ((steps == 0 && times[i].last >= times[i].lower) || steps > std::numeric_limits<std::uint64_t>::max() - lower)
      throw input_error(path, times[i].line, "expected the times to span fewer than 2^64 steps, got a buffer live at " +
                                                 std::to_string(times[i].last) + " and one that starts at " + std::to_string(in.time_origin));
    in.problem.buffers[i].lower = lower;
    in.problem.buffers[i].upper = lower + steps;
  }
  in.upper_column = columns[column::end] ? "end" : "upper";
  in.inclusive = columns[column::upper] && read_as == lifetimes::inclusive;
  check_load(in.problem, path);
  return in;
}

std::string minimalloc_csv(offline_input const& in, std::vector<std::uint64_t> const& offsets)
{
  // An alignment column where a buffer has one, as MiniMalloc writes it.
  bool const aligned = std::any_of(in.problem.buffers.begin(), in.problem.buffers.end(), [](offline::buffer const& b) { return b.alignment != 1; });
  bool const last_step = in.upper_column == "end" || in.inclusive;
  std::string out = "id,lower," + in.upper_column + (aligned ? ",size,alignment,offset\n" : ",size,offset\n");
  // Times as the input wrote them: back from the origin, and the last step live where its
  // upper column counts that one (two's complement wraps back to the value read).
  auto const written = [&](std::uint64_t step) { return std::to_string(static_cast<std::int64_t>(step + static_cast<std::uint64_t>(in.time_origin))); };
  for (std::size_t i = 0; i < in.problem.buffers.size(); ++i) {
    offline::buffer const& b = in.problem.buffers[i];
    out += (in.ids.empty() ? std::to_string(b.lower) : csv_cell(in.ids[i])) + ',' + written(b.lower) + ',' +
           written(last_step ? b.upper - 1 : b.upper) + ',' + std::to_string(b.size) + ',' +
           (aligned ? std::to_string(b.alignment) + ',' : std::string()) + std::to_string(offsets[i]) + '\n';
  }
  return out;
}

}  // namespace fraglab::plan
