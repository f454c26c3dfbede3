// The cells of `fraglab sweep`: each policy over the product of the axes it reads, on every
// trace. An axis a policy does not read has one empty cell for it, so no cell repeats another.
#pragma once

#include <fraglab/runtime/replay/replay_result.hpp>
#include <fraglab/runtime/run/results_table.hpp>
#include <fraglab/runtime/run/run_inputs.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace fraglab {

// KEY and its values, the first axis outermost.
using sweep_axes = std::vector<std::pair<std::string, std::vector<std::string>>>;

class sweep_grid {
 public:
  // Throws std::invalid_argument, before anything runs, for: no axis, a key given twice or
  // also in `in.chosen.user` (whose value would never run), an empty value, a value given
  // twice or two spellings of one setting, a key no policy reads, or a cell that cannot be
  // built.
  sweep_grid(run_inputs const& in, sweep_axes axes);

  [[nodiscard]] std::size_t size() const noexcept { return cells_.size(); }
  // cell, trace, policy, one column an axis, the rest of result_columns(), the offline ones.
  [[nodiscard]] std::vector<std::string> columns() const;
  // cell, trace, policy, the axes and events of `cells`: what `--list-cells` shows.
  [[nodiscard]] results_table listing(std::vector<std::size_t> const& cells) const;
  // Replays `cells`, `in.jobs` at a time; rows in the order of `cells`.
  [[nodiscard]] results_table run(replay_options options, std::vector<std::size_t> const& cells) const;

 private:
  struct cell {
    std::size_t trace, spec;
    std::vector<std::string> point;  // one value an axis, empty where the policy does not read it
  };
  [[nodiscard]] param_set parameters(cell const& c) const;

  run_inputs in_;
  sweep_axes axes_;
  std::vector<cell> cells_;
};

}  // namespace fraglab
