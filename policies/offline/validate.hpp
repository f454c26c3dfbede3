// Checks a placement: every offset aligned, no two buffers live at the same time overlapping
// in space, the height within the capacity. A sweep over time keeps the live buffers ordered
// by offset, so that a new one is compared with its two neighbours only: O(n log n).
#pragma once

#include <fraglab/policies/offline/problem.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fraglab::offline {

// The highest end of any buffer that occupies space (0 for none).
[[nodiscard]] inline std::uint64_t placement_height(problem const& p, std::vector<std::uint64_t> const& offsets)
{
  std::uint64_t height = 0;
  for (std::size_t i = 0; i < p.buffers.size(); ++i)
    if (occupies_space(p.buffers[i])) height = std::max(height, offsets[i] + p.buffers[i].size);
  return height;
}

// Why the placement is not valid, naming the buffers by index; nothing if it is.
[[nodiscard]] inline std::optional<std::string> placement_error(problem const& p, std::vector<std::uint64_t> const& offsets)
{
  if (offsets.size() != p.buffers.size())
    return "expected " + std::to_string(p.buffers.size()) + " offsets, got " + std::to_string(offsets.size());
  std::vector<std::uint32_t> order;
  for (std::uint32_t i = 0; i < p.buffers.size(); ++i) {
    buffer const& b = p.buffers[i];
    if (!occupies_space(b)) continue;
    if (offsets[i] % b.alignment != 0)
      return "buffer " + std::to_string(i) + " at offset " + std::to_string(offsets[i]) + " is not aligned to " + std::to_string(b.alignment);
    if (offsets[i] > p.capacity || b.size > p.capacity - offsets[i])
      return "buffer " + std::to_string(i) + " ends at " + std::to_string(offsets[i] + b.size) + ", beyond the capacity " + std::to_string(p.capacity);
    order.push_back(i);
  }
  // Half-open lifetimes: at a time step, the buffers that end leave before those that start.
  struct step { std::uint64_t time; bool starts; std::uint32_t buffer; };
  std::vector<step> steps;
  steps.reserve(2 * order.size());
  for (std::uint32_t i : order) {
    steps.push_back({p.buffers[i].lower, true, i});
    steps.push_back({p.buffers[i].upper, false, i});
  }
  std::sort(steps.begin(), steps.end(), [](step const& a, step const& b) {
    return a.time != b.time ? a.time < b.time : (a.starts != b.starts ? !a.starts : a.buffer < b.buffer);
  });
  std::map<std::uint64_t, std::uint32_t> live;  // offset -> buffer; sizes are non-zero, so offsets are distinct
  for (step const& s : steps) {
    std::uint64_t const at = offsets[s.buffer];
    if (!s.starts) {
      live.erase(at);
      continue;
    }
    auto const above = live.lower_bound(at);
    auto const overlap = [&](std::uint32_t other) {
      return "buffers " + std::to_string(std::min(s.buffer, other)) + " and " + std::to_string(std::max(s.buffer, other)) +
             " overlap at time " + std::to_string(s.time);
    };
    if (above != live.end() && above->first < at + p.buffers[s.buffer].size) return overlap(above->second);
    if (above != live.begin()) {
      auto const below = std::prev(above);
      if (below->first + p.buffers[below->second].size > at) return overlap(below->second);
    }
    live.emplace(at, s.buffer);
  }
  return std::nullopt;
}

}  // namespace fraglab::offline
