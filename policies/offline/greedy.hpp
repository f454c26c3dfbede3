// Greedy placements: the fast heuristics of the planner's portfolio (planner.hpp keeps the
// lowest).
//
// | heuristic          | order of placement            | where                                   |
// |--------------------|-------------------------------|-----------------------------------------|
// | size/best          | largest first                 | smallest gap that fits, else on top      |
// | size/first         | largest first                 | lowest gap that fits                     |
// | lifetime/best      | longest-lived first           | smallest gap that fits                   |
// | area/best          | largest size x lifetime first | smallest gap that fits                   |
// | start/best         | in time (an online allocator) | smallest free range at that time         |
// | start/first        | in time                       | lowest free range at that time           |
//
// Greedy by size with best fit is TFLite's arena planner (Lee et al., "On-device neural net
// inference with mobile GPUs", 2019, section 3.2); by lifetime and by area follow Pisarchyk &
// Lee, "Efficient memory management for deep neural net inference" (2020); in time is what an
// online best- or first-fit allocator with unbounded memory would do (Wilson et al. 1995).
// The ordered ones find a buffer's neighbours through a segment tree over time; the timed
// ones keep only the free ranges, in O(live) memory. Best fit in time looks up the smallest
// range that fits, O(n log n) whatever the trace, and always runs to the end: it is the
// portfolio's guaranteed placement. First fit scans the ranges from the lowest, and like the
// ordered ones gives up at the deadline.
#pragma once

#include <fraglab/policies/offline/detail/sections.hpp>
#include <fraglab/policies/offline/detail/span_tree.hpp>
#include <fraglab/policies/offline/problem.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

namespace fraglab::offline {

enum class buffer_order { size, lifetime, area, start };
enum class gap_choice { best, first };

struct heuristic {
  std::string_view name;
  buffer_order order;
  gap_choice gap;
};

// Cheapest first; the first always completes.
inline constexpr heuristic portfolio[] = {
    {"start/best", buffer_order::start, gap_choice::best},  {"start/first", buffer_order::start, gap_choice::first},
    {"size/best", buffer_order::size, gap_choice::best},    {"size/first", buffer_order::size, gap_choice::first},
    {"lifetime/best", buffer_order::lifetime, gap_choice::best}, {"area/best", buffer_order::area, gap_choice::best},
};

using clock = std::chrono::steady_clock;

namespace detail {

// Place in time: free ranges below the top kept by offset and by (size, offset).
inline std::optional<std::vector<std::uint64_t>> place_in_time(problem const& p, gap_choice gap, clock::time_point deadline)
{
  std::vector<std::uint64_t> offsets(p.buffers.size(), 0);
  struct step { std::uint64_t time; bool starts; std::uint32_t buffer; };
  std::vector<step> steps;
  for (std::uint32_t i = 0; i < p.buffers.size(); ++i)
    if (occupies_space(p.buffers[i])) {
      steps.push_back({p.buffers[i].lower, true, i});
      steps.push_back({p.buffers[i].upper, false, i});
    }
  std::sort(steps.begin(), steps.end(), [](step const& a, step const& b) {
    return a.time != b.time ? a.time < b.time : (a.starts != b.starts ? !a.starts : a.buffer < b.buffer);
  });
  std::map<std::uint64_t, std::uint64_t> by_offset;             // free range: offset -> size
  std::set<std::pair<std::uint64_t, std::uint64_t>> by_size;     // (size, offset)
  std::uint64_t top = 0;
  std::uint64_t scanned = 0, next_clock_read = 0;  // first fit's ranges looked at, for the clock
  auto const take = [&](std::map<std::uint64_t, std::uint64_t>::iterator r) {
    by_size.erase({r->second, r->first});
    return by_offset.erase(r);
  };
  auto const add = [&](std::uint64_t at, std::uint64_t size) {
    if (size == 0) return;
    by_offset.emplace(at, size);
    by_size.emplace(size, at);
  };
  for (step const& s : steps) {
    buffer const& b = p.buffers[s.buffer];
    if (!s.starts) {
      std::uint64_t at = offsets[s.buffer], size = b.size;
      auto next = by_offset.lower_bound(at);
      if (next != by_offset.begin()) {
        auto const prev = std::prev(next);
        if (prev->first + prev->second == at) {
          at = prev->first;
          size += prev->second;
          next = take(prev);
        }
      }
      if (next != by_offset.end() && next->first == at + size) {
        size += next->second;
        take(next);
      }
      if (at + size == top) top = at;  // the free range at the top lowers it
      else add(at, size);
      continue;
    }
    // The range that fits with the buffer's alignment, best or first; else the top.
    std::optional<std::pair<std::uint64_t, std::uint64_t>> chosen;  // (range offset, range size)
    if (gap == gap_choice::best) {
      for (auto r = by_size.lower_bound({b.size, 0}); r != by_size.end(); ++r)
        if (align_up(r->second, b.alignment) + b.size <= r->second + r->first) {
          chosen = std::pair{r->second, r->first};
          break;
        }
    } else {
      for (auto const& [at, size] : by_offset) {
        if (++scanned >= next_clock_read) {
          next_clock_read = scanned + (1u << 16);
          if (clock::now() > deadline) return std::nullopt;
        }
        if (align_up(at, b.alignment) + b.size <= at + size) {
          chosen = std::pair{at, size};
          break;
        }
      }
    }
    if (!chosen) {
      std::uint64_t const at = align_up(top, b.alignment);
      add(top, at - top);
      offsets[s.buffer] = at;
      top = at + b.size;
      continue;
    }
    auto const [range, size] = *chosen;
    take(by_offset.find(range));
    std::uint64_t const at = align_up(range, b.alignment);
    offsets[s.buffer] = at;
    add(range, at - range);
    add(at + b.size, range + size - at - b.size);
  }
  return offsets;
}

// Where buffer b goes among `below`, the (offset, end) of the placed buffers it meets (sorted
// here): the lowest gap that holds it (first) or the smallest (best), else above them all.
[[nodiscard]] inline std::uint64_t gap_offset(std::vector<std::pair<std::uint64_t, std::uint64_t>>& below, buffer const& b,
                                              gap_choice gap)
{
  std::sort(below.begin(), below.end());
  std::uint64_t cursor = 0, chosen = no_capacity, chosen_gap = no_capacity;
  for (auto const& [at, end] : below) {
    std::uint64_t const start = align_up(cursor, b.alignment);
    if (at > cursor && start + b.size <= at && at - cursor < chosen_gap) {
      chosen = start;
      chosen_gap = at - cursor;
      if (gap == gap_choice::first) break;
    }
    cursor = std::max(cursor, end);
  }
  return chosen != no_capacity ? chosen : align_up(cursor, b.alignment);
}

// Place in the order given, each buffer in a gap among the placed ones it meets in time.
inline std::optional<std::vector<std::uint64_t>> place_in_order(problem const& p, sections const& sec,
                                                                std::vector<std::uint32_t> const& todo, gap_choice gap,
                                                                clock::time_point deadline)
{
  std::vector<std::uint64_t> offsets(p.buffers.size(), 0);
  span_tree placed(sec.count);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> below;  // (offset, end) of the placed buffers met
  // The clock is read every 2^16 neighbours looked at: a long-lived buffer meets thousands.
  std::uint64_t work = 0, next_clock_read = 0;
  for (std::uint32_t i : todo) {
    if (work >= next_clock_read) {
      next_clock_read = work + (1u << 16);
      if (clock::now() > deadline) return std::nullopt;
    }
    work += 1 + below.size();
    buffer const& b = p.buffers[i];
    below.clear();
    placed.for_each_meeting(sec.first[i], sec.last[i], [&](std::uint32_t j) { below.emplace_back(offsets[j], offsets[j] + p.buffers[j].size); });
    offsets[i] = gap_offset(below, b, gap);
    placed.insert(i, sec.first[i], sec.last[i]);
  }
  return offsets;
}

// The buffers that occupy space, largest key first (ties: earliest first).
inline std::vector<std::uint32_t> ranked(problem const& p, buffer_order order)
{
  std::vector<std::uint32_t> todo;
  for (std::uint32_t i = 0; i < p.buffers.size(); ++i)
    if (occupies_space(p.buffers[i])) todo.push_back(i);
  auto const key = [&](std::uint32_t i) -> area_type {
    buffer const& b = p.buffers[i];
    switch (order) {
      case buffer_order::size: return b.size;
      case buffer_order::lifetime: return b.upper - b.lower;
      case buffer_order::area: return area(b);
      case buffer_order::start: break;
    }
    return 0;
  };
  std::stable_sort(todo.begin(), todo.end(), [&](std::uint32_t a, std::uint32_t b) {
    auto const ka = key(a), kb = key(b);
    return ka != kb ? ka > kb : p.buffers[a].lower < p.buffers[b].lower;
  });
  return todo;
}

}  // namespace detail

// The heuristic's placement, or nothing if the deadline passed first.
[[nodiscard]] inline std::optional<std::vector<std::uint64_t>> greedy_placement(problem const& p, detail::sections const& sec,
                                                                                heuristic h, clock::time_point deadline)
{
  if (h.order == buffer_order::start) return detail::place_in_time(p, h.gap, deadline);
  return detail::place_in_order(p, sec, detail::ranked(p, h.order), h.gap, deadline);
}

}  // namespace fraglab::offline
