#include <fraglab/runtime/output/table_view.hpp>

#include <fraglab/runtime/params/closest_name.hpp>

#include <algorithm>
#include <iterator>
#include <array>
#include <charconv>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <utility>

namespace fraglab {
namespace {

struct column_description {
  std::string_view name;
  std::string_view heading;  // in a table for a reader
  std::string_view meaning;
};

// The meanings, in short, of docs/metrics.md.
constexpr auto descriptions = std::to_array<column_description>({
    {"trace", "trace", "the trace file (FILE@cuda:N: one device of a snapshot of several)"},
    {"policy", "policy", "the policy spec, or its @LABEL"},
    {"events", "events", "events replayed"},
    {"allocs", "allocs", "allocations served"},
    {"frees", "frees", "blocks freed"},
    {"failed_allocs", "failed", "allocations the allocator could not serve"},
    {"peak_live_bytes", "peak live", "peak of the requested bytes of live blocks (LOAD: no allocator can hold less)"},
    {"peak_allocated_bytes", "peak alloc", "peak of the bytes of chunks handed out (rounding and unsplit tails included)"},
    {"peak_reserved_bytes", "peak reserved", "peak of the bytes held from the backend: the footprint"},
    {"frag1", "frag1", "time-average of reserved / live - 1 (Johnstone & Wilson's #1)"},
    {"frag2", "frag2", "reserved / live - 1 when live peaks (J&W #2)"},
    {"frag3", "frag3", "reserved / live - 1 when reserved peaks (J&W #3)"},
    {"frag4", "frag4", "peak reserved / peak live - 1 (J&W #4): the footprint's excess over the least possible"},
    {"ext_frag_at_peak", "ext frag", "(free - largest free chunk) / free when reserved peaks (TF's external fragmentation)"},
    {"ext_frag_avg", "ext frag avg", "the same, averaged over the sampled events"},
    {"utilization", "utilization", "peak allocated / peak reserved (GMLake's memory utilization)"},
    {"free_chunks_at_peak", "free chunks", "free chunks when reserved peaks"},
    {"unknown_frees", "unknown frees", "frees of ids not live"},
    {"duplicate_allocs", "dup allocs", "allocations under a live id (skipped)"},
    {"acquisitions", "acquisitions", "regions acquired from the backend"},
    {"releases", "releases", "regions given back to the backend"},
    {"cache_releases", "cache releases", "the trace's cache releases (empty_cache) applied"},
    {"splits", "splits", "free chunks cut in two"},
    {"merges", "merges", "free chunks joined to a free neighbour"},
    {"index_steps_per_op", "steps/op", "candidates the free index examined per event (deterministic cost)"},
    {"ns_per_op", "ns/op", "wall time per event, median of --repeat timed runs (0: not timed)"},
    {"backend", "backend", "the backend the policy ran on (its granularity: --all, CSV, JSON)"},
    {"granularity", "granularity", "the bytes every acquisition rounds up to"},
    {"parameters", "parameters", "every parameter the policy and its backend read, as it ran"},
    {"min_capacity_bytes", "min capacity", "the smallest capacity with no failed allocation"},
    {"peak_reserved_unlimited", "reserved unlimited", "peak reserved bytes without a capacity limit"},
    {"replays", "replays", "replays the bisection took"},
    {"offline_best_bytes", "offline best", "the lowest placement of the trace's buffers the offline planner found (fraglab plan)"},
    {"offline_lower_bytes", "offline bound", "no placement of the trace's buffers is lower (LOAD, or proven by the planner's search)"},
    {"offline_optimal", "offline optimal", "the offline best is proven optimal"},
    {"gap_to_offline", "gap to offline", "peak reserved / offline best - 1: the distance to the best placement found with every lifetime known"},
    {"load_bytes", "LOAD", "the most bytes live at one time: no placement is lower"},
    {"height_bytes", "height", "the placement's height: the highest end of a buffer"},
    {"lower_bound_bytes", "lower bound", "proven: no placement is lower"},
    {"optimal", "optimal", "the height is proven optimal (it meets the lower bound)"},
    {"gap_to_lower", "gap to bound", "height / lower bound - 1: at most this far from the optimum"},
    {"buffers", "buffers", "the buffers that occupy space (a size and a lifetime)"},
    {"capacity_bytes", "capacity", "the limit given (--capacity): a placement's height, or a device's memory"},
    {"found_by", "found by", "what found the placement: a greedy heuristic, the search's first dive, or the search"},
    {"heuristic", "best heuristic", "the lowest of the greedy heuristics"},
    {"heuristic_bytes", "its height", "that heuristic's height"},
    {"search_nodes", "nodes", "states the exact search visited"},
    {"seconds", "seconds", "time the planner took"},
    {"seconds_to_best", "to best", "when the reported placement was found"},
    {"seconds_to_fit", "to fit", "when the first placement within the capacity was found"},
    {"setting", "setting", "PYTORCH_CUDA_ALLOC_CONF replayed (recorded: the settings the snapshot was recorded with)"},
    {"reserved_vs_recorded", "vs recorded", "peak reserved / peak reserved under the recorded settings - 1"},
    {"recommended", "best", "the setting tune recommends: the lowest peak reserved (with --capacity, among those that fit)"},
});

column_description const* description_of(std::string_view column)
{
  for (auto const& d : descriptions)
    if (d.name == column) return &d;
  return nullptr;
}

std::optional<double> number(std::string const& s)
{
  double v = 0;
  auto const [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::size_t column_index(rows_table const& t, std::string const& name, char const* option)
{
  auto const it = std::find(t.columns.begin(), t.columns.end(), name);
  if (it != t.columns.end()) return static_cast<std::size_t>(it - t.columns.begin());
  std::vector<std::string_view> known(t.columns.begin(), t.columns.end());
  std::string const guess = closest_name(name, known);
  std::string list;
  for (auto const& c : t.columns) list += (list.empty() ? "" : ", ") + c;
  throw std::invalid_argument(std::string(option) + ": no column '" + name + "'" +
                              (guess.empty() ? "" : ": did you mean " + guess + "?") + " (columns: " + list + ")");
}

bool is_size_column(std::string_view c)
{
  return c.ends_with("_bytes") || c == "granularity" || c == "peak_reserved_unlimited";
}

bool is_fraction_column(std::string_view c)
{
  return c.starts_with("frag") || c.starts_with("ext_frag") || c.starts_with("gap_to_") || c == "reserved_vs_recorded";
}

// tune's PYTORCH_CUDA_ALLOC_CONF in fewer columns: each key's shorter name.
std::string short_setting(std::string_view conf)
{
  static constexpr std::pair<std::string_view, std::string_view> shorter[] = {
      {"expandable_segments:True", "expandable"},
      {"max_split_size_mb:", "max_split_mb:"},
      {"roundup_power2_divisions:", "divisions:"},
      {"garbage_collection_threshold:", "gc_threshold:"}};
  std::string out;
  while (!conf.empty()) {
    auto const match = std::find_if(std::begin(shorter), std::end(shorter), [&](auto const& p) { return conf.starts_with(p.first); });
    if (match != std::end(shorter)) {
      out += match->second;
      conf.remove_prefix(match->first.size());
    } else {
      out += conf.front();
      conf.remove_prefix(1);
    }
  }
  return out;
}

std::string readable_cell(std::string_view column, std::string const& cell)
{
  if (column == "setting") return short_setting(cell);
  std::optional<double> const v = number(cell);
  if (!v) return cell;
  if (is_size_column(column) && cell.find_first_not_of("0123456789") == std::string::npos) {
    std::size_t bytes = 0;
    std::from_chars(cell.data(), cell.data() + cell.size(), bytes);
    return human_size(bytes);
  }
  if (is_fraction_column(column)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", *v * 100.0);
    return buf;
  }
  return cell;
}

}  // namespace

std::string human_size(std::size_t bytes)
{
  // Three decimals below ten units, else two: 1.500 GiB, 142.76 MiB.
  static constexpr std::array<char const*, 5> units{"B", "KiB", "MiB", "GiB", "TiB"};
  double scaled = static_cast<double>(bytes);
  std::size_t unit = 0;
  for (; scaled >= 1024.0 && unit + 1 < units.size(); ++unit) scaled /= 1024.0;
  char buf[32];
  if (bytes % (std::size_t{1} << (10 * unit)) == 0) std::snprintf(buf, sizeof buf, "%zu %s", bytes >> (10 * unit), units[unit]);
  else std::snprintf(buf, sizeof buf, scaled < 10 ? "%.3f %s" : "%.2f %s", scaled, units[unit]);
  return buf;
}

void sort_rows(rows_table& t, std::string const& sort)
{
  if (sort.empty()) return;
  bool const descending = sort.ends_with(":desc");
  std::string const name = descending ? sort.substr(0, sort.size() - 5) : sort;
  std::size_t const at = column_index(t, name, "--sort");
  std::stable_sort(t.rows.begin(), t.rows.end(), [&](auto const& a, auto const& b) {
    std::optional<double> const x = number(a[at]), y = number(b[at]);
    bool const less = x && y ? *x < *y : a[at] < b[at];
    bool const greater = x && y ? *y < *x : b[at] < a[at];
    return descending ? greater : less;
  });
}

std::vector<std::string> default_columns(rows_table const& t)
{
  auto const events = std::find(t.columns.begin(), t.columns.end(), "events");
  auto const policy = std::find(t.columns.begin(), t.columns.end(), "policy");
  // Of tune's rows, what tells the settings apart; the trace where there are several.
  if (std::find(t.columns.begin(), t.columns.end(), "setting") != t.columns.end()) {
    std::vector<std::string> shown;
    std::size_t const trace = column_index(t, "trace", "tune");
    if (std::any_of(t.rows.begin(), t.rows.end(), [&](auto const& r) { return r[trace] != t.rows.front()[trace]; }))
      shown.emplace_back("trace");
    for (char const* c : {"setting", "peak_reserved_bytes", "reserved_vs_recorded", "min_capacity_bytes", "failed_allocs", "recommended"})
      shown.emplace_back(c);
    return shown;
  }
  if (events == t.columns.end() || policy == t.columns.end() || policy > events) return t.columns;
  std::vector<std::string> shown{"trace", "policy"};
  shown.insert(shown.end(), policy + 1, events);
  for (char const* c : {"backend", "peak_live_bytes", "peak_reserved_bytes", "frag4", "ext_frag_at_peak", "failed_allocs",
                        "offline_best_bytes", "gap_to_offline"})
    if (std::find(t.columns.begin(), t.columns.end(), c) != t.columns.end()) shown.emplace_back(c);
  if (auto const ns = std::find(t.columns.begin(), t.columns.end(), "ns_per_op"); ns != t.columns.end()) {
    auto const at = static_cast<std::size_t>(ns - t.columns.begin());
    bool const timed = std::any_of(t.rows.begin(), t.rows.end(), [&](auto const& r) { return number(r[at]).value_or(0) != 0; });
    if (timed) shown.emplace_back("ns_per_op");
  }
  return shown;
}

rows_table viewed(rows_table t, view_choice const& v, bool readable)
{
  sort_rows(t, v.sort);
  if (v.all) return t;
  bool const chosen = !v.columns.empty();
  std::vector<std::string> const names = chosen ? v.columns : readable ? default_columns(t) : t.columns;
  std::vector<std::size_t> picked;
  for (auto const& n : names) picked.push_back(column_index(t, n, "--columns"));
  rows_table out;
  for (auto const& n : names) {
    column_description const* d = description_of(n);
    out.columns.push_back(readable && d != nullptr ? std::string(d->heading) : n);
  }
  for (auto const& row : t.rows) {
    out.rows.emplace_back();
    for (std::size_t i = 0; i < picked.size(); ++i) {
      std::string const& column = t.columns[picked[i]];
      out.rows.back().push_back(readable ? readable_cell(column, row[picked[i]]) : row[picked[i]]);
    }
  }
  return out;
}

std::string meaning_of(std::string_view column)
{
  column_description const* d = description_of(column);
  return d != nullptr ? std::string(d->meaning) : std::string();
}

std::string legend(std::vector<std::string> const& columns)
{
  std::size_t width = 0;
  for (auto const& c : columns) width = std::max(width, c.size());
  std::string out;
  for (auto const& c : columns) {
    column_description const* d = description_of(c);
    out += "  " + c + std::string(width - c.size() + 2, ' ') + (d != nullptr ? std::string(d->meaning) : "") + '\n';
  }
  return out;
}

}  // namespace fraglab
