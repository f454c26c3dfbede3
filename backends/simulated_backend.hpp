// An address space without memory: hands out address ranges from a virtual space of any
// size, so that an 80-140 GiB GPU trace replays on a small host, and every comparison
// study runs without touching real memory.
//
// Deterministic: the same sequence of calls yields the same addresses on every machine.
// Acquisitions are rounded up to `granularity` and aligned to it (cudaMalloc hands out
// 2 MiB-aligned ranges; the default 256 bytes matches TF's rounding). A released range is
// reused first-fit by address, as a driver reuses virtual addresses; otherwise the space
// grows upward from `base`. With `merging`, the space grows contiguously (holes are not
// reused), consecutive acquisitions are adjacent, and the engine merges them into one region
// (TF's SupportsCoalescing).
//
// Address reservations (cuMemAddressReserve): reserve() hands out a range from a separate
// part of the space without counting any bytes; acquire_at() then maps bytes at a chosen
// address inside a reservation (cuMemCreate + cuMemMap), counted against the capacity, and
// release() of such bytes unmaps them; reservations are never given back. map_alias() maps
// acquired pages a second time inside a reservation.
#pragma once

#include <fraglab/backends/backend_stats.hpp>
#include <fraglab/backends/detail/address_range_set.hpp>
#include <fraglab/engine/backend_traits.hpp>
#include <fraglab/engine/concepts.hpp>
#include <fraglab/engine/detail/bits.hpp>

#include <cstdint>
#include <iterator>
#include <map>
#include <span>
#include <vector>
#include <limits>
#include <stdexcept>
#include <string_view>

namespace fraglab {

struct simulated_backend_params {
  std::size_t capacity = std::numeric_limits<std::size_t>::max();
  std::size_t granularity = 256;
  bool merging = false;
  std::uintptr_t base = std::uintptr_t{1} << 40;
};

class simulated_backend {
 public:
  // Its optional members (engine/backend_traits.hpp).
  static constexpr backend_hook hooks = backend_hook::next_address | backend_hook::reserve | backend_hook::acquire_at |
                                        backend_hook::map_alias | backend_hook::unmap_alias | backend_hook::follow;

  using params = simulated_backend_params;

  explicit simulated_backend(params p = {}) : p_(p), top_(p.base)
  {
    if (!detail::is_pow2(p_.granularity)) throw std::invalid_argument("granularity must be a power of two");
    if (p_.base % p_.granularity != 0) throw std::invalid_argument("base must be a multiple of the granularity");
  }

  // Addresses to follow: the next acquisitions take these, in order, while each asks for the
  // recorded size and the range is free and apart from the simulated space (a recording
  // replayed under the allocator that made it, whose ties by address then fall as they
  // did). At the first that differs the rest are dropped, and addresses come from the
  // simulated space again.
  void follow(std::span<planned_segment const> plan)
  {
    plan_.assign(plan.begin(), plan.end());
    next_planned_ = 0;
  }

  acquisition acquire(std::size_t n, std::size_t alignment)
  {
    std::size_t const align = alignment > p_.granularity ? alignment : p_.granularity;
    auto const size = stats_.admit(n, p_.granularity, p_.capacity);
    if (!size) return {};
    if (next_planned_ < plan_.size()) {
      planned_segment const next = plan_[next_planned_++];
      if (next.size == *size && next.address % align == 0 && planned_range_free(next.address, *size)) {
        planned_held_.emplace(next.address, *size);
        stats_.on_acquire(*size);
        return {next.address, *size};
      }
      plan_.clear();
    }
    // A merging space grows contiguously, like a heap: holes below the top are not reused,
    // so that consecutive acquisitions stay adjacent.
    if (!p_.merging) {
      if (auto const start = holes_.take_first_fit(*size, align)) {
        stats_.on_acquire(*size);
        return {*start, *size};
      }
    }
    // Acquisitions stay below the reservations: a size near 2^64 (a fuzzed or corrupt
    // request) would otherwise wrap the address space and make a region end below its base.
    auto const start = detail::aligned_range_below(top_, align, *size, reservations_base());
    if (!start) {
      ++stats_.refusals;
      return {};
    }
    if (*start > top_) give_back_range(top_, *start - top_);
    top_ = *start + *size;
    stats_.on_acquire(*size);
    return {*start, *size};
  }

  // A range of `n` bytes (rounded to the granularity) aligned to `alignment`, with no memory.
  acquisition reserve(std::size_t n, std::size_t alignment)
  {
    auto const size = detail::align_up_checked(n, p_.granularity);
    if (n == 0 || !size) return {};
    std::size_t const align = alignment > p_.granularity ? alignment : p_.granularity;
    auto const start = detail::aligned_range_below(reserved_top_, align, *size, std::numeric_limits<std::uintptr_t>::max());
    if (!start) return {};  // would wrap the address space
    reserved_top_ = *start + *size;
    return {*start, *size};
  }

  // Maps `n` bytes at `address`, inside a reservation; the caller keeps mappings disjoint.
  acquisition acquire_at(std::uintptr_t address, std::size_t n)
  {
    if (n == 0 || address < reservations_base() || n % p_.granularity != 0 || n > p_.capacity - stats_.acquired_bytes) {
      ++stats_.refusals;
      return {};
    }
    stats_.on_acquire(n);
    return {address, n};
  }

  // Maps acquired pages again at `at`, inside a reservation (GMLake's stitched blocks): no
  // bytes are counted, as none are created. False where `at` is not reserved.
  bool map_alias(std::uintptr_t at, std::span<std::uintptr_t const> pages) const noexcept
  {
    std::size_t const n = pages.size() * p_.granularity;
    return !pages.empty() && at >= reservations_base() && at < reserved_top_ && n <= reserved_top_ - at;
  }
  void unmap_alias(std::uintptr_t, std::size_t) const noexcept {}

  // False, and nothing changes, for a range this space did not hand out or has back: one
  // past the top, or overlapping a hole (released twice).
  bool release(std::uintptr_t base, std::size_t n)
  {
    if (auto const held = planned_held_.find(base); held != planned_held_.end()) {
      if (held->second != n) return false;
      planned_held_.erase(held);
      stats_.on_release(n);
      return true;
    }
    if (base >= reservations_base() && base < reserved_top_ && n <= reserved_top_ - base) {
      stats_.on_release(n);  // unmapped; the reservation stays
      return true;
    }
    if (base < p_.base || base >= top_ || n > top_ - base || !give_back_range(base, n)) return false;
    stats_.on_release(n);
    return true;
  }

  [[nodiscard]] std::size_t capacity() const noexcept { return p_.capacity; }
  [[nodiscard]] std::size_t granularity() const noexcept { return p_.granularity; }
  [[nodiscard]] std::size_t acquired_bytes() const noexcept { return stats_.acquired_bytes; }
  [[nodiscard]] bool supports_merging() const noexcept { return p_.merging; }
  [[nodiscard]] std::uintptr_t next_address() const noexcept { return top_; }
  [[nodiscard]] std::string_view name() const noexcept { return "simulated"; }
  [[nodiscard]] backend_stats const& stats() const noexcept { return stats_; }

 private:
  // Returns a range to the holes, merging with neighbours, and lowers the top when the
  // range reaches it, so that a release-then-acquire sequence reuses addresses.
  bool give_back_range(std::uintptr_t base, std::size_t n)
  {
    auto const hole = holes_.insert(base, n);
    if (!hole) return false;
    if (hole->end() == top_) {
      holes_.erase(hole->base, hole->size);
      top_ = hole->base;
    }
    return true;
  }

  // Free of every planned range held, of the simulated space's acquisitions and of its
  // reservations, and not wrapping.
  [[nodiscard]] bool planned_range_free(std::uintptr_t a, std::size_t n) const
  {
    if (a + n < a || a == 0) return false;
    if (a < reserved_top_ && a + n > p_.base) return false;
    auto const after = planned_held_.lower_bound(a);
    if (after != planned_held_.end() && after->first < a + n) return false;
    return after == planned_held_.begin() || std::prev(after)->first + std::prev(after)->second <= a;
  }

  // Reservations live far above anything acquired directly.
  [[nodiscard]] std::uintptr_t reservations_base() const noexcept { return p_.base + (std::uintptr_t{1} << 46); }

  params p_;
  std::uintptr_t top_;
  std::uintptr_t reserved_top_ = reservations_base();
  detail::address_range_set holes_;  // free ranges below the top
  backend_stats stats_;
  std::vector<planned_segment> plan_;
  std::size_t next_planned_ = 0;
  std::map<std::uintptr_t, std::size_t> planned_held_;  // base -> size
};

static_assert(backend<simulated_backend>);

}  // namespace fraglab
