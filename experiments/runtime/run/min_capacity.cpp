#include <fraglab/runtime/run/min_capacity.hpp>

#include <fraglab/runtime/io/progress_meter.hpp>
#include <fraglab/runtime/replay/run_cells.hpp>

#include <bit>
#include <limits>
#include <stdexcept>

namespace fraglab {

void check_min_capacity_inputs(run_inputs const& in)
{
  if (in.chosen.backend.capacity != std::numeric_limits<std::size_t>::max())
    throw std::invalid_argument("capacity searches the capacity itself: do not give --capacity");
  (void)make_compositions(in.specs, in.chosen);
}

std::size_t least_capacity(std::function<bool(std::size_t)> const& serves, std::size_t granularity, std::size_t upper,
                           progress_meter* progress)
{
  auto const step = [&](std::size_t granules) {
    if (progress != nullptr) progress->add(1);
    return serves(granules * granularity);
  };
  std::size_t lo = 0;  // in granules: lo fails (or is 0), hi serves
  std::size_t hi = (upper + granularity - 1) / granularity;
  if (progress != nullptr) progress->add_total(1 + static_cast<std::uint64_t>(std::bit_width(hi)));
  if (hi > 0 && !step(hi)) {
    // Limits can change decisions: grow the bound until it serves.
    while (!step(hi)) {
      if (hi > std::numeric_limits<std::size_t>::max() / 2 / granularity)
        throw std::invalid_argument("no capacity serves it: it fails however much memory it is given");
      hi *= 2;
      if (progress != nullptr) progress->add_total(2);  // this step, and one more of the bisection below
    }
  }
  while (hi - lo > 1) {
    std::size_t const mid = lo + (hi - lo) / 2;
    (step(mid) ? hi : lo) = mid;
  }
  return hi * granularity;
}

results_table min_capacities(run_inputs const& in, std::atomic<bool> const* stop)
{
  check_min_capacity_inputs(in);
  auto const& traces = in.traces;
  auto const& specs = in.specs;
  auto const& user = in.chosen.user;
  auto const& backend = in.chosen.backend;
  replay_options options;
  options.repeats = 0;
  options.stop_on_failure = true;
  options.stop = stop;
  // Steps of the bisections: one unlimited replay a cell, then about log2 of its footprint in
  // granules, added when the cell knows it.
  progress_meter progress(traces.size() * specs.size(), "bisection steps", progress_meter::stderr_is_terminal());

  results_table table{{"trace", "policy", "min_capacity_bytes", "peak_reserved_unlimited", "granularity", "replays"}, {}};
  table.rows = run_cells<std::vector<std::string>>(traces.size() * specs.size(), in.jobs, [&](std::size_t c) {
    trace::trace const& t = *traces[c / specs.size()];
    std::string const& spec = specs[c % specs.size()];
    std::size_t replays = 0;
    auto serves = [&](std::size_t capacity) {
      backend_choice b = backend;
      b.capacity = capacity;
      ++replays;
      return make_composition(spec, cell_parameters(spec, user, t, in.recorded), b)->replay(t, options).failed_allocs == 0;
    };
    // Unlimited, the footprint is an upper bound: bisect below it.
    auto const unlimited = make_composition(spec, cell_parameters(spec, user, t, in.recorded), backend);
    std::size_t const granularity = unlimited->make()->backend_granularity();
    replay_result const free_run = unlimited->replay(t, options);
    ++replays;
    progress.add(1);
    if (free_run.failed_allocs != 0)
      throw std::invalid_argument(unlimited->name() + " fails on " + t.name + " even without a capacity limit");
    std::size_t const least = least_capacity(serves, granularity, free_run.peak_reserved_bytes, &progress);
    return std::vector<std::string>{t.name, unlimited->name(), std::to_string(least),
                                    std::to_string(free_run.peak_reserved_bytes), std::to_string(granularity),
                                    std::to_string(replays)};
  });
  progress.finish();
  return table;
}

}  // namespace fraglab
