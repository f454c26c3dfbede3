#pragma once
// What the engine and its rules say to each other, beyond the required expressions of
// engine/concepts.hpp: the coalescing modes the engine implements, and what a growth rule is
// told on a miss and answers, what a reclaim rule sees of a free region, and what a fit is
// sure to find. Here, in the engine, so that the engine needs nothing of
// policies/, which builds its rules on these.

#include <fraglab/engine/results.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace fraglab {

enum class coalesce_mode : std::uint8_t { immediate, deferred, never, buddy };

inline constexpr std::array<std::string_view, 4> coalesce_mode_names{"immediate", "deferred", "never", "buddy"};

constexpr std::string_view to_string(coalesce_mode m) noexcept { return coalesce_mode_names[static_cast<std::size_t>(m)]; }

// What the engine knows when it must grow.
struct growth_context {
  std::size_t need;         // bytes the new region must supply (rounded, padded for alignment)
  std::size_t acquired;     // bytes held from the backend now
  std::size_t tail_free;    // free bytes at the end of the region new memory would merge with
  std::size_t granularity;  // every acquisition a multiple of it: the backend's, or the granule if larger
};

struct growth_decision {
  std::size_t bytes = 0;                    // 0: do not grow
  alloc_status refusal = alloc_status::ok;  // why not, when bytes == 0
};

// A region without live blocks, as a reclaim rule sees it; PoolKey is the pool rule's
// pool_key type.
template <class PoolKey>
struct free_region {
  std::uintptr_t base;
  std::size_t size;
  PoolKey pool_key;
  std::uint64_t since;  // the rule's clock() when its last live block was freed
  bool whole;           // one free chunk covers it (PyTorch: the block is not split)
};

// The smallest chunk size `select(ix, n)` is sure to find: n for every exact-fit rule, the
// next class boundary for good fit. Growth supplies at least this much.
template <class Fit, class Ix>
std::size_t findable_size(Ix const& ix, std::size_t n)
{
  if constexpr (requires { Fit::findable_size(ix, n); }) return Fit::findable_size(ix, n);
  else return n;
}

template <class Index, class Fit>
concept serves = requires(Index& ix, std::size_t n) { Fit::select(ix, n); };

}  // namespace fraglab
