#include <fraglab/runtime/plan/plan_table.hpp>

#include <fraglab/runtime/output/results_format.hpp>

namespace fraglab::plan {

std::vector<std::string> plan_columns()
{
  return {"trace",    "buffers",   "load_bytes",      "height_bytes", "lower_bound_bytes", "optimal", "gap_to_lower", "capacity_bytes",
          "found_by", "heuristic", "heuristic_bytes", "search_nodes", "seconds",           "seconds_to_best", "seconds_to_fit"};
}

std::vector<std::string> plan_row(offline_input const& in, offline::plan_result const& r, std::uint64_t capacity)
{
  return {in.name,
          std::to_string(r.buffers),
          std::to_string(r.load),
          std::to_string(r.height),
          std::to_string(r.lower_bound),
          r.optimal ? "yes" : "no",
          r.lower_bound == 0 ? "0.0000" : fixed(static_cast<double>(r.height) / static_cast<double>(r.lower_bound) - 1.0, 4),
          capacity == offline::no_capacity ? "" : std::to_string(capacity),
          r.found_by,
          r.heuristic_best,
          std::to_string(r.heuristic_height),
          std::to_string(r.search_nodes),
          fixed(r.seconds, 3),
          fixed(r.seconds_to_best, 3),
          r.seconds_to_fit < 0 ? "" : fixed(r.seconds_to_fit, 3)};
}

std::string no_fit_reason(offline_input const& in, offline::plan_result const& r, std::uint64_t capacity, double seconds)
{
  return in.name + ": no placement within " + std::to_string(capacity) + " bytes: " +
         (r.infeasible ? "none exists (proven: every placement is at least " + std::to_string(r.lower_bound) + " bytes high)"
                       : "none found in " + fixed(seconds, 1) + " s (the lowest found is " + std::to_string(r.height) +
                             " bytes; no placement is lower than " + std::to_string(r.lower_bound) + ")");
}

}  // namespace fraglab::plan
