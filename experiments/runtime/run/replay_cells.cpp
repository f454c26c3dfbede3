#include <fraglab/runtime/run/replay_cells.hpp>

#include <fraglab/runtime/io/progress_meter.hpp>
#include <fraglab/runtime/output/results_format.hpp>
#include <fraglab/runtime/plan/offline_gap.hpp>
#include <fraglab/runtime/replay/run_cells.hpp>


namespace fraglab {

replay_run run_replay(run_inputs const& in, replay_options options, std::vector<std::size_t> const& cells)
{
  auto const& traces = in.traces;
  std::vector<std::unique_ptr<composition>> const compositions = make_compositions(in.specs, in.chosen);
  std::size_t const policies = compositions.size();
  // A cell whose trace was recorded under settings its policy reads runs a composition of its own.
  std::vector<std::unique_ptr<composition>> own(traces.size() * policies);
  for (std::size_t const cell : cells) {
    std::string const& spec = in.specs[cell % policies];
    param_set const p = cell_parameters(spec, in.chosen.user, *traces[cell / policies], in.recorded);
    if (p.values() != scoped_parameters(spec, in.chosen.user).values()) own[cell] = make_composition(spec, p, in.chosen.backend);
  }

  std::uint64_t work = 0;
  for (std::size_t const cell : cells) work += replay_work(traces[cell / policies]->event_count(), options);
  progress_meter progress(work, "events", progress_meter::stderr_is_terminal(), 1 + options.repeats, cells.size());
  options.progress = &progress;
  replay_run run;
  run.cells = cells;
  run.results = run_cells<replay_result>(cells.size(), in.jobs, [&](std::size_t k) {
    std::size_t const cell = cells[k];
    composition const& c = own[cell] ? *own[cell] : *compositions[cell % policies];
    replay_result r = c.replay(*traces[cell / policies], options);
    progress.cell_done();
    return r;
  });
  progress.finish();

  std::vector<bool> needed(traces.size(), false);
  for (std::size_t const cell : cells) needed[cell / policies] = true;
  std::vector<plan::offline_best> const bests =
      in.offline ? plan::offline_bests(traces, needed, *in.offline, in.jobs) : std::vector<plan::offline_best>{};
  run.table.columns = result_columns();
  run.table.columns.insert(run.table.columns.begin(), "cell");
  if (in.offline)
    for (auto const& c : plan::offline_columns()) run.table.columns.push_back(c);
  for (std::size_t k = 0; k < run.results.size(); ++k) {
    auto& row = run.table.rows.emplace_back(result_cells(run.results[k]));
    row.insert(row.begin(), std::to_string(cells[k]));
    if (in.offline) {
      auto const gap = plan::offline_cells(bests[cells[k] / policies], run.results[k].peak_reserved_bytes);
      row.insert(row.end(), gap.begin(), gap.end());
    }
  }
  return run;
}

}  // namespace fraglab
