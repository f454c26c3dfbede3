// fraglab info, sweep, capacity and merge: the commands that run many cells of an experiment.
#include <fraglab/cli/commands.hpp>
#include <fraglab/cli/options.hpp>
#include <fraglab/cli/shard_option.hpp>
#include <fraglab/runtime/io/csv.hpp>
#include <fraglab/runtime/io/input_error.hpp>
#include <fraglab/runtime/io/input_file.hpp>
#include <fraglab/runtime/io/progress_meter.hpp>
#include <fraglab/runtime/output/results_format.hpp>
#include <fraglab/runtime/params/list_items.hpp>
#include <fraglab/runtime/plan/offline_gap.hpp>
#include <fraglab/runtime/replay/run_cells.hpp>
#include <fraglab/runtime/run/min_capacity.hpp>
#include <fraglab/runtime/run/sweep_grid.hpp>
#include <fraglab/runtime/run/trace_statistics.hpp>
#include <fraglab/runtime/trace/event_batches.hpp>
#include <fraglab/runtime/trace/read_trace.hpp>

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
  // Rows for a program (a format, a file of one, or fraglab.run), else lines for a reader.
  bool const as_rows = vm.count("format") || (vm.count("output") && chosen_output_format(vm) != output_format::table) ||
                       table_sink() != nullptr;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::ostringstream lines;
  for (trace::trace const& t : read_traces(vm)) {
    auto const stats = trace_statistics(t);
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
  sweep_axes axes;
  if (vm.count("vary"))
    for (auto const& v : vm["vary"].as<std::vector<std::string>>()) {
      std::size_t const eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
        throw std::invalid_argument("--vary: expected KEY=V1,V2,..., got '" + v + "'");
      std::vector<std::string> values;
      for (std::string_view const value : list_items(std::string_view(v).substr(eq + 1))) values.emplace_back(value);
      axes.emplace_back(v.substr(0, eq), std::move(values));
    }
  std::vector<std::string> const specs = policy_specs(vm);
  std::optional<double> const offline = offline_option(vm);
  {  // the axes and policies checked before any trace is read
    (void)sweep_grid(run_inputs{{}, specs, chosen, true, jobs, offline}, axes);
  }
  std::vector<trace::trace> const traces = read_traces(vm);
  bool const recorded = recorded_settings_applied(vm);
  note_recorded_settings(traces, specs, recorded);
  sweep_grid const grid(run_inputs{addresses_of(traces), specs, chosen, recorded, jobs, offline}, axes);
  std::vector<std::size_t> const mine = part.cells(grid.size());
  if (vm.count("list-cells")) {
    results_table const listed = grid.listing(mine);
    write_all_columns(vm, listed.columns, listed.rows);
    return 0;
  }
  results_table results = grid.run(options, mine);
  // A part says which sweep it belongs to and how many cells that sweep has, so that merge
  // can tell a complete set of parts from one that lacks the last shard or mixes two sweeps.
  write_cell_rows(vm, part, sweep_part, grid.size(), part.given ? run_id("sweep", traces, specs, axes, chosen.user, chosen.backend, options) : "",
                  std::move(results.columns), std::move(results.rows));
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
  std::vector<std::string> const specs = policy_specs(vm);
  check_min_capacity_inputs(run_inputs{{}, specs, chosen, true, 1, std::nullopt});  // before any trace is read
  std::vector<trace::trace> const traces = read_traces(vm);
  bool const recorded = recorded_settings_applied(vm);
  note_recorded_settings(traces, specs, recorded);
  results_table const found = min_capacities(run_inputs{addresses_of(traces), specs, chosen, recorded, jobs, std::nullopt});
  write_rows(vm, found.columns, found.rows);
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
