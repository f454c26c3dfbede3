// The offline planner: the lowest placement it can find within a time limit, the best lower
// bound it can prove, and whether the two meet (docs/offline.md).
//
// 1. LOAD bounds the height from below (lower_bounds.hpp).
// 2. Every greedy heuristic of the portfolio runs (greedy.hpp); the lowest is kept.
// 3. Above search_buffer_limit buffers, the reorder search (reorder_search.hpp) lowers the
//    best heuristic placement until the time or node budget is spent. At or below it, the
//    exact search (exact_search.hpp) dives for a first placement, tries the capacity if
//    that exceeds it (with all the time left), then LOAD (where most instances' optimum
//    lies), then heights between the bounds, halving the distance, until the bounds meet or
//    time runs out.
//
// Every height is a multiple of the granule g (granule()): in a canonical placement every
// offset is. So a height H proven infeasible
// makes H + g a lower bound, and a placement of height H + g optimal.
//
// No placement is reported before placement_error (validate.hpp) accepted it.
#pragma once

#include <fraglab/policies/offline/detail/sections.hpp>
#include <fraglab/policies/offline/exact_search.hpp>
#include <fraglab/policies/offline/greedy.hpp>
#include <fraglab/policies/offline/lower_bounds.hpp>
#include <fraglab/policies/offline/problem.hpp>
#include <fraglab/policies/offline/reorder_search.hpp>
#include <fraglab/policies/offline/validate.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace fraglab::offline {

struct plan_options {
  double time_limit_seconds = 10;
  // Instances with more buffers get the reorder search instead of the exact one: the exact
  // search keeps, for each buffer, the buffers it meets in time, and recurses once per buffer
  // placed.
  std::size_t search_buffer_limit = 4000;
  // Nodes either search may take: with a time limit that never binds, the same plan on every
  // machine.
  std::uint64_t node_budget = unlimited_nodes;
};

struct plan_result {
  std::vector<std::uint64_t> offsets;
  std::uint64_t height = 0;
  std::uint64_t lower_bound = 0;  // proven: no placement is lower
  std::uint64_t load = 0;
  std::size_t buffers = 0;        // those that occupy space
  bool optimal = false;           // height == lower_bound
  bool fits = false;              // height <= the problem's capacity
  bool infeasible = false;        // proven: no placement fits the capacity
  std::string found_by;           // the heuristic, or "search"
  std::string heuristic_best;     // the best heuristic's name
  std::uint64_t heuristic_height = 0;
  std::uint64_t search_nodes = 0;
  double seconds = 0;
  double seconds_to_fit = -1;     // when the first placement within the capacity was found
  double seconds_to_best = 0;     // when the reported placement was found
};

// The step between heights: offsets are sums of sizes, rounded up to alignments. An
// alignment that divides the step changes nothing, nor one that the step divides (a multiple
// of it rounded up to it is one still); any other shrinks the step to their common divisor.
[[nodiscard]] inline std::uint64_t granule(problem const& p)
{
  std::uint64_t g = 0;
  for (buffer const& b : p.buffers)
    if (occupies_space(b)) g = std::gcd(g, b.size);
  for (bool changed = g != 0; changed;) {
    changed = false;
    for (buffer const& b : p.buffers)
      if (occupies_space(b) && g % b.alignment != 0 && b.alignment % g != 0) {
        g = std::gcd(g, b.alignment);
        changed = true;
      }
  }
  return g == 0 ? 1 : g;
}

[[nodiscard]] inline plan_result plan(problem const& p, plan_options const& options = {})
{
  auto const start = clock::now();
  auto const deadline = start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(options.time_limit_seconds));
  auto const since_start = [&] { return std::chrono::duration<double>(clock::now() - start).count(); };
  for (std::size_t i = 0; i < p.buffers.size(); ++i) {
    std::uint64_t const a = p.buffers[i].alignment;
    if (a == 0 || (a & (a - 1)) != 0)
      throw std::invalid_argument("buffer " + std::to_string(i) + ": alignment " + std::to_string(a) + " is not a power of two");
    if (p.buffers[i].lower > p.buffers[i].upper)
      throw std::invalid_argument("buffer " + std::to_string(i) + ": its lifetime ends before it starts");
  }
  plan_result r;
  r.load = r.lower_bound = load(p);
  std::uint64_t const g = granule(p);
  problem unlimited = p;
  unlimited.capacity = no_capacity;
  auto const accept = [&](std::vector<std::uint64_t> offsets, std::string by) {
    if (auto const error = placement_error(unlimited, offsets))
      throw std::logic_error("the planner's " + by + " placement is invalid: " + *error);
    std::uint64_t const height = placement_height(p, offsets);
    if (!r.offsets.empty() && height >= r.height) return;
    r.offsets = std::move(offsets);
    r.height = height;
    r.found_by = std::move(by);
    r.seconds_to_best = since_start();
    if (height <= p.capacity && r.seconds_to_fit < 0) r.seconds_to_fit = r.seconds_to_best;
  };

  detail::sections const sec(p);
  for (buffer const& b : p.buffers) r.buffers += occupies_space(b);
  bool const large = r.buffers > options.search_buffer_limit;
  std::vector<std::uint64_t> size_first;  // the reorder search's first construction, made here
  // Above the limit, greedy first fit by size runs second, with all the time left: it is the
  // reorder search's first construction, and the portfolio's usual best.
  std::vector<heuristic> heuristics(std::begin(portfolio), std::end(portfolio));
  auto const is_size_first = [](heuristic const& h) { return h.order == buffer_order::size && h.gap == gap_choice::first; };
  if (large) std::stable_partition(heuristics.begin() + 1, heuristics.end(), is_size_first);
  for (heuristic const& h : heuristics) {
    if (!r.offsets.empty() && (r.height == r.lower_bound || clock::now() > deadline)) break;  // optimal, or out of time
    // The ordered heuristics cost up to O(n^2) on long-lived buffers: each gets at most a
    // quarter of the time left, so that the search keeps some.
    auto const until = large && is_size_first(h) ? deadline : clock::now() + (deadline - clock::now()) / 4;
    if (auto offsets = greedy_placement(p, sec, h, until)) {
      if (large && is_size_first(h)) size_first = *offsets;
      std::uint64_t const before = r.offsets.empty() ? no_capacity : r.height;
      accept(std::move(*offsets), std::string(h.name));
      if (r.height < before) {
        r.heuristic_best = h.name;
        r.heuristic_height = r.height;
      }
    }
  }

  if (r.height > r.lower_bound && large) {
    std::vector<std::uint64_t> offsets = r.offsets;
    reorder_result const s = reorder_search(p, sec, offsets, std::move(size_first), r.lower_bound, deadline, options.node_budget);
    r.search_nodes += s.nodes;
    if (s.improved) {
      accept(std::move(offsets), "search/reorder");
      r.seconds_to_best = std::chrono::duration<double>(s.found_at - start).count();
      if (r.height <= p.capacity) r.seconds_to_fit = std::min(r.seconds_to_fit, r.seconds_to_best);
    }
  }
  if (r.height > r.lower_bound && !large) {
    exact_search search(p);
    auto const left = [&] { return deadline - clock::now(); };
    // Whether the search answered (found, or proved infeasible) by `until`.
    auto const try_height = [&](std::uint64_t height, clock::time_point until, char const* by) {
      search_result s = search.within(height, until, options.node_budget - std::min(options.node_budget, r.search_nodes));
      r.search_nodes += s.nodes;
      if (s.outcome == search_outcome::found) accept(std::move(s.offsets), by);
      else if (s.outcome == search_outcome::infeasible) r.lower_bound = std::max(r.lower_bound, height + g);
      return s.outcome != search_outcome::out_of_time;
    };
    // The search's first placement under no limit is a heuristic of its own, usually the
    // lowest of them all.
    (void)try_height(no_capacity, clock::now() + left() / 8, "search/dive");
    // A capacity is what the user needs: it gets all the time left.
    if (p.capacity < r.height && p.capacity >= r.lower_bound && try_height(p.capacity, deadline, "search") &&
        r.lower_bound > p.capacity)
      r.infeasible = true;
    // LOAD (where most instances' optimum lies), then heights between the bounds: halfway
    // first, nearer the best found after a height that ran out of time.
    if (!r.infeasible && r.height > r.lower_bound) (void)try_height(r.lower_bound, clock::now() + left() / 4, "search");
    auto const granules = [&](std::uint64_t bytes) { return bytes / g * g; };
    std::uint64_t step = std::max(g, granules((r.height - r.lower_bound) / 2));
    while (!r.infeasible && r.height > r.lower_bound && left() > clock::duration::zero()) {
      step = std::min(step, r.height - r.lower_bound);
      bool const last = step == g;
      if (try_height(r.height - step, last ? deadline : clock::now() + left() / 4, "search")) step = std::max(g, granules((r.height - r.lower_bound) / 2));
      else if (last) break;
      else step = std::max(g, granules(step / 2));
    }
  }
  if (p.capacity < r.lower_bound) r.infeasible = true;
  r.optimal = r.height == r.lower_bound;
  r.fits = r.height <= p.capacity;
  r.seconds = since_start();
  return r;
}

}  // namespace fraglab::offline
