#include <fraglab/runtime/run/sweep_grid.hpp>

#include <fraglab/runtime/io/progress_meter.hpp>
#include <fraglab/runtime/output/results_format.hpp>
#include <fraglab/runtime/plan/offline_gap.hpp>
#include <fraglab/runtime/registry/policy_spec.hpp>
#include <fraglab/runtime/replay/run_cells.hpp>

#include <algorithm>
#include <stdexcept>

namespace fraglab {

sweep_grid::sweep_grid(run_inputs const& in, sweep_axes axes) : in_(in), axes_(std::move(axes))
{
  if (axes_.empty()) throw std::invalid_argument("no --vary given (a sweep needs at least one axis)");
  for (std::size_t a = 0; a < axes_.size(); ++a) {
    auto const& [key, values] = axes_[a];
    // A second axis of one key would set it over the first, and its column would report
    // values that never ran.
    for (std::size_t b = 0; b < a; ++b)
      if (axes_[b].first == key) throw std::invalid_argument("--vary: " + key + " is given twice; give its values in one list");
    // The axis would replace the --set value in every cell, so that value would never run.
    if (in_.chosen.user.has(key)) throw std::invalid_argument("--set " + key + " and --vary " + key + ": give its values in --vary alone");
    if (values.empty()) throw std::invalid_argument("--vary: no value given for " + key);
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i].empty()) throw std::invalid_argument("--vary: an empty value of " + key);
      for (std::size_t j = 0; j < i; ++j)
        if (same_param_value(values[i], values[j]))
          throw std::invalid_argument("--vary: " + key + "=" + values[i] +
                                      (values[i] == values[j] ? " is given twice" : " is the same setting as " + values[j]));
    }
  }
  {
    std::vector<std::string> varied;
    for (auto const& [key, values] : axes_) varied.push_back(key);
    check_keys_read(in_.specs, varied, "--vary");
  }
  (void)make_compositions(in_.specs, in_.chosen);  // every --set key read by some policy, on one backend

  // Each policy's grid is the product of the axes it reads, the first axis outermost.
  std::vector<std::vector<std::vector<std::string>>> points_of(in_.specs.size());
  for (std::size_t s = 0; s < in_.specs.size(); ++s) {
    auto const read = parameters_read(in_.specs[s]);
    auto& points = points_of[s];
    points = {{}};
    for (auto const& [key, values] : axes_) {
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
  for (std::size_t t = 0; t < in_.traces.size(); ++t)
    for (std::size_t s = 0; s < in_.specs.size(); ++s)
      for (auto const& point : points_of[s]) cells_.push_back({t, s, point});
  // Reject a bad value or key before running anything.
  for (cell const& c : cells_) (void)make_composition(in_.specs[c.spec], parameters(c), in_.chosen.backend);
}

param_set sweep_grid::parameters(cell const& c) const
{
  param_set p = cell_parameters(in_.specs[c.spec], in_.chosen.user, *in_.traces[c.trace], in_.recorded);
  for (std::size_t a = 0; a < axes_.size(); ++a)
    if (!c.point[a].empty()) p.set(axes_[a].first, c.point[a]);
  return p;
}

std::vector<std::string> sweep_grid::columns() const
{
  std::vector<std::string> columns = result_columns();
  for (std::size_t a = 0; a < axes_.size(); ++a) columns.insert(columns.begin() + 2 + static_cast<std::ptrdiff_t>(a), axes_[a].first);
  columns.insert(columns.begin(), "cell");
  if (in_.offline)
    for (auto const& c : plan::offline_columns()) columns.push_back(c);
  return columns;
}

results_table sweep_grid::listing(std::vector<std::size_t> const& cells) const
{
  std::vector<std::string> const all = columns();
  results_table listed{{all.begin(), all.begin() + 3 + static_cast<std::ptrdiff_t>(axes_.size())}, {}};
  listed.columns.emplace_back("events");
  for (std::size_t k : cells) {
    cell const& c = cells_[k];
    auto& row = listed.rows.emplace_back(std::vector<std::string>{std::to_string(k), in_.traces[c.trace]->name, in_.specs[c.spec]});
    row.insert(row.end(), c.point.begin(), c.point.end());
    row.push_back(std::to_string(in_.traces[c.trace]->event_count()));
  }
  return listed;
}

results_table sweep_grid::run(replay_options options, std::vector<std::size_t> const& cells) const
{
  auto const& traces = in_.traces;
  std::uint64_t work = 0;
  for (std::size_t k : cells) work += replay_work(traces[cells_[k].trace]->event_count(), options);
  progress_meter progress(work, "events", progress_meter::stderr_is_terminal(), 1 + options.repeats, cells.size());
  options.progress = &progress;
  std::vector<bool> needed(traces.size(), false);
  for (std::size_t k : cells) needed[cells_[k].trace] = true;
  std::vector<plan::offline_best> const bests =
      in_.offline ? plan::offline_bests(traces, needed, *in_.offline, in_.jobs) : std::vector<plan::offline_best>{};
  results_table table{columns(), {}};
  table.rows = run_cells<std::vector<std::string>>(cells.size(), in_.jobs, [&](std::size_t k) {
    cell const& c = cells_[cells[k]];
    replay_result const r = make_composition(in_.specs[c.spec], parameters(c), in_.chosen.backend)->replay(*traces[c.trace], options);
    std::vector<std::string> row = result_cells(r);
    if (in_.offline) {
      auto const gap = plan::offline_cells(bests[c.trace], r.peak_reserved_bytes);
      row.insert(row.end(), gap.begin(), gap.end());
    }
    row.insert(row.begin() + 2, c.point.begin(), c.point.end());
    row.insert(row.begin(), std::to_string(cells[k]));
    progress.cell_done();
    return row;
  });
  progress.finish();
  return table;
}

}  // namespace fraglab
