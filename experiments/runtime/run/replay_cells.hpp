// The cells of `fraglab replay`: every trace under every policy. Cell c is trace
// c / policies under policy c % policies.
#pragma once

#include <fraglab/runtime/replay/replay_result.hpp>
#include <fraglab/runtime/run/results_table.hpp>
#include <fraglab/runtime/run/run_inputs.hpp>

#include <cstddef>
#include <vector>

namespace fraglab {

struct replay_run {
  std::vector<std::size_t> cells;      // those run, in order
  std::vector<replay_result> results;  // one a cell
  results_table table;                 // cell, result_columns(), and the offline columns when asked
};

inline std::size_t replay_cell_count(run_inputs const& in) { return in.traces.size() * in.specs.size(); }

// Runs `cells` (of replay_cell_count; every_cell(n) for all) `in.jobs` at a time. A cell whose trace was recorded under
// settings its policy reads runs under them (cell_parameters). Throws std::invalid_argument
// for a policy, key or backend that cannot run, before any cell runs.
replay_run run_replay(run_inputs const& in, replay_options options, std::vector<std::size_t> const& cells);

}  // namespace fraglab
