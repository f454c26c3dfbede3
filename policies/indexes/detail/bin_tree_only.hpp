// A bin kept as its (size, address) tree alone: bin_address_bitmaps' interface, with no
// state and nothing to test, for bins whose sizes get no bitmaps (fine_bins_index.hpp).
// Each call is the tree's own operation, so a bin costs its tree's header and no more.
#pragma once

#include <fraglab/policies/indexes/size_address_order.hpp>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>

namespace fraglab::detail {

template <class Chunk, class Tree>
struct bin_tree_only {
  static constexpr unsigned max_sizes = 64;

  bin_tree_only(std::size_t /*least*/, std::size_t /*step*/, unsigned /*count*/, std::size_t /*from*/) noexcept {}

  [[nodiscard]] static bool in_use() noexcept { return false; }
  [[nodiscard]] static bool empty(Tree const& tree) noexcept { return tree.empty(); }
  static void insert(Tree& tree, Chunk& c) noexcept { tree.insert(c); }
  static void erase(Tree& tree, Chunk& c, std::size_t /*indexed_size*/) noexcept { tree.erase(tree.iterator_to(c)); }
  static bool exchange_in_place(Tree& tree, Chunk& old, std::size_t old_size, Chunk& fresh) noexcept
  {
    return detail::exchange_in_place(tree, old, old_size, fresh);
  }
  static Chunk* lower_bound(Tree& tree, std::size_t n, std::uint64_t* steps) noexcept { return lower_bound_in_bin(tree, n, steps); }
  static Chunk* first(Tree& tree) noexcept { return tree.empty() ? nullptr : &*tree.begin(); }
  static Chunk* next(Tree& tree, Chunk& c) noexcept
  {
    auto const it = std::next(tree.iterator_to(c));
    return it == tree.end() ? nullptr : &*it;
  }
  static Chunk* largest(Tree& tree, std::uint64_t* steps) noexcept
  {
    return tree.empty() ? nullptr : lower_bound_in_bin(tree, std::prev(tree.end())->size, steps);
  }
  [[nodiscard]] static bool contains(Tree const& tree, Chunk const& c)
  {
    auto const it = tree.find(size_address_key{c.size, c.address}, size_address_less{});
    return it != tree.end() && &*it == &c;
  }
  template <class F>
  static void for_each(Tree const& tree, F&& f)
  {
    for (auto const& c : tree) f(c);
  }
  [[nodiscard]] static std::string check(Tree const& /*tree*/) { return {}; }  // the tree orders itself
};

}  // namespace fraglab::detail
