// Which buffers meet in time, for the greedy placements and the exact search.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace fraglab::offline::detail {

// The buffers whose spans meet, found with a static segment tree over the sections: a
// buffer is stored at the O(log S) nodes that tile its span, and a query visits the nodes
// its span meets, skipping subtrees that hold nothing, so it costs O(log S + k·log S) for k
// buffers reported, whatever the others' spans (de Berg et al., Computational Geometry,
// section 10.3).
class span_tree {
public:
  explicit span_tree(std::size_t section_count)
  {
    while (leaves_ < section_count) leaves_ *= 2;
    nodes_.resize(2 * leaves_);
    holds_.assign(2 * leaves_, false);
  }

  void insert(std::uint32_t item, std::uint32_t first, std::uint32_t last)
  {
    insert(1, 0, leaves_, item, first, last);
    if (seen_.size() <= item) seen_.resize(item + 1, 0);
  }

  // Calls f(item) once for every inserted item whose span meets [first, last).
  template <class F>
  void for_each_meeting(std::uint32_t first, std::uint32_t last, F&& f)
  {
    if (++stamp_ == 0) {
      std::fill(seen_.begin(), seen_.end(), 0);
      stamp_ = 1;
    }
    visit(1, 0, leaves_, first, last, f);
  }

private:
  std::size_t leaves_ = 1;
  std::vector<std::vector<std::uint32_t>> nodes_;
  std::vector<bool> holds_;  // the subtree holds an item
  std::vector<std::uint32_t> seen_;
  std::uint32_t stamp_ = 0;

  void insert(std::size_t node, std::size_t lo, std::size_t hi, std::uint32_t item, std::uint32_t first, std::uint32_t last)
  {
    if (last <= lo || hi <= first) return;
    holds_[node] = true;
    if (first <= lo && hi <= last) {
      nodes_[node].push_back(item);
      return;
    }
    std::size_t const mid = (lo + hi) / 2;
    insert(2 * node, lo, mid, item, first, last);
    insert(2 * node + 1, mid, hi, item, first, last);
  }

  template <class F>
  void visit(std::size_t node, std::size_t lo, std::size_t hi, std::uint32_t first, std::uint32_t last, F& f)
  {
    if (last <= lo || hi <= first || !holds_[node]) return;
    for (std::uint32_t item : nodes_[node])
      if (seen_[item] != stamp_) {
        seen_[item] = stamp_;
        f(item);
      }
    if (hi - lo == 1) return;
    std::size_t const mid = (lo + hi) / 2;
    visit(2 * node, lo, mid, first, last, f);
    visit(2 * node + 1, mid, hi, first, last, f);
  }
};

}  // namespace fraglab::offline::detail
