// The free ranges ("holes") of an address space that a backend lays regions out in, kept
// maximal and handed out first fit by address: the machinery simulated_backend and
// host_region_arena share. Each keeps its own rule about where holes come from and what
// becomes of them: the simulated space lowers its top when a hole reaches it, and the
// arena never merges holes of two separately mapped ranges.
//
// Lowest address first, as a driver reuses virtual addresses, and because a region's place
// is part of a policy's decisions (first fit and next fit choose among regions by address):
// the same calls give the same addresses on every machine. A std::map keyed by base and a
// scan from the lowest hole: regions come and go seldom beside the blocks carved from them
// (perl's replay under first_fit acquires 6,757 regions and releases none), and merging
// keeps the holes few.
#pragma once

#include "engine/detail/bits.hpp"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>

namespace fraglab::detail {

class address_holes {
 public:
  struct range {
    std::uintptr_t base;
    std::size_t size;
    [[nodiscard]] std::uintptr_t end() const noexcept { return base + size; }
    friend bool operator==(range const&, range const&) = default;
  };

  // Whether two touching holes, one ending where the other starts at `upper`, may be one.
  struct always_merge {
    constexpr bool operator()(std::uintptr_t, std::uintptr_t) const noexcept { return true; }
  };

  // The address of `size` bytes (not 0) at a multiple of `alignment` (a power of two) in the
  // lowest-addressed hole that holds them, carved out of it; what the hole has left on
  // either side stays a hole. nullopt when no hole holds them.
  std::optional<std::uintptr_t> take_first_fit(std::size_t size, std::size_t alignment)
  {
    for (auto it = holes_.begin(); it != holes_.end(); ++it) {
      auto const [base, n] = *it;
      std::uintptr_t const at = align_up_address(base, alignment);
      if (at < base || at - base > n || size > n - (at - base)) continue;  // at < base: wrapped
      holes_.erase(it);
      if (at > base) holes_.emplace(base, at - base);
      if (size < n - (at - base)) holes_.emplace(at + size, n - (at - base) - size);
      return at;
    }
    return std::nullopt;
  }

  // Makes [base, base + size) a hole, one with each hole that touches it where
  // `may_merge(lower_base, upper_base)` allows, and returns the hole it is now part of.
  // nullopt, and nothing changes, when the range is empty, wraps, or overlaps a hole: a
  // range given back twice.
  template <class MayMerge = always_merge>
  std::optional<range> give_back(std::uintptr_t base, std::size_t size, MayMerge may_merge = {})
  {
    if (size == 0 || base + size < base) return std::nullopt;
    auto next = holes_.lower_bound(base);
    auto const prev = next == holes_.begin() ? holes_.end() : std::prev(next);
    if ((next != holes_.end() && next->first < base + size) || (prev != holes_.end() && prev->first + prev->second > base))
      return std::nullopt;
    if (next != holes_.end() && next->first == base + size && may_merge(base, next->first)) {
      size += next->second;
      holes_.erase(next);
    }
    if (prev != holes_.end() && prev->first + prev->second == base && may_merge(prev->first, base)) {
      prev->second += size;
      return range{prev->first, prev->second};
    }
    holes_.emplace(base, size);
    return range{base, size};
  }

  // Takes back the whole hole starting at `base` (one give_back returned).
  void remove(std::uintptr_t base) { holes_.erase(base); }

  [[nodiscard]] std::size_t count() const noexcept { return holes_.size(); }
  template <class Visit>
  void for_each(Visit visit) const
  {
    for (auto const& [base, n] : holes_) visit(range{base, n});
  }

 private:
  std::map<std::uintptr_t, std::size_t> holes_;  // base -> size
};

}  // namespace fraglab::detail
