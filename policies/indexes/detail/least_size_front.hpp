// The front of a (size, address)-ordered tree of free chunks: its chunks of one least size,
// which move to an address bitmap (unit_address_set) while there are many of them.
//
// Why: in the (size, address) order the chunks of the least size come first and, having one
// size, are ordered by their addresses alone. Where a program frees many small blocks they
// are most of the tree (best_fit on perl: 3.9 million of 4.4 million descents insert a
// 16-byte chunk, into a tree of thousands), and every insert descends a path of records
// scattered in memory. In the bitmap an insert or an erase writes a pointer and a few words,
// and the best fit for a request of at most the least size is the lowest address, four
// count-trailing-zeros away (docs/performance.md, "best_fit: fine bins behind the least
// size").
//
// The invariant: while the bitmap is in use it holds every indexed chunk of the least size,
// and the tree holds only larger chunks, so the order is the bitmap's, then the tree's. The
// chunks move to the bitmap when the tree holds `from` of the least size and none smaller;
// back to the tree when the bitmap falls under a quarter of that (each move costs O(n) and
// comes at most once per 3n/4 operations), or at once when a smaller chunk arrives (where
// the least size is not the smallest chunk the size rule makes). Short fronts stay in the
// tree, whose few nodes are in the cache where the bitmap's words would not be.
//
// The owner keeps the tree and passes it to every call, so that TF's bins can keep bin 0's
// tree in the array of their other bins.
#pragma once

#include <fraglab/engine/detail/hot_cold.hpp>
#include <fraglab/policies/indexes/detail/unit_address_set.hpp>
#include <fraglab/policies/indexes/size_address_order.hpp>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>

namespace fraglab::detail {

template <class Chunk, class Tree>
class least_size_front {
 public:
  // from == 0: never use the bitmap.
  least_size_front(std::size_t least_size, std::size_t from) noexcept
      : least_(least_size), from_(from), next_try_(from), bitmap_(least_size)
  {
  }
  least_size_front(least_size_front&&) noexcept = default;

  [[nodiscard]] bool in_bitmap() const noexcept { return active_; }
  [[nodiscard]] std::size_t least_size() const noexcept { return least_; }
  [[nodiscard]] std::size_t size(Tree const& tree) const noexcept { return tree.size() + bitmap_.size(); }
  [[nodiscard]] bool empty(Tree const& tree) const noexcept { return tree.empty() && bitmap_.empty(); }

  void insert(Tree& tree, Chunk& c) noexcept
  {
    if (active_) {
      if (c.size > least_) {
        tree.insert(c);
        return;
      }
      if (c.size < least_) {
        to_tree(tree);
      } else {
        if (bitmap_.try_insert(c)) return;
        to_tree(tree);  // out of memory for a window: not again before twice as many
        next_try_ = 2 * (least_in_tree_ + 1);
      }
    }
    tree.insert(c);
    if (c.size == least_ && ++least_in_tree_ >= next_try_ && from_ != 0) to_bitmap(tree);
  }

  // c, indexed when it had size `indexed_size`, leaves.
  void erase(Tree& tree, Chunk& c, std::size_t indexed_size) noexcept
  {
    if (indexed_size == least_) {
      if (active_) {
        bitmap_.erase(c);
        if (bitmap_.size() < from_ / 4) to_tree(tree);
        return;
      }
      --least_in_tree_;
    }
    tree.erase(tree.iterator_to(c));
  }

  // fresh takes the node of old (indexed with old_size) where its key falls in old's place
  // and neither of them is the bitmap's; false, with nothing changed, otherwise.
  bool exchange_in_place(Tree& tree, Chunk& old, std::size_t old_size, Chunk& fresh) noexcept
  {
    if (active_ && (old_size == least_ || fresh.size <= least_)) return false;
    if (!detail::exchange_in_place(tree, old, old_size, fresh)) return false;
    least_in_tree_ += static_cast<std::size_t>(fresh.size == least_) - static_cast<std::size_t>(old_size == least_);
    return true;
  }

  // The first chunk of size >= n in the order, or null; `steps` counts the tree's
  // comparisons, or one for an answer from the bitmap.
  Chunk* lower_bound(Tree& tree, std::size_t n, std::uint64_t* steps) noexcept
  {
    if (active_ && n <= least_ && !bitmap_.empty()) {
      ++*steps;
      return bitmap_.first();
    }
    auto const it = tree.lower_bound(size_address_key{n, 0}, size_address_less{steps});
    return it == tree.end() ? nullptr : &*it;
  }

  // The chunk after c in the order, or null.
  Chunk* next(Tree& tree, Chunk& c) noexcept
  {
    if (holds(c)) {
      if (Chunk* after = bitmap_.next(c)) return after;
      return tree.empty() ? nullptr : &*tree.begin();
    }
    auto const it = std::next(tree.iterator_to(c));
    return it == tree.end() ? nullptr : &*it;
  }

  // The largest chunk, lowest address among equals, or null.
  Chunk* largest(Tree& tree, std::uint64_t* steps) noexcept
  {
    if (tree.empty()) return lower_bound(tree, least_, steps);
    return lower_bound(tree, std::prev(tree.end())->size, steps);
  }

  [[nodiscard]] bool contains(Tree const& tree, Chunk const& c) const
  {
    if (holds(c)) return bitmap_.contains(c);
    auto const it = tree.find(size_address_key{c.size, c.address}, size_address_less{});
    return it != tree.end() && &*it == &c;
  }

  template <class F>
  void for_each(Tree const& tree, F&& f) const
  {
    if (active_) bitmap_.for_each(f);
    for (auto const& c : tree) f(c);
  }

  // Empty, or what is broken.
  [[nodiscard]] std::string check(Tree const& tree) const
  {
    std::size_t least_here = 0;
    for (auto const& c : tree) least_here += c.size == least_ ? 1 : 0;
    if (least_here != least_in_tree_) return "the count of least-size chunks in the tree is off";
    if (!active_) return bitmap_.empty() ? std::string{} : "an address bitmap not in use holds chunks";
    if (!tree.empty() && tree.begin()->size <= least_)
      return "a chunk of size " + std::to_string(tree.begin()->size) + " in the tree beside the address bitmap of " +
             std::to_string(least_);
    return bitmap_.check();
  }

 private:
  // Whether c, indexed, is in the bitmap.
  [[nodiscard]] bool holds(Chunk const& c) const noexcept { return active_ && c.size == least_; }

  // The tree's chunks of the least size (its front, by its order) move to the bitmap if
  // none is smaller and every window they need can be had.
  FRAGLAB_COLD void to_bitmap(Tree& tree) noexcept
  {
    if (tree.begin()->size != least_) return;
    active_ = true;
    for (auto it = tree.begin(); it != tree.end() && it->size == least_;) {
      Chunk& c = *it;
      it = tree.erase(it);
      if (!bitmap_.try_insert(c)) {  // out of memory: back, and not again before twice as many
        tree.insert(c);
        to_tree(tree);
        next_try_ = 2 * least_in_tree_;
        return;
      }
      --least_in_tree_;
    }
  }

  // Back to the tree's front, in address order, so that each insert goes before the rest.
  FRAGLAB_COLD void to_tree(Tree& tree) noexcept
  {
    auto const rest = tree.begin();
    least_in_tree_ += bitmap_.size();
    while (Chunk* c = bitmap_.first()) {
      bitmap_.erase(*c);
      tree.insert(rest, *c);
    }
    active_ = false;
    next_try_ = from_;
  }

  std::size_t least_;
  std::size_t from_;
  std::size_t next_try_;           // least_in_tree_ at which to_bitmap is tried
  std::size_t least_in_tree_ = 0;  // chunks of the least size in the tree
  bool active_ = false;
  unit_address_set<Chunk> bitmap_;
};

}  // namespace fraglab::detail
