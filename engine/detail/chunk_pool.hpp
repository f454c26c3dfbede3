// Recycles chunk and region records so that the allocator's steady state performs no
// heap allocation: a split takes a free record, a merge gives one back.
//
// Boost.Pool's object_pool would serve, but its destroy() keeps the free list ordered
// and costs O(n) per call; the unordered boost::pool<> underneath is O(1), so records are
// carved from it and constructed in place.
//
// Blocks start on a cache line, and Boost.Pool carves records from a block's start at a
// stride of the record's size, so a 64-byte record occupies exactly one line: touching a
// chunk costs one miss, not two.
//
// Records handed back wait in an array, the latest on top, not in a list threaded through
// the records as Boost.Pool keeps them. Popping such a list reads the popped record's link,
// and a record freed long ago is a cache miss there, which the next take waits for: 40% of
// tlsf's allocation time on the perl trace by perf, before each take prefetched the next
// head, and still 7-10% of tf_bfc's and tlsf's time after. The array's top is
// in cache, a take writes its record without reading it first, and the record four takes
// ahead is prefetched for writing (docs/performance.md, "Chunk records").
#pragma once

#include <fraglab/engine/detail/hot_cold.hpp>

#include <boost/pool/pool.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

namespace fraglab::detail {

inline constexpr std::size_t cache_line = 64;

// Boost.Pool's UserAllocator, with blocks aligned to a cache line.
struct cache_line_aligned_blocks {
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  static char* malloc(size_type bytes) { return static_cast<char*>(::operator new(bytes, std::align_val_t{cache_line}, std::nothrow)); }
  static void free(char* block) { ::operator delete(block, std::align_val_t{cache_line}); }
};

// boost::pool's blocks, without its free list's hot-path pop: records are only carved
// here, never given back to it (record_pool keeps its own stack of free records).
class carving_pool : public boost::pool<cache_line_aligned_blocks> {
 public:
  using boost::pool<cache_line_aligned_blocks>::pool;

  // A record never handed out before; out of line, so that the hot paths do not carry
  // Boost.Pool's block management, nor the throw when there is no memory for it.
  FRAGLAB_COLD void* carve()
  {
    void* const p = boost::pool<cache_line_aligned_blocks>::malloc();
    if (p == nullptr) throw std::bad_alloc{};
    return p;
  }
};

template <class T>
class record_pool {
 public:
  explicit record_pool(std::size_t records_per_block = 256) : pool_(sizeof(T), records_per_block) {}
  record_pool(record_pool const&) = delete;
  record_pool& operator=(record_pool const&) = delete;

  template <class... Args>
  T* create(Args&&... args)
  {
    void* p;
    if (top_ == bottom()) [[unlikely]] {
      p = carve();
    } else {
      p = *--top_;
      // A record a later take will fill, fetched for writing while this one is. Below the
      // bottom lie `prefetch_distance` null slots, which a prefetch ignores, so that this
      // needs no test.
      __builtin_prefetch(top_[-static_cast<std::ptrdiff_t>(prefetch_distance)], 1);
    }
    ++created_;
    return ::new (p) T(std::forward<Args>(args)...);
  }

  void destroy(T* t) noexcept
  {
    t->~T();
    *top_++ = t;  // there is room: carve() keeps a place for every record
    ++destroyed_;
  }

  [[nodiscard]] std::size_t live() const noexcept { return created_ - destroyed_; }
  // Records made and recycled since the pool began: each costs what a live count's update
  // costs, and the engine reads its splits and merges off them (allocator::stats()).
  [[nodiscard]] std::uint64_t created() const noexcept { return created_; }
  [[nodiscard]] std::uint64_t destroyed() const noexcept { return destroyed_; }

 private:
  // Four takes: as good as two on perl, and no worse elsewhere.
  static constexpr std::size_t prefetch_distance = 4;

  [[nodiscard]] void** bottom() noexcept { return slots_.data() + prefetch_distance; }

  // Runs only when no record waits, so every record carved is live.
  FRAGLAB_COLD void* carve()
  {
    // Room for every record carved, made before the record exists, so that destroy()
    // cannot fail.
    if (slots_.size() < prefetch_distance + live() + 1) {
      slots_.resize(prefetch_distance + std::max<std::size_t>(64, 2 * (live() + 1)));
      top_ = bottom();
    }
    return pool_.carve();
  }

  carving_pool pool_;
  // The records handed back, the latest on top, above `prefetch_distance` null slots.
  std::vector<void*> slots_ = std::vector<void*>(prefetch_distance, nullptr);
  void** top_ = bottom();
  std::uint64_t created_ = 0;
  std::uint64_t destroyed_ = 0;
};

}  // namespace fraglab::detail
