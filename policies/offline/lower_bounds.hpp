// Lower bounds on the height of any placement.
//
// LOAD: the most bytes live at one time step (the buffers live then stack). The exact search
// raises the bound further: a height it proves infeasible is one below the optimum
// (planner.hpp).
#pragma once

#include "policies/offline/problem.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace fraglab::offline {

[[nodiscard]] inline std::uint64_t load(problem const& p)
{
  std::vector<std::pair<std::uint64_t, std::int64_t>> changes;  // (time, +size or -size)
  for (buffer const& b : p.buffers) {
    if (!occupies_space(b)) continue;
    changes.emplace_back(b.lower, static_cast<std::int64_t>(b.size));
    changes.emplace_back(b.upper, -static_cast<std::int64_t>(b.size));
  }
  std::sort(changes.begin(), changes.end());  // at one time, the ends (negative) first
  std::int64_t live = 0, most = 0;
  for (auto const& [time, change] : changes) most = std::max(most, live += change);
  return static_cast<std::uint64_t>(most);
}

}  // namespace fraglab::offline
