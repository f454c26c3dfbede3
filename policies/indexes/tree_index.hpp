// One red-black tree of free chunks keyed by (size, address) (Boost.Intrusive).
//
// Best fit is the lower bound of (n, 0): the smallest chunk that fits, lowest address on
// ties; worst fit is the largest chunk, again lowest address on ties. O(log n) for every
// operation. This is the structure behind PyTorch's per-pool std::set<Block*> and a
// degenerate (one-bin) TF BFC.
//
// The chunks of the least size (the smallest chunk the size rule makes; the registry sets
// it) come first in that order and are ordered by address alone; while there are many they
// live in an address bitmap instead of the tree (detail/least_size_front.hpp), where an
// insert costs no descent. The order, and so every decision, is the same either way.
#pragma once

#include <fraglab/policies/indexes/detail/least_size_front.hpp>
#include <fraglab/policies/indexes/size_address_order.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace fraglab {

struct tree_index_params {
  std::size_t least_size = 16;  // the classic presets' smallest chunk (quantum and min_size 16)
  // The chunks of the least size move to an address bitmap at this many (0: never).
  std::size_t address_bitmap_from = 64;
};

struct tree_index {
  static constexpr const char* name = "tree";
  using params = tree_index_params;

  template <class Chunk>
  using hook = detail::size_address_hook;

  template <class Chunk>
  class index {
    using set_type = detail::size_address_set<Chunk>;

   public:
    explicit index(params const& p = {}) : front_(p.least_size, p.address_bitmap_from)
    {
      if (p.least_size == 0) throw std::invalid_argument("least_size must be at least 1");
    }
    index(index&&) = default;
    ~index() { set_.clear(); }

    void insert(Chunk& c) { front_.insert(set_, c); }
    void erase(Chunk& c) noexcept { front_.erase(set_, c, c.size); }

    // fresh enters and old (indexed when it had size old_size) leaves, in one step: fresh
    // takes old's node where its key falls in old's place (`keyed_in_place_index`).
    void exchange(Chunk& old, std::size_t old_size, Chunk& fresh) noexcept
    {
      if (front_.exchange_in_place(set_, old, old_size, fresh)) return;
      front_.erase(set_, old, old_size);
      front_.insert(set_, fresh);
    }

    [[nodiscard]] std::size_t size() const noexcept { return front_.size(set_); }
    [[nodiscard]] std::uint64_t steps() const noexcept { return steps_; }
    // Whether the chunks of the least size are in their address bitmap now (for tests).
    [[nodiscard]] bool least_size_in_bitmap() const noexcept { return front_.in_bitmap(); }

    Chunk* find_best(std::size_t n) { return front_.lower_bound(set_, n, &steps_); }

    // The chunk after c in (size, address) order, or null.
    Chunk* successor(Chunk& c)
    {
      ++steps_;
      return front_.next(set_, c);
    }

    // The largest chunk, lowest address among equals.
    Chunk* largest() { return front_.largest(set_, &steps_); }

    [[nodiscard]] bool contains(Chunk const& c) const { return front_.contains(set_, c); }

    [[nodiscard]] std::string check() const { return front_.check(set_); }  // the tree orders itself

    template <class F>
    void for_each(F&& f) const
    {
      front_.for_each(set_, f);
    }

   private:
    set_type set_;
    detail::least_size_front<Chunk, set_type> front_;
    std::uint64_t steps_ = 0;
  };
};

}  // namespace fraglab
