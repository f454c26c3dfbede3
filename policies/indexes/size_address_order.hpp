// The (size, address) order shared by the tree and the bins: the order TF's BFC keeps
// in each bin and PyTorch's caching allocator keeps in each pool (there prefixed by the
// stream, which fraglab expresses as one pool per stream). Lower bound on (n, 0) is the
// best fit, lowest address on ties.
#pragma once

#include <boost/intrusive/set.hpp>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <utility>

namespace fraglab::detail {

struct size_address_key {
  std::size_t size;
  std::uintptr_t address;
};

// Counts comparisons so that an index can report how many nodes a search visited.
struct size_address_less {
  std::uint64_t* counter = nullptr;

  template <class C>
  static size_address_key key(C const& c) noexcept { return {c.size, c.address}; }
  static size_address_key key(size_address_key k) noexcept { return k; }

  template <class A, class B>
  bool operator()(A const& a, B const& b) const noexcept
  {
    if (counter != nullptr) ++*counter;
    auto const ka = key(a);
    auto const kb = key(b);
    // Bitwise, not short-circuit: a branch here would be mispredicted on random sizes.
    return (ka.size < kb.size) | ((ka.size == kb.size) & (ka.address < kb.address));
  }
};

// A chunk's hook, and the red-black tree of chunks in this order (Boost.Intrusive), for the
// indexes that keep one: tree_index's single tree and each of basic_bins_index's bins.
using size_address_hook = boost::intrusive::set_member_hook<boost::intrusive::link_mode<boost::intrusive::normal_link>>;
template <class Chunk>
using size_address_set = boost::intrusive::multiset<Chunk, boost::intrusive::member_hook<Chunk, size_address_hook, &Chunk::free_hook>,
                                                    boost::intrusive::compare<size_address_less>>;

// Whether the key `to` belongs where `it` sits in `set`, whose node is ordered by the key
// `from`: strictly between the node's neighbours, so that a chunk with that key may take the
// node (Boost's replace_node) without a descent or a rebalancing. Only the neighbour on
// the side the key moves towards can be passed, so only that one is read.
template <class Set>
bool fits_between_neighbours(Set& set, typename Set::iterator it, size_address_key from, size_address_key to) noexcept
{
  size_address_less const less;
  if (less(to, from)) return it == set.begin() || less(*std::prev(it), to);
  auto const after = std::next(it);
  return after == set.end() || less(to, *after);
}

// The first chunk of size >= n in a bin's tree, or null; `steps` counts one, and the
// comparisons of a descent. The tree's header holds its least and its greatest chunk: where
// the least fits, or the greatest does not, the answer needs no descent. In a bin of a quarter
// of a doubling (fine_bins_index) one of the two holds for most requests (docs/performance.md,
// "best_fit: fine bins behind the least size"). In one tree of every size the least rarely
// fits, so tree_index descends at once.
template <class Set>
auto* lower_bound_in_bin(Set& set, std::size_t n, std::uint64_t* steps) noexcept
{
  using chunk = typename Set::value_type;
  if (set.empty()) return static_cast<chunk*>(nullptr);
  ++*steps;
  if (chunk& least = *set.begin(); least.size >= n) return &least;
  if (std::prev(set.end())->size < n) return static_cast<chunk*>(nullptr);
  return &*set.lower_bound(size_address_key{n, 0}, size_address_less{steps});
}

// fresh takes the node of old (ordered by old_size) without a descent where its key falls in
// old's place; false, with nothing changed, where it does not.
template <class Set, class Chunk>
bool exchange_in_place(Set& set, Chunk& old, std::size_t old_size, Chunk& fresh) noexcept
{
  auto const it = set.iterator_to(old);
  if (!fits_between_neighbours(set, it, size_address_key{old_size, old.address}, size_address_less::key(fresh))) return false;
  if (&old != &fresh) set.replace_node(it, fresh);
  return true;
}

}  // namespace fraglab::detail
