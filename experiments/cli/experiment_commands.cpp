// fraglab info, sweep, capacity and merge: the commands that run many cells of an experiment.
#include "experiments/cli/commands.hpp"
#include "experiments/cli/options.hpp"
#include "experiments/cli/shard_option.hpp"
#include "experiments/output/csv.hpp"
#include "experiments/output/progress_meter.hpp"
#include "experiments/output/results_format.hpp"
#include "experiments/params/list_items.hpp"
#include "experiments/plan/offline_gap.hpp"
#include "experiments/replay/run_cells.hpp"
#include "experiments/trace/event_batches.hpp"
#include "experiments/trace/input_error.hpp"
#include "experiments/trace/input_file.hpp"
#include "experiments/trace/read_trace.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string_view>

namespace fraglab::cli {
namespace {

std::string quantile(std::vector<std::size_t>& v, double q)
{
  if (v.empty()) return "0";
  std::size_t const k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return std::to_string(v[k]);
}

}  // namespace

int info(std::vector<std::string> const& args)
{
  po::options_description desc(
      "fraglab info TRACE... [--format csv|json|md|table] [-o FILE]\n\n"
      "  fraglab info run.trace                 one `key: value` line per statistic\n"
      "  fraglab info snap.pickle --format json  one object per trace (per device of a snapshot)\n\n"
      "Options");
  desc.add_options()("trace", po::value<std::vector<std::string>>()->multitoken(), "trace files");
  add_trace_selection_options(desc);
  desc.add_options()  //
      ("format", po::value<std::string>(), "csv, json, md or table: one row per trace (default: `key: value` lines)")  //
      ("output,o", po::value<std::string>(), "write to FILE instead of standard output; a file is replaced only when the run succeeds");
  auto const parsed = parse_command(args, desc, "trace");
  if (!parsed) return 0;
  auto const& vm = *parsed;
  check_output_options(vm, {"output"});
  bool const as_rows = vm.count("format") || (vm.count("output") && chosen_output_format(vm) != output_format::table);
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::ostringstream lines;
  for (trace::trace const& t : read_traces(vm)) {
    std::vector<std::size_t> sizes, lifetimes;
    std::vector<std::uint64_t> born(t.slots, 0);
    std::vector<std::size_t> size_of(t.slots, 0);
    std::vector<bool> live(t.slots, false);
    std::size_t live_bytes = 0, peak_live = 0, live_count = 0, peak_count = 0, aligned = 0;
    std::map<std::uint64_t, std::size_t> streams;
    std::uint64_t index = 0;
    trace::for_each_event(t, [&](trace::event const& e) {
      ++index;
      if (e.kind == trace::op::release) return;
      if (e.kind == trace::op::alloc) {
        if (live[e.slot]) return;
        live[e.slot] = true;
        born[e.slot] = index;
        size_of[e.slot] = e.size;
        sizes.push_back(e.size);
        live_bytes += e.size;
        peak_live = std::max(peak_live, live_bytes);
        peak_count = std::max(peak_count, ++live_count);
        aligned += e.alignment > 16 ? 1 : 0;
        ++streams[e.stream];
      } else if (live[e.slot]) {
        live[e.slot] = false;
        live_bytes -= size_of[e.slot];
        --live_count;
        lifetimes.push_back(index - born[e.slot]);
      }
    });
    std::size_t const total = std::accumulate(sizes.begin(), sizes.end(), std::size_t{0});
    auto const n = [](auto v) { return std::to_string(v); };
    std::vector<std::pair<char const*, std::string>> const stats{
        {"trace", t.name},
        {"format", t.source_format.empty() ? std::string("native text") : t.source_format},
        {"events", n(t.event_count())},
        {"allocs", n(t.allocs)},
        {"frees", n(t.frees)},
        {"releases", n(t.releases)},
        {"recorded_failures", n(t.recorded_failures)},
        {"peak_live_bytes", n(peak_live)},
        {"peak_live_blocks", n(peak_count)},
        {"live_at_end_bytes", n(live_bytes)},
        {"never_freed", n(live_count)},
        {"streams", n(streams.size())},
        {"aligned_above_16", n(aligned)},
        {"size_mean", n(sizes.empty() ? 0 : total / sizes.size())},
        {"size_min", quantile(sizes, 0.0)},
        {"size_median", quantile(sizes, 0.5)},
        {"size_p99", quantile(sizes, 0.99)},
        {"size_max", quantile(sizes, 1.0)},
        {"lifetime_median_events", quantile(lifetimes, 0.5)},
        {"lifetime_p99_events", quantile(lifetimes, 0.99)},
        {"lifetime_max_events", quantile(lifetimes, 1.0)},
    };
    columns.clear();
    rows.emplace_back();
    for (auto const& [key, value] : stats) {
      lines << key << ": " << value << '\n';
      columns.emplace_back(key);
      rows.back().push_back(value);
    }
  }
  if (as_rows) {
    write_all_columns(vm, columns, rows);
  } else if (vm.count("output")) {
    write_output_file(vm["output"].as<std::string>(), lines.str());
  } else {
    std::cout << lines.str();
  }
  return 0;
}

int sweep(std::vector<std::string> const& args)
{
  po::options_description desc(
      "fraglab sweep TRACE... -p P[,P...] --vary KEY=V1,V2,... [--vary ...] [options]\n\n"
      "  fraglab sweep run.trace -p tf_bfc,best_fit --backend simulated --vary split_ratio=1,2,4\n"
      "  fraglab sweep snap.pickle -p tf_bfc,pytorch_caching --vary split_ratio=1,2 --vary max_split_size_mb=64,256\n"
      "  fraglab sweep run.trace -p tlsf --vary sli=3,4,5 --shard 1/4 -o part1.csv   (then `fraglab merge`)\n\n"
      "Each policy runs over the axes it reads; an axis it does not read shows an empty cell.\n\n"
      "Options");
  add_trace_and_policy_options(desc);
  desc.add_options()                                                                                 //
      ("vary", po::value<std::vector<std::string>>(), "KEY=V1,V2,...: one axis of the grid, repeatable");
  add_shard_option(desc, "cells of the grid");
  add_list_cells_option(desc);
  add_jobs_option(desc, "cells run in parallel (results identical to --jobs 1)");
  add_timing_options(desc, "0");
  add_allocator_options(desc);
  add_offline_options(desc);
  add_output_options(desc);
  auto const parsed = parse_command(args, desc, "trace");
  if (!parsed) return 0;
  auto const& vm = *parsed;
  check_output_options(vm, {"output"});
  unsigned const jobs = jobs_option(vm);
  shard const part = shard_option(vm);
  replay_options options;
  read_timing_options(vm, options);
  allocator_options const chosen = read_allocator_options(vm);
  auto const& user = chosen.user;  // not a structured binding: clang 14 cannot capture those
  auto const& backend = chosen.backend;
  std::vector<std::pair<std::string, std::vector<std::string>>> axes;
  if (vm.count("vary"))
    for (auto const& v : vm["vary"].as<std::vector<std::string>>()) {
      std::size_t const eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
        throw std::invalid_argument("--vary: expected KEY=V1,V2,..., got '" + v + "'");
      // A second axis of one key would set it over the first, and its column would report
      // values that never ran.
      for (auto const& [key, values] : axes)
        if (key == v.substr(0, eq)) throw std::invalid_argument("--vary: " + key + " is given twice; give its values in one list");
      std::vector<std::string> values;
      for (std::string_view const value : list_items(std::string_view(v).substr(eq + 1))) {
        if (value.empty()) throw std::invalid_argument("--vary: an empty value in '" + v + "'");
        values.emplace_back(value);
      }
      for (std::size_t i = 0; i < values.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
          if (same_param_value(values[i], values[j]))
            throw std::invalid_argument("--vary: " + v.substr(0, eq) + "=" + values[i] +
                                        (values[i] == values[j] ? " is given twice" : " is the same setting as " + values[j]));
      axes.emplace_back(v.substr(0, eq), std::move(values));
    }
  if (axes.empty()) throw std::invalid_argument("no --vary given (a sweep needs at least one axis)");
  // The axis would replace the --set value in every cell, so that value would never run.
  for (auto const& [key, values] : axes)
    if (user.has(key)) throw std::invalid_argument("--set " + key + " and --vary " + key + ": give its values in --vary alone");
  std::vector<std::string> const specs = policy_specs(vm);
  {
    std::vector<std::string> varied;
    for (auto const& [key, values] : axes) varied.push_back(key);
    check_keys_read(specs, varied, "--vary");
  }
  (void)make_compositions(specs, chosen);  // every --set key read by some policy, on one backend
  std::vector<trace::trace> const traces = read_traces(vm);
  bool const recorded = recorded_settings_applied(vm);
  note_recorded_settings(traces, specs, recorded);

  // Each policy's grid is the product of the axes it reads, the first --vary outermost; an
  // axis it does not read has one empty cell, so no cell repeats another.
  struct grid_cell {
    std::size_t trace, spec;
    std::vector<std::string> point;  // one value an axis, empty where the policy does not read it
  };
  std::vector<std::vector<std::vector<std::string>>> points_of(specs.size());
  for (std::size_t s = 0; s < specs.size(); ++s) {
    auto const read = parameters_read(specs[s]);
    auto& points = points_of[s];
    points = {{}};
    for (auto const& [key, values] : axes) {
      bool const reads = std::find(read.begin(), read.end(), key) != read.end();
      std::vector<std::vector<std::string>> next;
      for (auto const& p : points)
        for (auto const& v : reads ? values : std::vector<std::string>{""}) {
          next.push_back(p);
          next.back().push_back(v);
        }
      points = std::move(next);
    }
  }
  auto params_at = [&](std::size_t s, std::size_t t, std::vector<std::string> const& point) {
    param_set p = cell_parameters(specs[s], user, traces[t], recorded);
    for (std::size_t a = 0; a < axes.size(); ++a)
      if (!point[a].empty()) p.set(axes[a].first, point[a]);
    return p;
  };
  std::vector<grid_cell> cells;
  for (std::size_t t = 0; t < traces.size(); ++t)
    for (std::size_t s = 0; s < specs.size(); ++s)
      for (auto const& point : points_of[s]) cells.push_back({t, s, point});
  // Reject a bad value or key before running anything.
  for (grid_cell const& cell : cells) (void)make_composition(specs[cell.spec], params_at(cell.spec, cell.trace, cell.point), backend);

  std::size_t const total = cells.size();
  std::vector<std::size_t> const mine = part.cells(total);
  std::optional<double> const offline = offline_option(vm);
  std::vector<std::string> columns = result_columns();
  for (std::size_t a = 0; a < axes.size(); ++a)
    columns.insert(columns.begin() + 2 + static_cast<std::ptrdiff_t>(a), axes[a].first);
  columns.insert(columns.begin(), "cell");
  if (offline)
    for (auto const& c : plan::offline_columns()) columns.push_back(c);
  if (vm.count("list-cells")) {
    std::vector<std::string> listed(columns.begin(), columns.begin() + 3 + static_cast<std::ptrdiff_t>(axes.size()));
    listed.emplace_back("events");
    std::vector<std::vector<std::string>> rows;
    for (std::size_t c : mine) {
      grid_cell const& cell = cells[c];
      rows.push_back({std::to_string(c), traces[cell.trace].name, specs[cell.spec]});
      rows.back().insert(rows.back().end(), cell.point.begin(), cell.point.end());
      rows.back().push_back(std::to_string(traces[cell.trace].event_count()));
    }
    write_all_columns(vm, listed, rows);
    return 0;
  }
  std::uint64_t work = 0;
  for (std::size_t c : mine) work += replay_work(traces[cells[c].trace].event_count(), options);
  progress_meter progress(work, "events", progress_meter::stderr_is_terminal(), 1 + options.repeats, mine.size());
  options.progress = &progress;
  std::vector<bool> needed(traces.size(), false);
  for (std::size_t const c : mine) needed[cells[c].trace] = true;
  std::vector<plan::offline_best> const bests = offline ? plan::offline_bests(traces, needed, *offline, jobs) : std::vector<plan::offline_best>{};
  auto results = run_cells<std::vector<std::string>>(mine.size(), jobs, [&](std::size_t k) {
    grid_cell const& cell = cells[mine[k]];
    replay_result const r = make_composition(specs[cell.spec], params_at(cell.spec, cell.trace, cell.point), backend)->replay(traces[cell.trace], options);
    std::vector<std::string> row = result_cells(r);
    if (offline) {
      auto const gap = plan::offline_cells(bests[cell.trace], r.peak_reserved_bytes);
      row.insert(row.end(), gap.begin(), gap.end());
    }
    row.insert(row.begin() + 2, cell.point.begin(), cell.point.end());
    row.insert(row.begin(), std::to_string(mine[k]));
    progress.cell_done();
    return row;
  });
  progress.finish();
  // A part says which sweep it belongs to and how many cells that sweep has, so that merge
  // can tell a complete set of parts from one that lacks the last shard or mixes two sweeps.
  write_cell_rows(vm, part, sweep_part, total, part.given ? run_id("sweep", traces, specs, axes, user, backend, options) : "",
                  std::move(columns), std::move(results));
  return 0;
}

int capacity(std::vector<std::string> const& args)
{
  po::options_description desc(
      "fraglab capacity TRACE... -p P[,P...] [options]\n\n"
      "  fraglab capacity snap.pickle -p pytorch_caching,tf_bfc   the least memory each serves the trace in\n\n"
      "Columns: min_capacity_bytes (the smallest capacity with no failed allocation, to the backend's granularity),\n"
      "peak_reserved_unlimited (the footprint without a limit), granularity, replays (bisection steps).\n\n"
      "Options");
  add_trace_and_policy_options(desc);
  add_jobs_option(desc, "(trace, policy) cells searched in parallel");
  add_allocator_options(desc);
  add_output_options(desc);
  auto const parsed = parse_command(args, desc, "trace");
  if (!parsed) return 0;
  auto const& vm = *parsed;
  check_output_options(vm, {"output"});
  unsigned const jobs = jobs_option(vm);
  auto const chosen = read_allocator_options(vm);
  auto const& user = chosen.user;  // not a structured binding: clang 14 cannot capture those
  auto const& backend = chosen.backend;
  if (backend.capacity != std::numeric_limits<std::size_t>::max())
    throw std::invalid_argument("capacity searches the capacity itself: do not give --capacity");
  std::vector<std::string> const specs = policy_specs(vm);
  (void)make_compositions(specs, chosen);
  std::vector<trace::trace> const traces = read_traces(vm);
  bool const recorded = recorded_settings_applied(vm);
  note_recorded_settings(traces, specs, recorded);
  replay_options options;
  options.repeats = 0;
  options.stop_on_failure = true;
  // Steps of the bisections: one unlimited replay a cell, then about log2 of its footprint in
  // granules, added when the cell knows it.
  progress_meter progress(traces.size() * specs.size(), "bisection steps", progress_meter::stderr_is_terminal());

  auto rows = run_cells<std::vector<std::string>>(traces.size() * specs.size(), jobs, [&](std::size_t c) {
    trace::trace const& t = traces[c / specs.size()];
    std::string const& spec = specs[c % specs.size()];
    std::size_t replays = 0;
    auto serves = [&](std::size_t capacity) {
      backend_choice b = backend;
      b.capacity = capacity;
      ++replays;
      progress.add(1);
      return make_composition(spec, cell_parameters(spec, user, t, recorded), b)->replay(t, options).failed_allocs == 0;
    };
    // Unlimited, the footprint is an upper bound: bisect below it in steps of the backend's
    // granularity, on the assumption (true of every policy here when memory is only added)
    // that more capacity never causes a failure.
    auto const unlimited = make_composition(spec, cell_parameters(spec, user, t, recorded), backend);
    std::size_t const granularity = unlimited->make()->backend_granularity();
    replay_result const free_run = unlimited->replay(t, options);
    ++replays;
    progress.add(1);
    if (free_run.failed_allocs != 0)
      throw std::invalid_argument(spec + " fails on " + t.name + " even without a capacity limit");
    std::size_t lo = 0;  // in granules: lo fails (or is 0), hi serves
    std::size_t hi = (free_run.peak_reserved_bytes + granularity - 1) / granularity;
    progress.add_total(1 + static_cast<std::uint64_t>(std::bit_width(hi)));
    if (hi > 0 && !serves(hi * granularity)) {
      // Limits can change decisions: grow the bound until it serves.
      while (!serves(hi * granularity)) {
        hi *= 2;
        progress.add_total(2);  // this step, and one more of the bisection below
      }
    }
    while (hi - lo > 1) {
      std::size_t const mid = lo + (hi - lo) / 2;
      (serves(mid * granularity) ? hi : lo) = mid;
    }
    return std::vector<std::string>{t.name, spec, std::to_string(hi * granularity),
                                    std::to_string(free_run.peak_reserved_bytes), std::to_string(granularity),
                                    std::to_string(replays)};
  });
  progress.finish();
  write_rows(vm, {"trace", "policy", "min_capacity_bytes", "peak_reserved_unlimited", "granularity", "replays"}, rows);
  return 0;
}

int merge(std::vector<std::string> const& args)
{
  po::options_description desc(
      "fraglab merge PART.csv... [-o OUT] [--format F]\n\n"
      "  fraglab merge part1.csv part2.csv part3.csv -o sweep.csv   the parts of `sweep --shard I/3`, in cell order\n"
      "  fraglab merge parts/part-*.csv -o table.csv                  the parts of `replay --shard slurm` (docs/cluster.md)\n\n"
      "The merged table is the one the run would have written unsharded; a missing, repeated or foreign cell is refused.\n\n"
      "Options");
  desc.add_options()("part", po::value<std::vector<std::string>>()->multitoken(),
                     "CSV outputs of `fraglab sweep` or `fraglab replay` with --shard (and --format csv or -o PART.csv)");
  add_output_options(desc);
  auto const parsed = parse_command(args, desc, "part");
  if (!parsed) return 0;
  auto const& vm = *parsed;
  if (!vm.count("part")) throw std::invalid_argument("no part given");
  check_output_options(vm, {"output"});
  std::vector<std::string> columns;
  std::map<std::size_t, std::vector<std::string>> by_cell;
  // The run every row must belong to, as the first row read names it, and where that was.
  std::string id;
  std::size_t run_cells = 0;
  std::string first_row;
  part_columns kind = sweep_part;
  auto const run = [&] { return std::string(kind.id == replay_part.id ? "replay" : "sweep"); };
  for (auto const& path : vm["part"].as<std::vector<std::string>>()) {
    std::ifstream in = open_input(path, "a CSV part of a sharded run");
    std::vector<std::string> cells;
    std::size_t lines = 0, records = 0;
    for (std::size_t before = 0; read_csv_record(in, path, lines, cells); before = lines) {
      std::size_t const number = before + 1;
      auto const where = path + ":" + std::to_string(number) + ": ";
      if (++records == 1) {
        if (cells.empty() || cells[0] != "cell")
          throw input_error(where + "expected the header of a sharded run's part, starting with 'cell', got " + fraglab::quoted(cells.empty() ? "" : cells[0]));
        auto const made_by = std::find_if(std::begin(part_kinds), std::end(part_kinds), [&](part_columns const& k) {
          return cells.size() >= 3 && cells[cells.size() - 2] == k.cells && cells.back() == k.id;
        });
        if (made_by == std::end(part_kinds))
          throw input_error(where + "expected the CSV of `fraglab sweep` or `fraglab replay` with --shard, whose last columns are " +
                            std::string(sweep_part.cells) + " and " + std::string(sweep_part.id) + " (" + std::string(replay_part.cells) +
                            " and " + std::string(replay_part.id) + " for a replay)");
        kind = *made_by;
        if (columns.empty()) columns = cells;
        else if (cells != columns) throw input_error(where + "the header differs from the first part's");
        continue;
      }
      if (cells.size() != columns.size())
        throw input_error(where + "expected " + std::to_string(columns.size()) + " fields, got " + std::to_string(cells.size()));
      auto const whole_number = [&](std::string const& text, char const* what) {
        std::size_t n = 0;
        auto const [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
        if (ec != std::errc{} || end != text.data() + text.size())
          throw input_error(where + "expected " + what + ", got " + fraglab::quoted(text));
        return n;
      };
      std::size_t const cell = whole_number(cells[0], "a cell number");
      std::size_t const of = whole_number(cells[cells.size() - 2], "the run's cell count");
      if (id.empty()) {
        id = cells.back();
        run_cells = of;
        first_row = path + ":" + std::to_string(number);
      } else if (cells.back() != id || of != run_cells) {
        throw input_error(where + "this row is of another " + run() + " than " + first_row + " (" + std::string(kind.id) + " " +
                          fraglab::quoted(cells.back()) + " of " + std::to_string(of) + " cells, there " + fraglab::quoted(id) + " of " +
                          std::to_string(run_cells) +
                          "): their traces, policies, grid, parameters, backend or timing differ");
      }
      if (cell >= run_cells)
        throw input_error(where + "cell " + std::to_string(cell) + " is outside its " + run() + "'s " + std::to_string(run_cells) + " cells");
      cells.resize(cells.size() - 2);
      if (!by_cell.emplace(cell, cells).second)
        throw input_error(where + "cell " + std::to_string(cell) + " appears twice");
    }
    if (records == 0) throw input_error(path + ": empty file, expected a CSV part of a sharded run");
  }
  // A part may hold no cell (a shard past the grid's end), but some part must say which
  // run they are, and so how many cells make it whole.
  if (id.empty()) throw input_error("the parts hold no cell, so which run they are parts of is unknown");
  for (std::size_t cell = 0; cell < run_cells; ++cell)
    if (!by_cell.count(cell))
      throw input_error("cell " + std::to_string(cell) + " of the " + run() + "'s " + std::to_string(run_cells) +
                        " is missing from every part (is a shard's part not given?)");
  columns.resize(columns.size() - 2);
  std::vector<std::vector<std::string>> rows;
  for (auto& [cell, row] : by_cell) rows.push_back(std::move(row));
  write_cell_rows(vm, shard{}, kind, run_cells, id, std::move(columns), std::move(rows));
  return 0;
}

}  // namespace fraglab::cli
