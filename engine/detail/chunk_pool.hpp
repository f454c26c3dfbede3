// Recycles chunk and region records so that the allocator's steady state performs no
// heap allocation: a split takes a record from the free list, a merge gives one back.
//
// Boost.Pool's object_pool would serve, but its destroy() keeps the free list ordered
// and costs O(n) per call; the unordered boost::pool<> underneath is O(1), so records are
// carved from it and constructed in place.
//
// Blocks start on a cache line, and Boost.Pool carves records from a block's start at a
// stride of the record's size, so a 64-byte record occupies exactly one line: touching a
// chunk costs one miss, not two.
//
// Taking a record pops the pool's free list, which reads the popped record's link: a
// record freed long ago is a cache miss there (40% of tlsf's allocation time on the perl
// trace, by perf). So each take prefetches the record the next take will pop, while the
// caller still has work to do before it splits again.
#pragma once

#include "engine/detail/hot_cold.hpp"

#include <boost/pool/pool.hpp>

#include <cstddef>
#include <new>
#include <utility>

namespace fraglab::detail {

inline constexpr std::size_t cache_line = 64;

// Boost.Pool's UserAllocator, with blocks aligned to a cache line.
struct cache_line_aligned_blocks {
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  static char* malloc(size_type bytes) { return static_cast<char*>(::operator new(bytes, std::align_val_t{cache_line}, std::nothrow)); }
  static void free(char* block) { ::operator delete(block, std::align_val_t{cache_line}); }
};

// boost::pool, showing which record it will hand out next (its free list's head, a
// protected member of its base).
class prefetching_pool : public boost::pool<cache_line_aligned_blocks> {
 public:
  using boost::pool<cache_line_aligned_blocks>::pool;

  void* malloc()
  {
    if (this->first == nullptr) [[unlikely]] return refill();
    void* const p = boost::pool<cache_line_aligned_blocks>::malloc();  // pops the free list
    if (this->first != nullptr) __builtin_prefetch(this->first, 1);
    return p;
  }

 private:
  // A new block of records: out of line, so that the hot paths do not carry Boost.Pool's
  // block management, nor the throw when there is no memory for it.
  FRAGLAB_COLD void* refill()
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
    void* p = pool_.malloc();  // never null: it throws std::bad_alloc instead
    ++live_;
    return ::new (p) T(std::forward<Args>(args)...);
  }

  void destroy(T* t) noexcept
  {
    t->~T();
    pool_.free(t);
    --live_;
  }

  [[nodiscard]] std::size_t live() const noexcept { return live_; }

 private:
  prefetching_pool pool_;
  std::size_t live_ = 0;
};

}  // namespace fraglab::detail
