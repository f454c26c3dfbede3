// One contiguous space growing at its top, like sbrk(2): Johnstone & Wilson's model of a
// program's heap ("The Memory Fragmentation Problem: Solved?", ISMM 1998). Consecutive
// acquisitions are adjacent, so the engine merges them into one region and a free chunk at
// the top is extended rather than abandoned. Memory goes back only from the top. The
// footprint is the high-water mark of the top (stats().peak_acquired_bytes).
//
// An alignment above the granularity moves the break up to it first, as a program that
// aligns its sbrk'd arenas would: the skipped gap belongs to no acquisition and is counted
// in padding_bytes().
//
// acquire_mapping() serves memory apart from the heap, as mmap(2) beside sbrk: from its own
// address range (at base + 2^40, released ranges reused first-fit), never adjacent to the
// heap, so the break and the heap's top region are untouched. Capacity covers both.
//
// Simulated: no memory is touched, addresses start at `base`.
#pragma once

#include <fraglab/backends/backend_stats.hpp>
#include <fraglab/backends/simulated_backend.hpp>
#include <fraglab/engine/backend_traits.hpp>
#include <fraglab/engine/concepts.hpp>
#include <fraglab/engine/detail/bits.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace fraglab {

struct heap_backend_params {
  std::size_t capacity = std::numeric_limits<std::size_t>::max();
  std::size_t granularity = 4096;  // sbrk moves the break by pages
  std::uintptr_t base = std::uintptr_t{1} << 32;
};

class heap_backend {
 public:
  // Its optional members (engine/backend_traits.hpp).
  static constexpr backend_hook hooks = backend_hook::next_address | backend_hook::acquire_mapping;

  using params = heap_backend_params;

  explicit heap_backend(params p = {})
      : p_(p), top_(p.base), mappings_(simulated_backend_params{.granularity = p.granularity, .base = p.base + mapping_offset})
  {
    if (!detail::is_pow2(p_.granularity)) throw std::invalid_argument("granularity must be a power of two");
    if (p_.base % p_.granularity != 0) throw std::invalid_argument("base must be a multiple of the granularity");
  }

  acquisition acquire(std::size_t n, std::size_t alignment)
  {
    auto const size = detail::align_up_checked(n, p_.granularity);
    // The break stays below the mappings' range, so that no region wraps the address space
    // or overlaps a mapping, whatever the capacity.
    std::optional<std::uintptr_t> start;
    if (n != 0 && size)
      start = detail::aligned_range_below(top_, alignment > p_.granularity ? alignment : p_.granularity, *size,
                                          p_.base + mapping_offset);
    if (!start || *size > p_.capacity - stats_.acquired_bytes ||
        *start - top_ > p_.capacity - stats_.acquired_bytes - *size) {
      ++stats_.refusals;
      return {};
    }
    padding_ += *start - top_;
    top_ = *start + *size;
    stats_.on_acquire(*size);
    return {*start, *size};
  }

  acquisition acquire_mapping(std::size_t n)
  {
    auto const size = stats_.admit(n, p_.granularity, p_.capacity);
    if (!size) return {};
    acquisition const a = mappings_.acquire(*size, p_.granularity);
    if (a) stats_.on_acquire(a.size);
    else ++stats_.refusals;
    return a;
  }

  bool release(std::uintptr_t base, std::size_t n)
  {
    if (base >= p_.base + mapping_offset) {
      if (!mappings_.release(base, n)) return false;
      stats_.on_release(n);
      return true;
    }
    if (base + n != top_) return false;
    top_ = base;
    stats_.on_release(n);
    return true;
  }

  [[nodiscard]] std::size_t capacity() const noexcept { return p_.capacity; }
  [[nodiscard]] std::size_t granularity() const noexcept { return p_.granularity; }
  [[nodiscard]] std::size_t acquired_bytes() const noexcept { return stats_.acquired_bytes; }
  [[nodiscard]] bool supports_merging() const noexcept { return true; }
  [[nodiscard]] std::string_view name() const noexcept { return "heap"; }
  [[nodiscard]] backend_stats const& stats() const noexcept { return stats_; }
  [[nodiscard]] std::uintptr_t top() const noexcept { return top_; }
  [[nodiscard]] std::uintptr_t next_address() const noexcept { return top_; }
  [[nodiscard]] std::size_t padding_bytes() const noexcept { return padding_; }

 private:
  static constexpr std::uintptr_t mapping_offset = std::uintptr_t{1} << 40;

  params p_;
  std::uintptr_t top_;
  simulated_backend mappings_;
  std::size_t padding_ = 0;
  backend_stats stats_;
};

static_assert(backend<heap_backend>);

}  // namespace fraglab
