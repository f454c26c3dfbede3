// Recycles chunk and region records so that the allocator's steady state performs no
// heap allocation: a split takes a record from the free list, a merge gives one back.
//
// Boost.Pool's object_pool would serve, but its destroy() keeps the free list ordered
// and costs O(n) per call; the unordered boost::pool<> underneath is O(1), so records are
// carved from it and constructed in place.
#pragma once

#include <boost/pool/pool.hpp>

#include <cstddef>
#include <new>
#include <utility>

namespace fraglab::detail {

template <class T>
class record_pool {
 public:
  explicit record_pool(std::size_t records_per_block = 256) : pool_(sizeof(T), records_per_block) {}
  record_pool(record_pool const&) = delete;
  record_pool& operator=(record_pool const&) = delete;

  template <class... Args>
  T* create(Args&&... args)
  {
    void* p = pool_.malloc();
    if (p == nullptr) throw std::bad_alloc{};
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
  boost::pool<> pool_;
  std::size_t live_ = 0;
};

}  // namespace fraglab::detail
