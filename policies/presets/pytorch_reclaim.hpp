// PyTorch's caching allocator on a miss (c10/cuda/CUDACachingAllocator.cpp, PyTorch 2.5-2.9:
// DeviceCachingAllocator::malloc, garbage_collect_cached_blocks,
// release_available_cached_blocks), as a fraglab reclaim rule.
//
// Order of a miss: garbage collection (when garbage_collection_threshold is set and a memory
// fraction limits the device), a new segment, then the release of cached oversize blocks and
// a second try, then empty_cache and a last try (the growth rule's release_free_regions).
//
// - Garbage collection: when reserved > threshold x allowed, free "old" cached large-pool
//   segments until reserved drops by the excess: repeatedly release every unsplit free
//   segment whose age is at least the mean age of those that remain. A block's age is the
//   number of large-pool searches (allocations whose rounded size > 1 MiB, any stream) since
//   it was last put back in the pool.
// - Oversize release (only with max_split_size): in the request's pool, release the smallest
//   free segment of at least max(request, max_split_size); if there is none, release oversize
//   (>= max_split_size) free segments from the largest down until their total reaches that
//   size, and retry only if it did.
//
// Difference, by necessity: PyTorch would hand a split oversize block to cudaFree (which cannot
// happen with its own segment sizes); here only whole free segments are ever released.
#pragma once

#include <fraglab/engine/part_traits.hpp>
#include <fraglab/policies/reclaim_rules.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

namespace fraglab::presets::pytorch {

// A pool of PyTorch's allocator: each stream has a small and a large one. The stream is
// kept whole (64 bits): a key folding it with the pool's bit would make streams 2^63 apart
// share segments.
struct pool_id {
  std::uint64_t stream;
  bool large;
  friend bool operator==(pool_id, pool_id) = default;
};

struct reclaim_rule {
  static constexpr part_hook hooks =
      part_hook::on_search | part_hook::clock | part_hook::before_growth | part_hook::after_failed_growth;
  static constexpr std::size_t unlimited = std::numeric_limits<std::size_t>::max();

  std::size_t max_split_size = unlimited;
  double garbage_collection_threshold = 0.0;  // 0: off
  std::size_t allowed_memory = unlimited;     // the memory fraction x device memory; GC needs it

  std::uint64_t large_searches = 0;  // PyTorch's large pool get_free_blocks_call_count

  using free_region = fraglab::free_region<pool_id>;

  void on_search(pool_id key) noexcept { large_searches += key.large ? 1 : 0; }
  [[nodiscard]] std::uint64_t clock() const noexcept { return large_searches; }

  [[nodiscard]] bool collects_garbage() const noexcept
  {
    return garbage_collection_threshold > 0.0 && allowed_memory != unlimited;
  }

  template <class View>
  void before_growth(View& view, pool_id /*key*/, std::size_t /*need*/)
  {
    if (!collects_garbage()) return;
    auto const threshold =
        static_cast<std::size_t>(garbage_collection_threshold * static_cast<double>(allowed_memory));
    std::size_t const reserved = view.reserved_bytes();
    if (reserved <= threshold) return;
    std::size_t const target = reserved - threshold;

    struct candidate {
      std::uintptr_t base;
      std::size_t size;
      std::uint64_t age;
    };
    std::vector<candidate> freeable;
    view.for_each_free_region([&](free_region const& r) {
      if (r.pool_key.large && r.whole) freeable.push_back({r.base, r.size, large_searches - r.since});
    });
    std::uint64_t total_age = 0;
    for (candidate const& c : freeable) total_age += c.age;

    std::size_t reclaimed = 0;
    bool freed = true;
    while (reclaimed < target && freed && !freeable.empty()) {
      double const age_threshold = static_cast<double>(total_age) / static_cast<double>(freeable.size());
      freed = false;
      std::erase_if(freeable, [&](candidate const& c) {
        if (static_cast<double>(c.age) < age_threshold) return false;
        total_age -= c.age;
        if (!view.release(c.base)) return true;
        freed = true;
        reclaimed += c.size;
        return true;
      });
    }
  }

  template <class View>
  bool after_failed_growth(View& view, pool_id key, std::size_t need)
  {
    if (max_split_size == unlimited) return false;
    std::size_t const wanted = std::max(need, max_split_size);
    std::vector<free_region> mine;
    view.for_each_free_region([&](free_region const& r) {
      if (r.pool_key == key && r.whole) mine.push_back(r);
    });
    auto by_size_address = [](free_region const& a, free_region const& b) {
      return std::tie(a.size, a.base) < std::tie(b.size, b.base);
    };
    std::sort(mine.begin(), mine.end(), by_size_address);
    auto const fit = std::find_if(mine.begin(), mine.end(), [&](free_region const& r) { return r.size >= wanted; });
    if (fit != mine.end()) {
      (void)view.release(fit->base);
      return true;
    }
    std::size_t released = 0;
    for (auto it = mine.rbegin(); it != mine.rend() && released < wanted && it->size >= max_split_size; ++it)
      if (view.release(it->base)) released += it->size;
    return released >= wanted;
  }
};

}  // namespace fraglab::presets::pytorch
