// Lower bounds on the height of any placement.
//
// LOAD: the most bytes live at one time step (the buffers live then stack). The exact search
// raises the bound further: a height it proves infeasible is one below the optimum
// (planner.hpp).
#pragma once

#include <fraglab/policies/offline/problem.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace fraglab::offline {

// The most bytes a problem's buffers may need at one time: heights are signed 64-bit sums in
// the search, and each buffer's alignment padding must fit above them.
inline constexpr std::uint64_t largest_load = std::uint64_t{1} << 62;

// Where the buffers live at one time need `largest_load` bytes or more (no memory holds
// them; summed in 64 bits they would wrap): the first such time step, else nullopt.
[[nodiscard]] inline std::optional<std::uint64_t> load_too_large_at(problem const& p)
{
  std::vector<std::pair<std::uint64_t, area_type>> starts, ends;  // area_type: 128 bits
  for (buffer const& b : p.buffers) {
    if (!occupies_space(b)) continue;
    starts.emplace_back(b.lower, b.size);
    ends.emplace_back(b.upper, b.size);
  }
  std::sort(starts.begin(), starts.end());
  std::sort(ends.begin(), ends.end());
  area_type live = 0;
  std::size_t e = 0;
  for (auto const& [time, size] : starts) {
    for (; e < ends.size() && ends[e].first <= time; ++e) live -= ends[e].second;
    live += size;
    if (live >= largest_load) return time;
  }
  return std::nullopt;
}

// LOAD; the problem's load must be below largest_load (load_too_large_at).
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
