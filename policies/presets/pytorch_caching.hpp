// PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp and
// c10/core/AllocatorConfig.cpp, PyTorch 2.5-2.9; the rules below did not change across
// those versions), expressed as fraglab parts.
//
// Rules reproduced:
// - size: < 512 B -> 512; else a multiple of 512, or with roundup_power2_divisions N for the
//   size's power-of-two interval (intervals from 1 MiB to 64 GiB; smaller sizes use the
//   first) and size > 512 * N, up to the next of N equal steps between powers of two (a
//   power of two stays). PyTorch's docs say 1200 B with N = 4 rounds to 1280; the code's
//   guard (size > 512 * N) makes it 1536, and the code is what we follow.
// - pools: rounded <= 1 MiB -> the small pool, else the large pool; one pair per stream.
// - segment size on a miss: <= 1 MiB -> 2 MiB; < 10 MiB -> 20 MiB; else rounded up to 2 MiB.
// - search: smallest free block of the pool by (size, address); with max_split_size, a
//   request below it never takes a block at or above it, and a request at or above it only
//   takes a block smaller than request + max_non_split_rounding (20 MiB).
// - split: small pool if the remainder is >= 512 B; large pool if the request is below
//   max_split_size and the remainder is > 1 MiB. The allocation keeps the low part.
// - free: immediate merge with free neighbours in the same segment; segments never merge.
// - miss (pytorch_reclaim.hpp): garbage collection of old cached segments when
//   garbage_collection_threshold is set; a new segment (failing early beyond the memory
//   fraction); release of cached oversize segments and a retry; empty_cache and a last retry.
// - stats under PyTorch's names: pytorch_memory_stats.hpp.
//
// Left out: CUDA graph private pools; events and record_stream (a free is taken at
// free_completed, when the block is reusable); the large pool's search counter (ages for
// garbage collection) is shared across streams as in PyTorch, but segments are per stream
// here as there.
//
// pytorch_expandable (expandable_segments:True) is the same policy with these settings:
// - each (stream, pool) reserves 1.125 x the device's memory (--capacity, else 80 GiB) and
//   maps pages of 2 MiB (small pool) or 20 MiB (large pool) into it;
// - on a miss, the first unmapped range in address order that, with the free block before it
//   and the free or unmapped space after it, holds the request is mapped, as many pages as
//   the request lacks, merging with the free neighbours: no segment padding
//   (find_expandable_block, try_allocate_expandable_block, map_block);
// - any remainder of 512 B or more splits, in both pools;
// - best fit judges a block by the size it could expand to (get_free_block's expandable_size);
// - empty_cache unmaps the whole pages inside every free block (release_blocks, unmap_block),
//   which leaves holes that later misses fill first.
// Left out for it: oversize release and garbage collection are not applied (PyTorch skips
// expandable blocks when releasing oversize ones; garbage_collection_threshold with
// expandable segments is refused rather than guessed).
#pragma once

#include <fraglab/engine/allocator.hpp>
#include <fraglab/policies/fits.hpp>
#include <fraglab/policies/indexes/bins_index.hpp>
#include <fraglab/policies/policy.hpp>
#include <fraglab/policies/presets/pytorch_reclaim.hpp>

#include <array>
#include <bit>
#include <cstddef>
#include <limits>
#include <optional>
#include <stdexcept>

namespace fraglab::presets::pytorch {

inline constexpr std::size_t min_block = 512;
inline constexpr std::size_t small_size = std::size_t{1} << 20;     // kSmallSize
inline constexpr std::size_t small_buffer = std::size_t{2} << 20;   // kSmallBuffer
inline constexpr std::size_t large_buffer = std::size_t{20} << 20;  // kLargeBuffer
inline constexpr std::size_t min_large_alloc = std::size_t{10} << 20;
inline constexpr std::size_t round_large = std::size_t{2} << 20;
inline constexpr std::size_t unlimited = std::numeric_limits<std::size_t>::max();
inline constexpr std::size_t power2_intervals = 16;  // 1 MiB .. 64 GiB
// The pools' size bins: from 512 B, four per doubling up to 2^(9+40) bytes, far above any
// device's memory.
using pool_bins = basic_bins_index<2, 41 * 4>;
inline constexpr unsigned bin_count = 41 * pool_bins::bins_per_doubling;

struct size_rule {
  // roundup_power2_divisions per interval: [0] for sizes below 2 MiB, [k] for [2^(20+k), 2^(21+k)).
  std::array<std::size_t, power2_intervals> divisions{};

  void validate() const
  {
    for (std::size_t d : divisions)
      if (d > 1 && !std::has_single_bit(d)) throw std::invalid_argument("roundup_power2_divisions must be powers of two");
  }
  [[nodiscard]] std::size_t granule() const noexcept { return min_block; }

  [[nodiscard]] std::size_t divisions_for(std::size_t size) const noexcept
  {
    std::size_t const log_size = static_cast<std::size_t>(std::bit_width(size) - 1);
    std::size_t index = log_size > 20 ? log_size - 20 : 0;
    return divisions[index < power2_intervals ? index : power2_intervals - 1];
  }

  [[nodiscard]] std::optional<std::size_t> round(std::size_t size) const noexcept
  {
    if (size < min_block) return min_block;
    std::size_t const n = divisions_for(size);
    if (n > 1 && size > min_block * n) {
      if (std::has_single_bit(size)) return size;
      std::size_t const floor = std::bit_floor(size);
      std::size_t const step = floor / n;
      if (step == 0) return floor << 1;
      std::size_t const down = size & ~(step - 1);
      return down == size ? size : down + step;
    }
    return detail::round_up_checked(size, min_block);
  }
};

struct pool_rule {
  static constexpr part_hook hooks = part_hook::reservation;
  bool expandable_segments = false;
  std::size_t device_memory = std::size_t{80} << 30;

  [[nodiscard]] static pool_id key(stream_id stream, bool small) noexcept { return {stream, !small}; }
  [[nodiscard]] pool_id pool_key(stream_id stream, std::size_t rounded) const noexcept
  {
    return key(stream, rounded <= small_size);
  }
  // Expandable segments: each (stream, pool) reserves 1.125 x the device's memory and maps
  // 2 MiB (small pool) or 20 MiB (large pool) pages at a time.
  [[nodiscard]] std::optional<reservation_spec> reservation(pool_id key) const noexcept
  {
    if (!expandable_segments) return std::nullopt;
    std::size_t const page = key.large ? large_buffer : small_buffer;
    std::size_t const wanted = device_memory + device_memory / 8;
    return reservation_spec{(wanted + page - 1) / page * page, page};
  }
};

struct split_rule {
  std::size_t max_split_size = unlimited;
  bool expandable_segments = false;  // then any remainder of 512 B or more splits, in both pools

  [[nodiscard]] bool should_split(std::size_t block, std::size_t size) const noexcept
  {
    if (block <= size) return false;
    std::size_t const remaining = block - size;
    if (size <= small_size || expandable_segments) return remaining >= min_block;
    return size < max_split_size && remaining > small_size;
  }
};

struct block_pool_params {
  std::size_t max_split_size = unlimited;
  std::size_t max_non_split_rounding = large_buffer;
  bool expandable_segments = false;
};

// One pool's free blocks ordered by (size, address), with the oversize rules of
// get_free_block(). With expandable segments, best fit judges a block by the size it could
// expand to (its size, plus the unmapped space after it where it ends a mapped range): the
// best fit is passed over for the next block in order while that one could expand to less.
//
// PyTorch keeps the pool in one std::set. Here the same order is split into size bins,
// four per doubling, each a tree, so that a search and an insertion walk a tree of one
// size class. Every chunk of a higher bin is larger, so the lower bound, the successor and
// therefore every decision are the set's; the walks are shorter, and each level walked is
// a branch the processor may mispredict (docs/performance.md, "pytorch_caching's pools").
struct block_pool_index {
  static constexpr const char* name = "pytorch_pool";
  using params = block_pool_params;
  template <class Chunk>
  using hook = pool_bins::hook<Chunk>;

  template <class Chunk>
  class index : public pool_bins::index<Chunk> {
    using base = pool_bins::index<Chunk>;

   public:
    explicit index(params const& p = {}) : base(bins_index_params{min_block, bin_count}), p_(p) {}

    Chunk* find_best(std::size_t n)
    {
      Chunk* c = base::find_best(n);
      if (c == nullptr) return nullptr;
      if (p_.expandable_segments) [[unlikely]] c = least_expandable(c);
      if (n < p_.max_split_size && c->size >= p_.max_split_size) return nullptr;
      if (n >= p_.max_split_size && c->size >= n + p_.max_non_split_rounding) return nullptr;
      return c;
    }

   private:
    // What a free chunk could grow to: with the unmapped pages after it, where it ends its
    // mapped range.
    static std::size_t expandable_size(Chunk const& c) noexcept
    {
      return c.size + (c.next == nullptr ? c.region()->unmapped_after : 0);
    }

    // Out of line, so that pytorch_caching's search keeps its shape (docs/performance.md,
    // "Hot and cold paths").
    FRAGLAB_COLD Chunk* least_expandable(Chunk* c)
    {
      while (Chunk* larger = base::successor(*c)) {
        if (expandable_size(*larger) >= expandable_size(*c)) break;
        c = larger;
      }
      return c;
    }

    params p_;
  };
};

using policy =
    fraglab::policy<block_pool_index, best_fit, split_rule, fixed_coalescing<coalesce_mode::immediate>, growth_rule, size_rule,
                    pool_rule, reclaim_rule>;

// The settings a user can give PyTorch (PYTORCH_CUDA_ALLOC_CONF and the memory fraction).
struct settings {
  std::size_t max_split_size = unlimited;
  std::size_t max_non_split_rounding = large_buffer;
  std::array<std::size_t, power2_intervals> roundup_power2_divisions{};
  std::size_t memory_limit = unlimited;  // per-process memory fraction x device memory
  double garbage_collection_threshold = 0.0;  // 0: off; needs memory_limit
  bool expandable_segments = false;           // the pytorch_expandable preset
  std::size_t device_memory = std::size_t{80} << 30;  // sizes the expandable reservations
};

template <class Backend>
typename allocator<policy, Backend>::config make_config(settings const& s = {})
{
  typename allocator<policy, Backend>::config c;
  c.index = {s.max_split_size, s.max_non_split_rounding, s.expandable_segments};
  c.split.max_split_size = s.max_split_size;
  c.split.expandable_segments = s.expandable_segments;
  c.pools.expandable_segments = s.expandable_segments;
  c.pools.device_memory = s.device_memory;
  c.size.divisions = s.roundup_power2_divisions;
  c.growth.kind = growth_kind::segments;
  c.growth.small_request = small_size;
  c.growth.small_segment = small_buffer;
  c.growth.medium_request = min_large_alloc;
  c.growth.medium_segment = large_buffer;
  c.growth.large_round = round_large;
  c.growth.memory_limit = s.memory_limit;
  c.growth.release_free_regions = true;
  c.reclaim.max_split_size = s.max_split_size;
  c.reclaim.garbage_collection_threshold = s.garbage_collection_threshold;
  c.reclaim.allowed_memory = s.memory_limit;
  if (s.expandable_segments) {
    c.growth.kind = growth_kind::exact;  // map (request - free tail) rounded to the pool's page
    c.reclaim.max_split_size = unlimited;  // PyTorch never releases expandable blocks one by one
    c.reclaim.garbage_collection_threshold = 0.0;
  }
  return c;
}

}  // namespace fraglab::presets::pytorch
