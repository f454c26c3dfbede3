// Makes any composition thread-safe with one mutex around every call, as TF's BFC and
// PyTorch's caching allocator guard theirs. The engine itself stays single-threaded and
// deterministic; this wrapper is the only place that knows about threads.
#pragma once

#include <fraglab/engine/results.hpp>
#include <fraglab/engine/stats.hpp>

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>

namespace fraglab {

template <class Allocator>
class locked_allocator {
 public:
  template <class... Args>
  explicit locked_allocator(Args&&... args) : inner_(std::forward<Args>(args)...)
  {
  }

  allocation allocate(std::size_t size, std::size_t alignment = 1, std::uint64_t stream = 0)
  {
    std::lock_guard lock(mutex_);
    return inner_.allocate(size, alignment, stream);
  }

  free_status deallocate(std::uintptr_t address)
  {
    std::lock_guard lock(mutex_);
    return inner_.deallocate(address);
  }
  free_status deallocate(block_ref block)
  {
    std::lock_guard lock(mutex_);
    return inner_.deallocate(block);
  }
  free_status deallocate(void* p) { return deallocate(reinterpret_cast<std::uintptr_t>(p)); }

  std::size_t release_free_regions()
  {
    std::lock_guard lock(mutex_);
    return inner_.release_free_regions();
  }

  [[nodiscard]] allocator_stats stats() const
  {
    std::lock_guard lock(mutex_);
    return inner_.stats();
  }

  [[nodiscard]] std::string check_invariants() const
  {
    std::lock_guard lock(mutex_);
    return inner_.check_invariants();
  }

  // Runs f on the wrapped allocator under the lock.
  template <class F>
  decltype(auto) with_lock(F&& f)
  {
    std::lock_guard lock(mutex_);
    return std::forward<F>(f)(inner_);
  }

 private:
  mutable std::mutex mutex_;
  Allocator inner_;
};

}  // namespace fraglab
