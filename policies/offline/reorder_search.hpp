// The search for instances too large for the exact one (planner.hpp): squeaky-wheel
// optimization (Joslin & Clements, "Squeaky wheel optimization", JAIR 10, 1999) over the order
// in which greedy first fit places the buffers.
//
// Construct: place the buffers in the order, each in the lowest gap among the placed ones it
// meets (greedy.hpp). Blame: every buffer that ends above the lower bound is where the height
// was lost; it moves forward in the order by a share of the order's length proportional to
// how far above the bound it ends, the highest by `step` of it. Construct again; keep the
// lowest placement. The first order is greedy by size, the portfolio's usual best.
//
// A construction costs what one greedy heuristic does, O(n log n) plus the buffers each meets;
// memory is O(n) besides the segment tree. A node is one buffer placed: a node budget makes
// the search deterministic where a deadline does not.
#pragma once

#include <fraglab/policies/offline/detail/sections.hpp>
#include <fraglab/policies/offline/greedy.hpp>
#include <fraglab/policies/offline/problem.hpp>
#include <fraglab/policies/offline/validate.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace fraglab::offline {

struct reorder_result {
  std::uint64_t nodes = 0;
  std::uint64_t constructions = 0;
  bool improved = false;  // `best` was replaced by a lower placement
  clock::time_point found_at{};  // when, if it was
};

// Lowers `best`, a valid placement, until its height is `lower_bound`, the deadline passes or
// another construction would exceed `node_budget`. `size_first`: greedy first fit by size's
// placement, where the portfolio made it (the search's first construction); else empty.
inline reorder_result reorder_search(problem const& p, detail::sections const& sec, std::vector<std::uint64_t>& best,
                                     std::vector<std::uint64_t> size_first, std::uint64_t lower_bound,
                                     clock::time_point deadline, std::uint64_t node_budget, double step = 0.02)
{
  reorder_result r;
  std::vector<std::uint32_t> order = detail::ranked(p, buffer_order::size);
  std::size_t const n = order.size();
  std::vector<double> key(p.buffers.size(), 0);
  std::vector<std::uint64_t> placed = std::move(size_first);
  std::uint64_t height = placed.empty() ? 0 : placement_height(p, placed);  // the last construction's
  std::uint64_t best_height = placement_height(p, best);
  while (n != 0 && best_height > lower_bound) {
    if (!placed.empty()) {
      // Blame the last placement.
      for (std::size_t k = 0; k < n; ++k) {
        std::uint32_t const i = order[k];
        std::uint64_t const end = placed[i] + p.buffers[i].size;
        key[i] = static_cast<double>(k);
        if (end > lower_bound)
          key[i] -= step * static_cast<double>(n) * static_cast<double>(end - lower_bound) / static_cast<double>(height - lower_bound);
      }
      std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return key[a] < key[b]; });
    }
    if (node_budget - r.nodes < n || clock::now() >= deadline) break;
    auto next = detail::place_in_order(p, sec, order, gap_choice::first, deadline);
    if (!next) break;  // out of time
    placed = std::move(*next);
    r.nodes += n;
    ++r.constructions;
    if ((height = placement_height(p, placed)) < best_height) {
      best_height = height;
      best = placed;
      r.improved = true;
      r.found_at = clock::now();
    }
  }
  return r;
}

}  // namespace fraglab::offline
