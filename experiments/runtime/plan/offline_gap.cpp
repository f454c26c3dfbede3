#include <fraglab/runtime/plan/offline_gap.hpp>

#include <fraglab/policies/offline/planner.hpp>
#include <fraglab/runtime/output/results_format.hpp>
#include <fraglab/runtime/plan/offline_problem.hpp>
#include <fraglab/runtime/replay/run_cells.hpp>

namespace fraglab::plan {

offline_best offline_best_of(trace::trace const& t, double seconds)
{
  offline::plan_options options;
  options.time_limit_seconds = seconds;
  offline::plan_result const r = offline::plan(offline_problem(t).problem, options);
  return {r.height, r.lower_bound, r.optimal};
}

std::vector<offline_best> offline_bests(std::vector<trace::trace const*> const& traces, std::vector<bool> const& needed, double seconds,
                                        unsigned jobs)
{
  return run_cells<offline_best>(traces.size(), jobs, [&](std::size_t i) {
    return needed[i] ? offline_best_of(*traces[i], seconds) : offline_best{};
  });
}

std::vector<std::string> offline_columns() { return {"offline_best_bytes", "offline_lower_bytes", "offline_optimal", "gap_to_offline"}; }

std::vector<std::string> offline_cells(offline_best const& best, std::uint64_t peak_reserved_bytes)
{
  std::string const gap =
      best.best_bytes == 0 ? "" : fixed(static_cast<double>(peak_reserved_bytes) / static_cast<double>(best.best_bytes) - 1.0, 4);
  return {std::to_string(best.best_bytes), std::to_string(best.lower_bytes), best.optimal ? "yes" : "no", gap};
}

}  // namespace fraglab::plan
