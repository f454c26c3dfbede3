#include "experiments/plan/offline_problem.hpp"

#include "experiments/output/csv.hpp"
#include "experiments/trace/event_batches.hpp"
#include "experiments/trace/input_error.hpp"
#include "experiments/trace/input_file.hpp"

#include <charconv>
#include <filesystem>
#include <string_view>
#include <unordered_set>

namespace fraglab::plan {

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
  return in;
}

namespace {

constexpr std::string_view header[] = {"id", "lower", "upper", "size"};

bool starts_with_header(std::vector<std::string> const& cells)
{
  if (cells.size() < 4 || cells.size() > 5) return false;
  for (std::size_t i = 0; i < 4; ++i)
    if (trace::without_utf8_bom(cells[i]) != header[i]) return false;
  return cells.size() == 4 || cells[4] == "offset";
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
  // No trace format begins so (native text begins with an event or '#', RMM's CSV with
  // "Thread,"): a header that starts so and then goes wrong is MiniMalloc's, mistyped.
  return trace::without_utf8_bom(line).starts_with("id,");
}

offline_input read_minimalloc_csv(std::string const& path)
{
  std::ifstream file = open_input(path, "a MiniMalloc CSV (id,lower,upper,size)");
  offline_input in;
  in.name = trace::file_base_name(path);
  std::vector<std::string> cells;
  std::size_t lines = 0, records = 0;
  std::unordered_set<std::string> seen;
  for (std::size_t before = 0; read_csv_record(file, path, lines, cells); before = lines) {
    std::size_t const line = before + 1;
    if (++records == 1) {
      if (!starts_with_header(cells)) throw input_error(path, line, "expected MiniMalloc's header id,lower,upper,size[,offset]");
      continue;
    }
    if (cells.size() == 1 && cells[0].empty()) continue;  // a blank line
    if (cells.size() < 4 || cells.size() > 5)
      throw input_error(path, line, "expected 4 or 5 fields (id,lower,upper,size[,offset]), got " + std::to_string(cells.size()));
    auto const number = [&](std::size_t field) {
      std::string const& text = cells[field];
      std::uint64_t n = 0;
      auto const [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
      if (ec != std::errc{} || end != text.data() + text.size() || text.empty())
        throw input_error(path, line, "expected " + std::string(header[field]) + " as a whole number of at most 20 digits, got " + fraglab::quoted(text));
      return n;
    };
    offline::buffer b{number(1), number(2), number(3), 1};
    if (b.upper < b.lower)
      throw input_error(path, line, "expected upper >= lower (the buffer lives over [lower, upper)), got " + cells[1] + " and " + cells[2]);
    if (!seen.insert(cells[0]).second) throw input_error(path, line, "the id " + fraglab::quoted(cells[0]) + " is given twice");
    in.problem.buffers.push_back(b);
    in.ids.push_back(cells[0]);
  }
  if (records == 0) throw input_error(path, 1, "expected MiniMalloc's header id,lower,upper,size, got an empty file");
  return in;
}

std::string minimalloc_csv(offline_input const& in, std::vector<std::uint64_t> const& offsets)
{
  std::string out = "id,lower,upper,size,offset\n";
  for (std::size_t i = 0; i < in.problem.buffers.size(); ++i) {
    offline::buffer const& b = in.problem.buffers[i];
    out += (in.ids.empty() ? std::to_string(b.lower) : csv_cell(in.ids[i])) + ',' + std::to_string(b.lower) + ',' + std::to_string(b.upper) + ',' + std::to_string(b.size) + ',' +
           std::to_string(offsets[i]) + '\n';
  }
  return out;
}

}  // namespace fraglab::plan
