// One red-black tree of free chunks keyed by (size, address) (Boost.Intrusive).
//
// Best fit is the lower bound of (n, 0): the smallest chunk that fits, lowest address on
// ties; worst fit is the largest chunk, again lowest address on ties. O(log n) for every
// operation. This is the structure behind PyTorch's per-pool std::set<Block*> and a
// degenerate (one-bin) TF BFC.
#pragma once

#include "policies/indexes/size_address_order.hpp"

#include <boost/intrusive/set.hpp>

#include <cstdint>
#include <iterator>
#include <string>

namespace fraglab {

struct tree_index {
  static constexpr const char* name = "tree";
  struct params {};

  template <class Chunk>
  using hook = boost::intrusive::set_member_hook<boost::intrusive::link_mode<boost::intrusive::normal_link>>;

  template <class Chunk>
  class index {
    using set_type = boost::intrusive::multiset<
        Chunk, boost::intrusive::member_hook<Chunk, hook<Chunk>, &Chunk::free_hook>,
        boost::intrusive::compare<detail::size_address_less>>;

   public:
    explicit index(params const& = {}) {}
    index(index&&) = default;
    ~index() { set_.clear(); }

    void insert(Chunk& c) { set_.insert(c); }
    void erase(Chunk& c) noexcept { set_.erase(set_.iterator_to(c)); }

    // fresh enters and old (indexed when it had size old_size) leaves, in one step: fresh
    // takes old's node where its key falls in old's place (`keyed_in_place_index`).
    void exchange(Chunk& old, std::size_t old_size, Chunk& fresh) noexcept
    {
      auto const it = set_.iterator_to(old);
      detail::size_address_key const was{old_size, old.address};
      if (detail::fits_between_neighbours(set_, it, was, detail::size_address_less::key(fresh))) {
        if (&old != &fresh) set_.replace_node(it, fresh);
        return;
      }
      set_.erase(it);
      set_.insert(fresh);
    }

    [[nodiscard]] std::size_t size() const noexcept { return set_.size(); }
    [[nodiscard]] std::uint64_t steps() const noexcept { return steps_; }

    Chunk* find_best(std::size_t n)
    {
      auto it = set_.lower_bound(detail::size_address_key{n, 0}, detail::size_address_less{&steps_});
      return it == set_.end() ? nullptr : &*it;
    }

    // The chunk after c in (size, address) order, or null.
    Chunk* successor(Chunk& c)
    {
      ++steps_;
      auto it = std::next(set_.iterator_to(c));
      return it == set_.end() ? nullptr : &*it;
    }

    // The largest chunk, lowest address among equals.
    Chunk* largest()
    {
      if (set_.empty()) return nullptr;
      std::size_t const top = std::prev(set_.end())->size;
      return &*set_.lower_bound(detail::size_address_key{top, 0}, detail::size_address_less{&steps_});
    }

    [[nodiscard]] bool contains(Chunk const& c) const
    {
      auto it = set_.find(detail::size_address_key{c.size, c.address}, detail::size_address_less{});
      return it != set_.end() && &*it == &c;
    }

    [[nodiscard]] std::string check() const { return {}; }  // ordering is the tree's own invariant

    template <class F>
    void for_each(F&& f) const
    {
      for (auto const& c : set_) f(c);
    }

   private:
    set_type set_;
    std::uint64_t steps_ = 0;
  };
};

}  // namespace fraglab
