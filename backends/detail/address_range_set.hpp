// Disjoint ranges of an address space, kept maximal (ranges that touch are one), with the
// lowest that holds a size at an alignment found and carved first: the machinery of every
// backend that lays out addresses itself. simulated_backend and host_region_arena keep the
// ranges free for regions in one, and host_address_reservations the runs of pages mapped.
// Each keeps its own rule about where ranges come from and what becomes of them: the
// simulated space lowers its top when a free range reaches it, and the arena never merges
// the free ranges of two separately mapped spans.
//
// Lowest address first, as a driver reuses virtual addresses, and because a region's place
// is part of a policy's decisions (first fit and next fit choose among regions by address):
// the same calls give the same addresses on every machine. A std::map keyed by base and a
// scan from the lowest range: regions come and go seldom beside the blocks carved from them
// (perl's replay under first_fit acquires 6,757 regions and releases none), and merging
// keeps the ranges few.
//
//   expression                          result
//   s.take_first_fit(size, alignment)   optional<uintptr_t>: carved from the lowest range holding it
//   s.insert(base, size[, may_merge])   optional<range>: the maximal range it joined; nullopt on overlap
//   s.erase(base, size)                 bool: carved from the one range holding it whole
//   s.contains(base, size)              bool: one range holds it whole
//   s.overlaps(base, size)              bool: some range shares a byte with it
#pragma once

#include <fraglab/engine/detail/bits.hpp>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>

namespace fraglab::detail {

class address_range_set {
 public:
  struct range {
    std::uintptr_t base;
    std::size_t size;
    [[nodiscard]] std::uintptr_t end() const noexcept { return base + size; }
    friend bool operator==(range const&, range const&) = default;
  };

  // Whether two touching ranges, one ending where the other starts at `upper`, may be one.
  struct always_merge {
    constexpr bool operator()(std::uintptr_t, std::uintptr_t) const noexcept { return true; }
  };

  // The address of `size` bytes (not 0) at a multiple of `alignment` (a power of two) in the
  // lowest-addressed range that holds them, carved out of it; what the range has left on
  // either side stays. nullopt when no range holds them.
  std::optional<std::uintptr_t> take_first_fit(std::size_t size, std::size_t alignment)
  {
    for (auto it = ranges_.begin(); it != ranges_.end(); ++it) {
      auto const [base, n] = *it;
      std::uintptr_t const at = align_up_address(base, alignment);
      if (at < base || at - base > n || size > n - (at - base)) continue;  // at < base: wrapped
      carve(it, at, size);
      return at;
    }
    return std::nullopt;
  }

  // Adds [base, base + size), one with each range that touches it where
  // `may_merge(lower_base, upper_base)` allows, and returns the range it is now part of.
  // nullopt, and nothing changes, when it is empty, wraps, or overlaps a range: for a set of
  // free ranges, a range given back twice.
  template <class MayMerge = always_merge>
  std::optional<range> insert(std::uintptr_t base, std::size_t size, MayMerge may_merge = {})
  {
    if (size == 0 || base + size < base) return std::nullopt;
    auto next = ranges_.lower_bound(base);  // the one lookup: the overlap test, both merges and the insertion use it
    if (overlaps_around(next, base, size)) return std::nullopt;
    auto const prev = next == ranges_.begin() ? ranges_.end() : std::prev(next);
    if (next != ranges_.end() && next->first == base + size && may_merge(base, next->first)) {
      size += next->second;
      next = ranges_.erase(next);
    }
    if (prev != ranges_.end() && prev->first + prev->second == base && may_merge(prev->first, base)) {
      prev->second += size;
      return range{prev->first, prev->second};
    }
    ranges_.emplace_hint(next, base, size);
    return range{base, size};
  }

  // Takes [base, base + size) out of the one range that holds it whole; what that range has
  // left on either side stays. false, and nothing changes, where no range holds it whole.
  bool erase(std::uintptr_t base, std::size_t size)
  {
    auto const it = holder(base, size);
    if (it == ranges_.end()) return false;
    carve(it, base, size);
    return true;
  }

  [[nodiscard]] bool contains(std::uintptr_t base, std::size_t size) const { return holder(base, size) != ranges_.end(); }

  [[nodiscard]] bool overlaps(std::uintptr_t base, std::size_t size) const
  {
    return size != 0 && overlaps_around(ranges_.lower_bound(base), base, size);
  }

  [[nodiscard]] std::size_t count() const noexcept { return ranges_.size(); }
  template <class Visit>
  void for_each(Visit visit) const
  {
    for (auto const& [base, n] : ranges_) visit(range{base, n});
  }

 private:
  using map = std::map<std::uintptr_t, std::size_t>;  // base -> size

  // Whether [base, base + size), size not 0, shares a byte with a range: with `next`, the
  // first range at or above base, or with the one before it.
  [[nodiscard]] bool overlaps_around(map::const_iterator next, std::uintptr_t base, std::size_t size) const noexcept
  {
    if (next != ranges_.end() && next->first - base < size) return true;
    return next != ranges_.begin() && std::prev(next)->first + std::prev(next)->second > base;
  }

  // The range that holds [base, base + size) whole, or end().
  [[nodiscard]] map::const_iterator holder(std::uintptr_t base, std::size_t size) const
  {
    auto it = ranges_.upper_bound(base);
    if (size == 0 || base + size < base || it == ranges_.begin()) return ranges_.end();
    --it;
    return base + size <= it->first + it->second ? it : ranges_.end();
  }

  // Takes [at, at + size), inside *it, out of it.
  void carve(map::const_iterator it, std::uintptr_t at, std::size_t size)
  {
    auto const [base, n] = *it;
    auto place = ranges_.erase(it);  // what is left goes where the range was: no lookup
    if (at + size < base + n) place = ranges_.emplace_hint(place, at + size, base + n - (at + size));
    if (at > base) ranges_.emplace_hint(place, base, at - base);
  }

  map ranges_;
};

}  // namespace fraglab::detail
