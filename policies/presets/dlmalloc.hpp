// dlmalloc: Doug Lea's malloc, version 2.8.6 (malloc.c, August 2012), 64-bit defaults, one
// heap grown by sbrk (MORECORE_CONTIGUOUS), expressed as fraglab parts.
//
// Rules reproduced:
// - sizes: pad_request: the request plus an 8-byte boundary tag, rounded up to 16, at least
//   32 (MIN_CHUNK_SIZE); the tag counts as allocated bytes, so replays include dlmalloc's
//   implementation overhead.
// - search order, small bins, tree bins, designated victim, top: dlmalloc_bins.hpp.
// - split: a remainder of at least 32 bytes becomes a free chunk, otherwise the whole chunk is
//   handed out; the top splits for any remainder.
// - free: immediate coalescing with both neighbours; a chunk that merges with the top or the
//   dv becomes it.
// - sys_alloc: a request of at least mmap_threshold (256 KiB) that nothing free can serve
//   gets a mapping of its own, of the request plus 63 bytes rounded to the page, given back
//   when freed; otherwise the heap grows by (request - top + 96) rounded to the page
//   (SYS_ALLOC_PADDING), or the request + 96 for the first growth. The top keeps
//   TOP_FOOT_SIZE (80 bytes) for the segment record: it serves a request only while
//   request < top - 80.
// - trimming: when a free leaves the top above trim_threshold (2 MiB), whole pages beyond
//   the top foot go back to the system, keeping less than one page (sys_trim with pad 0).
//
// Left out: memalign's own placement (the engine pads and carves instead); malloc(0) (a
// null result here, a 32-byte chunk in dlmalloc); footers (FOOTERS=1: pass header=16);
// non-contiguous sbrk and multiple segments; the release of unused segments every 4095 frees
// (only matters for non-contiguous segments); disabling trimming after a failed trim.
#pragma once

#include <fraglab/engine/allocator.hpp>
#include <fraglab/engine/detail/bits.hpp>
#include <fraglab/policies/policy.hpp>
#include <fraglab/policies/presets/dlmalloc_bins.hpp>
#include <fraglab/policies/rule_parameter.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>

namespace fraglab::presets::dlmalloc {

inline constexpr std::size_t top_foot = 80;          // TOP_FOOT_SIZE on 64-bit
inline constexpr std::size_t sys_alloc_padding = 96;  // TOP_FOOT_SIZE + MALLOC_ALIGNMENT
inline constexpr std::size_t mmap_overhead = 63;      // 6 * SIZE_T_SIZE + CHUNK_ALIGN_MASK
inline constexpr std::size_t page = 4096;

struct fit {
  static constexpr std::string_view name = "dlmalloc";
  template <class Ix>
  static auto* select(Ix& ix, std::size_t nb) requires requires { ix.find_dlmalloc(nb); }
  {
    return ix.find_dlmalloc(nb);
  }
  // What growth must leave in the top: the request, sys_alloc's padding and, once a top
  // exists, the foot it already keeps.
  template <class Ix>
  static std::size_t findable_size(Ix const& ix, std::size_t nb)
  {
    return nb + sys_alloc_padding + (ix.top() != nullptr ? top_foot : 0);
  }
};

struct pool_rule {
  static constexpr part_hook hooks = part_hook::mapping_size;
  std::size_t mmap_threshold = std::size_t{256} << 10;  // DEFAULT_MMAP_THRESHOLD

  [[nodiscard]] std::uint64_t pool_key(stream_id, std::size_t) const noexcept { return 0; }

  // sys_alloc's mmap path: only once the heap exists (topsize != 0). A size that wraps past
  // 2^64 gets no mapping, as mmap_alloc's own check (mmsize > nb) refuses it; the heap path
  // then refuses it too.
  [[nodiscard]] std::size_t mapping_size(std::size_t nb, bool heap_started) const noexcept
  {
    if (nb < mmap_threshold || !heap_started) return 0;
    std::optional<std::size_t> const padded = detail::add_checked(nb, mmap_overhead);
    return padded ? detail::align_up_checked(*padded, page).value_or(0) : 0;
  }
};

struct reclaim_rule {
  static constexpr part_hook hooks = part_hook::after_free;
  std::size_t trim_threshold = std::size_t{2} << 20;  // DEFAULT_TRIM_THRESHOLD

  // Called after every free with the chunk that free left (merged); the top is the free
  // chunk that ends the heap.
  template <class View>
  void after_free(View& view, std::size_t chunk_size, bool ends_region, std::uintptr_t region_base)
  {
    if (!ends_region || chunk_size < top_foot) return;
    std::size_t const top = chunk_size - top_foot;  // dlmalloc's topsize
    if (top <= trim_threshold || top <= top_foot) return;
    std::size_t const extra = ((top - top_foot + page - 1) / page - 1) * page;
    if (extra != 0) (void)view.trim_region_tail(region_base, extra);
  }
};

using policy =
    fraglab::policy<bins_index, fit, threshold_split, fixed_coalescing<coalesce_mode::immediate>, growth_rule, quantum_size_rule,
                    pool_rule, reclaim_rule>;

struct settings {
  std::size_t mmap_threshold = std::size_t{256} << 10;
  std::size_t trim_threshold = std::size_t{2} << 20;
  std::size_t header = 8;  // CHUNK_OVERHEAD; 16 with FOOTERS
  std::size_t memory_limit = growth_rule::unlimited;

  // dlmalloc's own keys (header and memory_limit are the size and growth rules').
  static constexpr std::string_view part = "dlmalloc";
  static constexpr auto parameters()
  {
    return std::tuple{
        parameter("mmap_threshold", &settings::mmap_threshold,
                  "requests at least this large that nothing free serves get a mapping of their own"),
        parameter("trim_threshold", &settings::trim_threshold, "a free leaving more top than this gives whole pages back to the system"),
    };
  }
};

template <class Backend>
typename allocator<policy, Backend>::config make_config(settings const& s = {})
{
  typename allocator<policy, Backend>::config c;
  c.size = {.quantum = 16, .min_size = min_chunk, .header = s.header};
  c.split.min_remainder = min_chunk;
  c.growth.kind = growth_kind::exact;
  c.growth.memory_limit = s.memory_limit;
  c.pools.mmap_threshold = s.mmap_threshold;
  c.reclaim.trim_threshold = s.trim_threshold;
  return c;
}

}  // namespace fraglab::presets::dlmalloc
